package escpos

import "fmt"

// MaxCommandLen bounds the length of one command accepted by ScanCommands.
// The largest command this package writes is a full-width raster image
// (72 bytes × 2048 rows = 147,456 bytes).
const MaxCommandLen = 1 << 20

// ScanCommands is a bufio.SplitFunc that splits an ESC/POS byte stream into
// tokens: one command with its parameters and data, or one run of printable
// text (bytes from 0x20 up, which includes GB18030 double-byte text). A
// control byte that starts no known command is a token of its own, and an
// unknown ESC, FS or GS command is a token of two bytes. Declared lengths are
// checked against MaxCommandLen before anything is buffered; a longer command
// stops the scan with ErrCommandTooLong.
//
// Splitting on command boundaries is what tells a status query (DLE EOT n)
// from the same bytes inside raster image or QR data.
func ScanCommands(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if len(data) == 0 {
		return 0, nil, nil
	}
	n, err := commandLen(data)
	if err != nil {
		return 0, nil, err
	}
	if n < 0 || n > len(data) {
		if atEOF {
			// A truncated command: hand back what is left.
			return len(data), data, nil
		}
		return 0, nil, nil
	}
	return n, data[:n], nil
}

// commandLen returns the length of the token at the start of b, or -1 when
// more bytes are needed to know it.
func commandLen(b []byte) (int, error) {
	c := b[0]
	if c >= 0x20 {
		n := 1
		for n < len(b) && b[n] >= 0x20 {
			n++
		}
		return n, nil
	}
	if len(b) < 2 && (c == esc || c == gs || c == fs || c == dle) {
		return -1, nil
	}
	switch c {
	case esc:
		return escLen(b)
	case gs:
		return gsLen(b)
	case fs:
		return fsLen(b), nil
	case dle:
		switch b[1] {
		case eot, 0x05: // DLE EOT n, DLE ENQ n
			return 3, nil
		case 0x14: // DLE DC4 fn m t
			return 5, nil
		}
		return 2, nil
	}
	return 1, nil
}

func escLen(b []byte) (int, error) {
	switch b[1] {
	case '@', '2', '<', 'i', 'm', 'L', 'S', 0x0C:
		return 2, nil
	case 'a', 'E', 'd', 'J', '!', '-', 'G', 'M', 't', 'R', '3', '{', 'V',
		' ', '%', 'U', 'e', 'T', 'r', 'K', '=', '?':
		return 3, nil
	case '$', '\\':
		return 4, nil
	case 'c':
		return 4, nil // ESC c 3 n, ESC c 4 n, ESC c 5 n
	case 'p':
		return 5, nil // ESC p m t1 t2
	case 'W':
		return 10, nil // ESC W xL xH yL yH dxL dxH dyL dyH
	case 'D': // ESC D n1 ... nk NUL
		return untilNUL(b, 2, 34), nil
	case '*': // ESC * m nL nH d1...dk
		if len(b) < 5 {
			return -1, nil
		}
		k := int(b[3]) | int(b[4])<<8
		if b[2] >= 32 {
			k *= 3
		}
		return 5 + k, nil
	}
	return 2, nil
}

func fsLen(b []byte) int {
	switch b[1] {
	case '&', '.':
		return 2
	case '!', '-', 'W', 'C':
		return 3
	case 'S', '?':
		return 4 // FS S n1 n2, FS ? c1 c2
	}
	return 2
}

func gsLen(b []byte) (int, error) {
	switch b[1] {
	case '!', 'B', 'h', 'w', 'H', 'f', 'a', 'r', 'I', 'b', 'E', 'T':
		return 3, nil
	case 'L', 'W', 'P', '$', '\\':
		return 4, nil
	case 'V': // GS V m, or GS V m n for m = 65, 66, 97..104
		if len(b) < 3 {
			return -1, nil
		}
		switch b[2] {
		case 0, 1, 48, 49:
			return 3, nil
		}
		return 4, nil
	case '(': // GS ( X pL pH p1...pk: every GS ( function has this shape
		if len(b) < 5 {
			return -1, nil
		}
		k := int(b[3]) | int(b[4])<<8
		return 5 + k, nil
	case 'v': // GS v 0 m xL xH yL yH d1...dk
		if len(b) < 8 {
			return -1, nil
		}
		if b[2] != '0' {
			return 3, nil
		}
		x := int(b[4]) | int(b[5])<<8
		y := int(b[6]) | int(b[7])<<8
		k := x * y
		if k > MaxCommandLen {
			return 0, fmt.Errorf("escpos: scan: GS v 0 of %d×%d bytes: %w", x, y, ErrCommandTooLong)
		}
		return 8 + k, nil
	case '8': // GS 8 L p1 p2 p3 p4 m fn ...
		if len(b) < 7 {
			return -1, nil
		}
		if b[2] != 'L' {
			return 3, nil
		}
		k := int(b[3]) | int(b[4])<<8 | int(b[5])<<16 | int(b[6])<<24
		if k > MaxCommandLen {
			return 0, fmt.Errorf("escpos: scan: GS 8 L of %d bytes: %w", k, ErrCommandTooLong)
		}
		return 7 + k, nil
	case 'k': // GS k m d1...dk NUL (m 0..6) or GS k m n d1...dn (m 65..79)
		if len(b) < 3 {
			return -1, nil
		}
		if b[2] <= 6 {
			return untilNUL(b, 3, 258), nil
		}
		if len(b) < 4 {
			return -1, nil
		}
		return 4 + int(b[3]), nil
	}
	return 2, nil
}

// untilNUL returns the length of a command whose data, from b[from], ends
// at a NUL: through the NUL, or up to b[limit] when none comes by then
// (the command is taken as broken there), or -1 while it may still come.
func untilNUL(b []byte, from, limit int) int {
	for i := from; i < len(b); i++ {
		if b[i] == 0 {
			return i + 1
		}
		if i > limit {
			return i
		}
	}
	return -1
}
