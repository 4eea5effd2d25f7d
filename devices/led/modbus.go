package led

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Modbus function codes used by the numeric display driver.
const (
	modbusWriteSingle   = 0x06 // Write Single Register, spec §6.6
	modbusWriteMultiple = 0x10 // Write Multiple Registers, spec §6.12
)

// ModbusOpts configures the register map of a Modbus RTU numeric display.
type ModbusOpts struct {
	// Start is the first holding register (protocol address, 0-based,
	// 0..65535); the register map must end by register 65535.
	Start int `mapstructure:"start"`
	// Chars is how many characters the display has (default 4). In "ascii"
	// mode each register holds two characters, high byte first, so the
	// driver writes (Chars+1)/2 registers; the text is left-aligned and
	// padded with spaces, so a shorter number clears the old one.
	Chars int `mapstructure:"chars"`
	// Encoding is "ascii" (default) or "binary". In "binary" mode the digits
	// of the number (prefix dropped: "A023" → 23) are written as one
	// unsigned register with function 06, for 7-segment boards that take a
	// value rather than text; a blank board gets 0xFFFF.
	Encoding string `mapstructure:"encoding"`
	// Template is the text written in "ascii" mode (see Render); default
	// "{number}", or the free text when there is no number.
	Template string `mapstructure:"template"`
}

// withDefaults fills the options left zero.
func (o ModbusOpts) withDefaults() ModbusOpts {
	o.Chars = cmp.Or(o.Chars, 4)
	o.Encoding = cmp.Or(o.Encoding, "ascii")
	return o
}

// registers is how many registers a write covers.
func (o ModbusOpts) registers() int {
	if o.Encoding == "binary" {
		return 1
	}
	return (o.Chars + 1) / 2
}

// Check returns nil or an error holding the [OptErrors] of the options
// NewModbus refuses.
func (o ModbusOpts) Check() error {
	o = o.withDefaults()
	var es OptErrors
	es.inRange("start", o.Start, 0, 0xFFFF, "")
	es.inRange("chars", o.Chars, 1, 246, "4")
	es.oneOf("encoding", o.Encoding, "ascii", "binary")
	if len(es) == 0 && o.Start+o.registers() > 0x10000 {
		es.add("start", "%d registers from %d run past the last register, 65535 (start at most %d)",
			o.registers(), o.Start, 0x10000-o.registers())
	}
	return es.err("modbus")
}

// Modbus drives Modbus RTU numeric displays (one per counter, addresses
// 1–247 on an RS-485 bus).
//
// Register map ("ascii"): registers Start … Start+(Chars+1)/2-1 each hold two
// ASCII characters of the shown text, high byte first; e.g. "A023" with
// Start 0 is registers 0x0000=0x4130 ("A0"), 0x0001=0x3233 ("23"). One
// register is written with function 06, more with function 16.
//
// Frames follow the MODBUS over Serial Line guide V1.02 §2.5.1: address,
// function, data, CRC-16/MODBUS low byte first. The board's normal reply is
// checked: function 06 echoes the request, function 16 echoes address,
// function, start and quantity; an exception reply (function | 0x80) is
// reported with its exception code.
type Modbus struct {
	opts ModbusOpts
}

var (
	_ Driver      = (*Modbus)(nil)
	_ ReplyParser = (*Modbus)(nil)
	_ Gapper      = (*Modbus)(nil)
)

// NewModbus returns a Modbus driver. It fails on a register map that does
// not fit in one request (at most 123 registers) or the 16-bit space.
func NewModbus(opts ModbusOpts) (*Modbus, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	return &Modbus{opts: opts.withDefaults()}, nil
}

// Encode returns one Modbus RTU request writing c to the board at addr.
func (m *Modbus) Encode(addr int, c Content) ([][]byte, error) {
	if err := checkAddr("modbus", addr, 1, 247); err != nil {
		return nil, err
	}
	if m.opts.Encoding == "binary" {
		v, err := binaryValue(c.Number)
		if err != nil {
			return nil, err
		}
		return [][]byte{modbusSingle(byte(addr), uint16(m.opts.Start), v)}, nil
	}
	t := m.opts.Template
	if t == "" {
		t = "{number}"
		if c.Number == "" {
			t = "{text}"
		}
	}
	text := Render(t, c, " ")
	b, err := encodeText("ascii", text)
	if err != nil {
		return nil, err
	}
	if len(b) > m.opts.Chars {
		return nil, fmt.Errorf("led: modbus text %q longer than %d chars: %w", text, m.opts.Chars, ErrTooLong)
	}
	regs := (m.opts.Chars + 1) / 2
	data := make([]byte, regs*2)
	for i := range data {
		data[i] = ' '
	}
	copy(data, b)
	if regs == 1 {
		return [][]byte{modbusSingle(byte(addr), uint16(m.opts.Start), binary.BigEndian.Uint16(data))}, nil
	}
	f := []byte{byte(addr), modbusWriteMultiple}
	f = binary.BigEndian.AppendUint16(f, uint16(m.opts.Start))
	f = binary.BigEndian.AppendUint16(f, uint16(regs))
	f = append(f, byte(len(data)))
	f = append(f, data...)
	return [][]byte{appendCRC16Modbus(f)}, nil
}

