package escpos

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/text/encoding/simplifiedchinese"
)

// Dump decodes ESC/POS bytes into a readable listing, one command or text run
// per line: "ESC @", "GS ! 0x11", TEXT lines (decoded from GB18030 while Kanji
// mode is on), "GS ( k 180" with the stored QR payload, and so on. Unknown,
// truncated or oversized commands are listed in hex; Dump never fails and
// never panics, whatever the input.
func Dump(b []byte) string {
	var sb strings.Builder
	d := dumper{out: &sb}
	for len(b) > 0 {
		adv, tok, err := ScanCommands(b, true)
		if err != nil {
			d.line("ERROR", err.Error())
			d.line("DATA", hexBytes(b))
			break
		}
		if adv <= 0 || adv > len(b) { // cannot happen with atEOF; stay safe
			d.line("DATA", hexBytes(b))
			break
		}
		d.token(tok)
		b = b[adv:]
	}
	return sb.String()
}

type dumper struct {
	out   *strings.Builder
	kanji bool
}

func (d *dumper) line(name, note string) {
	if note == "" {
		fmt.Fprintln(d.out, name)
		return
	}
	fmt.Fprintf(d.out, "%-14s %s\n", name, note)
}

// hexBytes formats at most 32 bytes in hex and counts the rest.
func hexBytes(b []byte) string {
	const max = 32
	var sb strings.Builder
	for i, c := range b {
		if i == max {
			fmt.Fprintf(&sb, " ... (%d bytes)", len(b))
			break
		}
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%02X", c)
	}
	return sb.String()
}

// quote shows at most 200 bytes of s, Go-quoted.
func quote(s string) string {
	if len(s) > 200 {
		return strconv.Quote(s[:200]) + fmt.Sprintf(" ... (%d bytes)", len(s))
	}
	return strconv.Quote(s)
}

var controlNames = map[byte]string{
	0x09: "HT", 0x0A: "LF", 0x0C: "FF", 0x0D: "CR", 0x18: "CAN",
}

func (d *dumper) token(t []byte) {
	c := t[0]
	if c >= 0x20 {
		if d.kanji {
			s, err := simplifiedchinese.GB18030.NewDecoder().Bytes(t)
			if err != nil {
				d.line("TEXT", "undecodable GB18030: "+hexBytes(t))
				return
			}
			d.line("TEXT", quote(string(s)))
			return
		}
		d.line("TEXT", quote(string(t)))
		return
	}
	arg := func(i int) (byte, bool) {
		if i < len(t) {
			return t[i], true
		}
		return 0, false
	}
	if name, ok := controlNames[c]; ok {
		d.line(name, "")
		return
	}
	op, ok := arg(1)
	if !ok || (c != esc && c != gs && c != fs && c != dle) {
		d.line(fmt.Sprintf("0x%02X", c), hexBytes(t[1:]))
		return
	}
	var name, note string
	p, hasP := arg(2)
	switch c {
	case esc:
		name, note = d.escNote(op, p, hasP, t)
	case gs:
		name, note = gsNote(op, p, hasP, t)
	case fs:
		name, note = d.fsNote(op, t)
	case dle:
		name = "DLE " + hexBytes(t[1:])
		if op == eot && hasP {
			name = fmt.Sprintf("DLE EOT %d", p)
			note = "status request"
		}
	}
	d.line(name, note)
}

func (d *dumper) escNote(op, p byte, hasP bool, t []byte) (string, string) {
	switch op {
	case '@':
		d.kanji = false
		return "ESC @", "initialize"
	case 'a':
		if hasP && len(t) == 3 {
			just := map[byte]string{0: "left", 1: "centre", 2: "right", 48: "left", 49: "centre", 50: "right"}[p]
			return fmt.Sprintf("ESC a %d", p), "justify " + just
		}
	case 'E':
		if hasP && len(t) == 3 {
			return fmt.Sprintf("ESC E %d", p), map[bool]string{true: "bold on", false: "bold off"}[p&1 == 1]
		}
	case 'd':
		if hasP && len(t) == 3 {
			return fmt.Sprintf("ESC d %d", p), "print and feed lines"
		}
	}
	if len(t) <= 3 {
		return "ESC " + printable(op) + tail(t[2:]), ""
	}
	return "ESC " + printable(op), hexBytes(t[2:])
}

func gsNote(op, p byte, hasP bool, t []byte) (string, string) {
	switch op {
	case '!':
		if hasP && len(t) == 3 {
			return fmt.Sprintf("GS ! 0x%02X", p), fmt.Sprintf("size %dx%d", p>>4&7+1, p&7+1)
		}
	case 'V':
		if hasP && len(t) == 4 && (p == 65 || p == 66) {
			kind := map[byte]string{65: "full", 66: "partial"}[p]
			return fmt.Sprintf("GS V %d %d", p, t[3]), "feed and " + kind + " cut"
		}
		if hasP && len(t) == 3 {
			return fmt.Sprintf("GS V %d", p), "cut"
		}
	case '(':
		if hasP && p == 'k' && len(t) >= 7 {
			return qrNote(t)
		}
	case 'v':
		if len(t) >= 8 && p == '0' {
			x := int(t[4]) | int(t[5])<<8
			y := int(t[6]) | int(t[7])<<8
			note := fmt.Sprintf("raster %dx%d dots, mode %d", x*8, y, t[3])
			if len(t)-8 != x*y {
				note += fmt.Sprintf(", truncated: %d of %d data bytes", len(t)-8, x*y)
			}
			return "GS v 0", note
		}
	}
	if len(t) <= 3 {
		return "GS " + printable(op) + tail(t[2:]), ""
	}
	return "GS " + printable(op), hexBytes(t[2:])
}

// qrNote names a GS ( k pL pH cn fn ... command; t has at least 7 bytes.
func qrNote(t []byte) (string, string) {
	cn, fn := t[5], t[6]
	name := fmt.Sprintf("GS ( k %d", 100+int(fn))
	if cn != 49 {
		return fmt.Sprintf("GS ( k cn=%d fn=%d", cn, fn), hexBytes(t[7:])
	}
	args := t[7:]
	switch {
	case fn == 65 && len(args) >= 1:
		return name, fmt.Sprintf("QR model %d", int(args[0])-48)
	case fn == 67 && len(args) >= 1:
		return name, fmt.Sprintf("QR module size %d", args[0])
	case fn == 69 && len(args) >= 1:
		level := map[byte]string{48: "L", 49: "M", 50: "Q", 51: "H"}[args[0]]
		if level == "" {
			level = strconv.Itoa(int(args[0]))
		}
		return name, "QR error level " + level
	case fn == 80 && len(args) >= 1:
		return name, fmt.Sprintf("QR store %d bytes %s", len(args)-1, quote(string(args[1:])))
	case fn == 81:
		return name, "QR print"
	}
	return name, "QR " + hexBytes(args)
}

func (d *dumper) fsNote(op byte, t []byte) (string, string) {
	switch op {
	case '&':
		d.kanji = true
		return "FS &", "kanji mode on (GB18030)"
	case '.':
		d.kanji = false
		return "FS .", "kanji mode off"
	}
	if len(t) <= 3 {
		return "FS " + printable(op) + tail(t[2:]), ""
	}
	return "FS " + printable(op), hexBytes(t[2:])
}

// printable names a command byte: the character when printable, else hex.
func printable(b byte) string {
	if b > 0x20 && b < 0x7F {
		return string(rune(b))
	}
	return fmt.Sprintf("0x%02X", b)
}

func tail(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		fmt.Fprintf(&sb, " %d", c)
	}
	return sb.String()
}
