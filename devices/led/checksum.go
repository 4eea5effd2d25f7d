package led

// CRC16Modbus is CRC-16/MODBUS: polynomial 0x8005 reflected (0xA001), init
// 0xFFFF, no final xor (check value for "123456789": 0x4B37). On the wire
// the low byte goes first.
func CRC16Modbus(b []byte) uint16 { return crc16A001(0xFFFF, b) }

// CRC16ARC is CRC-16/ARC (also "CRC-16/IBM"): polynomial 0x8005 reflected
// (0xA001), init 0x0000, no final xor (check value for "123456789": 0xBB3D).
func CRC16ARC(b []byte) uint16 { return crc16A001(0, b) }

func crc16A001(crc uint16, b []byte) uint16 {
	for _, c := range b {
		crc ^= uint16(c)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0xA001
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

// Sum8 is the sum of the bytes modulo 256.
func Sum8(b []byte) byte {
	var s byte
	for _, c := range b {
		s += c
	}
	return s
}

// Xor8 is the exclusive or of the bytes.
func Xor8(b []byte) byte {
	var s byte
	for _, c := range b {
		s ^= c
	}
	return s
}
