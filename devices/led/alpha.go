package led

import (
	"cmp"
	"fmt"
	"strings"
)

// Alpha protocol control characters (Alpha Sign Communications Protocol,
// document 97088061, "Transmission packet format").
const (
	alphaNUL = 0x00
	alphaSOH = 0x01
	alphaSTX = 0x02
	alphaETX = 0x03
	alphaEOT = 0x04
	alphaESC = 0x1B
	alphaDLE = 0x10 // "call STRING file" inside a TEXT file
)

// AlphaOpts configures the Alpha sign driver.
type AlphaOpts struct {
	// TypeCode is the sign type code, one character (default "Z": all
	// signs).
	TypeCode string `mapstructure:"type_code"`
	// TextLabel is the TEXT file shown (default 'A'); StringLabel is the
	// STRING file holding the number (default '1'). The configuration
	// keeps the defaults.
	TextLabel   byte `mapstructure:"-"`
	StringLabel byte `mapstructure:"-"`
	// StringSize is the STRING file's size in bytes (default 32, max 125).
	StringSize int `mapstructure:"string_size"`
	// Template is the text shown (see Render); empty means DefaultText.
	// Lines are joined with a space.
	Template string `mapstructure:"template"`
}

// withDefaults fills the options left zero.
func (o AlphaOpts) withDefaults() AlphaOpts {
	o.TypeCode = cmp.Or(o.TypeCode, "Z")
	o.TextLabel = cmp.Or(o.TextLabel, 'A')
	o.StringLabel = cmp.Or(o.StringLabel, '1')
	o.StringSize = cmp.Or(o.StringSize, 32)
	return o
}

// Check returns nil or an error holding the [OptErrors] of the options
// NewAlpha refuses.
func (o AlphaOpts) Check() error {
	var es OptErrors
	if len(o.TypeCode) > 1 {
		es.add("type_code", "must be one character, got %q", o.TypeCode)
	}
	es.inRange("string_size", o.StringSize, 1, 125, "32")
	o = o.withDefaults()
	for _, l := range []struct {
		key string
		v   byte
	}{{"text_label", o.TextLabel}, {"string_label", o.StringLabel}} {
		if l.v < 0x20 || l.v > 0x7E || l.v == '0' || l.v == '?' {
			es.add(l.key, "want a printable character other than '0' and '?', got %q", l.v)
		}
	}
	if o.TextLabel == o.StringLabel {
		es.add("string_label", "text and string labels are both %q", o.TextLabel)
	}
	return es.err("alpha")
}

// Alpha drives signs that speak the Alpha Sign Communications Protocol
// (Adaptive Micro Systems; also Betabrite and many compatible signs).
//
// A number update is a "Write STRING file" command ('G'), which changes the
// text in place without blanking the sign, unlike rewriting a TEXT file.
// Each packet is
//
//	NUL×5 | SOH | type code | address (2 hex digits, "00" = broadcast) |
//	STX | command … | ETX | checksum (4 hex digits) | EOT
//
// where the checksum is the 16-bit sum of the bytes from STX through ETX.
// [Alpha.Init] allocates the files (Write SPECIAL FUNCTION 'E', '$' memory
// configuration) and writes a TEXT file that displays the STRING file
// (DLE + label) in HOLD mode; the [Port] sends it after every (re)connection.
type Alpha struct {
	opts AlphaOpts
}

var (
	_ Driver      = (*Alpha)(nil)
	_ Initializer = (*Alpha)(nil)
)

// NewAlpha returns an Alpha driver.
func NewAlpha(opts AlphaOpts) (*Alpha, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	return &Alpha{opts: opts.withDefaults()}, nil
}

// Encode returns one Write STRING file packet for the sign at addr (0–255,
// 0 = broadcast to every sign of the type code).
func (a *Alpha) Encode(addr int, c Content) ([][]byte, error) {
	txt, err := encodeText("ascii", trimSpace(text(a.opts.Template, c, " ")))
	if err != nil {
		return nil, err
	}
	if len(txt) > a.opts.StringSize {
		return nil, fmt.Errorf("led: alpha text %q longer than %d: %w", txt, a.opts.StringSize, ErrTooLong)
	}
	for _, b := range txt {
		if b < 0x20 {
			return nil, fmt.Errorf("led: alpha text %q has control characters: %w", txt, ErrCharset)
		}
	}
	f, err := a.packet(addr, append([]byte{'G', a.opts.StringLabel}, txt...))
	if err != nil {
		return nil, err
	}
	return [][]byte{f}, nil
}

// Init returns the packets that prepare the sign: memory configuration
// (TEXT file unlocked, always shown; STRING file locked) and the TEXT file
// that shows the STRING file in HOLD mode, filling the display.
func (a *Alpha) Init(addr int) ([][]byte, error) {
	textSize := 16
	mem := fmt.Sprintf("E$%cAU%04XFF00%cBL%04X0000", a.opts.TextLabel, textSize, a.opts.StringLabel, a.opts.StringSize)
	cfg, err := a.packet(addr, []byte(mem))
	if err != nil {
		return nil, err
	}
	txt, err := a.packet(addr, []byte{'A', a.opts.TextLabel, alphaESC, '0', 'b', alphaDLE, a.opts.StringLabel})
	if err != nil {
		return nil, err
	}
	return [][]byte{cfg, txt}, nil
}

func (a *Alpha) packet(addr int, cmd []byte) ([]byte, error) {
	if err := checkAddr("alpha", addr, 0, 255); err != nil {
		return nil, err
	}
	f := []byte{alphaNUL, alphaNUL, alphaNUL, alphaNUL, alphaNUL, alphaSOH, a.opts.TypeCode[0]}
	f = append(f, strings.ToUpper(fmt.Sprintf("%02x", addr))...)
	stx := len(f)
	f = append(f, alphaSTX)
	f = append(f, cmd...)
	f = append(f, alphaETX)
	var sum uint16
	for _, b := range f[stx:] {
		sum += uint16(b)
	}
	f = append(f, fmt.Sprintf("%04X", sum)...)
	return append(f, alphaEOT), nil
}