func binaryValue(number string) (uint16, error) {
	if number == "" {
		return 0xFFFF, nil
	}
	digits := strings.TrimLeftFunc(number, func(r rune) bool { return r < '0' || r > '9' })
	v, err := strconv.ParseUint(digits, 10, 16)
	if err != nil || v == 0xFFFF {
		return 0, fmt.Errorf("led: modbus binary value of %q: %w", number, ErrTooLong)
	}
	return uint16(v), nil
}

func modbusSingle(addr byte, reg, v uint16) []byte {
	f := []byte{addr, modbusWriteSingle}
	f = binary.BigEndian.AppendUint16(f, reg)
	f = binary.BigEndian.AppendUint16(f, v)
	return appendCRC16Modbus(f)
}

func appendCRC16Modbus(f []byte) []byte {
	return binary.LittleEndian.AppendUint16(f, CRC16Modbus(f))
}

// ModbusException is a Modbus exception reply (function code | 0x80).
type ModbusException struct {
	Addr     byte
	Function byte
	Code     byte // 1 illegal function, 2 illegal data address, 3 illegal data value, 4 device failure
}

// Error implements error.
func (e *ModbusException) Error() string {
	return fmt.Sprintf("led: modbus exception %d from address %d function %#02x", e.Code, e.Addr, e.Function)
}

// ParseReply checks the board's answer to req (see [ReplyParser]).
func (m *Modbus) ParseReply(req, buf []byte) (bool, error) {
	return ParseModbusReply(req, buf)
}

// ParseModbusReply checks a Modbus RTU reply to a write request (function 06
// or 16): a normal reply is 8 bytes echoing address, function and the first
// four data bytes of the request (all of the request for 06); an exception
// reply is 5 bytes. done=false means more bytes are needed.
func ParseModbusReply(req, buf []byte) (bool, error) {
	if len(req) < 8 {
		return false, fmt.Errorf("led: modbus request of %d bytes: %w", len(req), ErrReply)
	}
	if len(buf) < 2 {
		return false, nil
	}
	if buf[0] != req[0] {
		return false, fmt.Errorf("led: modbus reply from address %d to request for %d: %w", buf[0], req[0], ErrReply)
	}
	switch buf[1] {
	case req[1] | 0x80:
		if len(buf) < 5 {
			return false, nil
		}
		if binary.LittleEndian.Uint16(buf[3:5]) != CRC16Modbus(buf[:3]) {
			return false, fmt.Errorf("led: modbus exception reply: %w", ErrChecksum)
		}
		return true, &ModbusException{Addr: buf[0], Function: req[1], Code: buf[2]}
	case req[1]:
		if len(buf) < 8 {
			return false, nil
		}
		if binary.LittleEndian.Uint16(buf[6:8]) != CRC16Modbus(buf[:6]) {
			return false, fmt.Errorf("led: modbus reply: %w", ErrChecksum)
		}
		if string(buf[2:6]) != string(req[2:6]) {
			return false, fmt.Errorf("led: modbus reply % x does not echo request % x: %w", buf[:8], req[:6], ErrReply)
		}
		if len(buf) > 8 {
			return true, fmt.Errorf("led: modbus reply has %d trailing bytes: %w", len(buf)-8, ErrReply)
		}
		return true, nil
	default:
		return false, fmt.Errorf("led: modbus reply function %#02x to request %#02x: %w", buf[1], req[1], ErrReply)
	}
}

// FrameGap is the RTU inter-frame silence: 3.5 character times (11 bits per
// character), fixed at 1.75 ms above 19200 baud (guide §2.5.1.1).
func (m *Modbus) FrameGap(baud int) time.Duration {
	if baud <= 0 || baud > 19200 {
		return 1750 * time.Microsecond
	}
	return time.Duration(int64(time.Second) * 11 * 35 / 10 / int64(baud))
}
