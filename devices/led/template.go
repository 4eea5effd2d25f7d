package led

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"strconv"
)

// TemplateOpts describes a simple vendor frame:
//
//	Header | address | body | checksum | Trailer
//
// e.g. the common "01 addr … 07" counter boards: Header "01", AddrFormat
// "byte", Body "{number:4}{counter:2}", Trailer "07".
type TemplateOpts struct {
	// Header and Trailer are the frame's fixed bytes, written in hex as in
	// a config file ("01", "0xA5 0xA5", "01,02"; see [ParseHex]).
	Header  string `mapstructure:"header"`
	Trailer string `mapstructure:"trailer"`
	// AddrFormat is "byte" (one binary byte, 0–255), "ascii2" (two decimal
	// digits, 0–99), "ascii3" (three decimal digits, 0–999), "hex2" (two
	// uppercase hex digits, 0–255) or "none".
	AddrFormat string `mapstructure:"addr_format"`
	// Charset is "ascii" (default) or "gbk".
	Charset string `mapstructure:"charset"`
	// Checksum is "none" (default), "sum8", "xor8" or "crc16modbus" (two
	// bytes, low first).
	Checksum string `mapstructure:"checksum"`
	// ChecksumFrom and ChecksumTo select the checksummed bytes of the frame
	// before the checksum: frame[ChecksumFrom:ChecksumTo], where ChecksumTo
	// 0 means "up to the end of the body" and a negative ChecksumTo counts
	// back from there.
	ChecksumFrom int `mapstructure:"checksum_from"`
	ChecksumTo   int `mapstructure:"checksum_to"`
	// Body is the content template (see Render); empty means DefaultText.
	Body string `mapstructure:"template"`
	// LineSep joins hall board lines for {lines} (default " ").
	LineSep string `mapstructure:"line_sep"`
}

// Template is a [Driver] built from [TemplateOpts], for boards whose vendor
// frame is a fixed header, an address, the text, a checksum and a trailer.
type Template struct {
	opts            TemplateOpts
	header, trailer []byte
}

var _ Driver = (*Template)(nil)

// Check returns nil or an error holding the [OptErrors] of the options
// NewTemplate refuses.
func (o TemplateOpts) Check() error {
	var es OptErrors
	for _, h := range []struct{ key, v string }{{"header", o.Header}, {"trailer", o.Trailer}} {
		if _, err := ParseHex(h.v); err != nil {
			es.add(h.key, "want hex bytes such as \"01\" or \"0xA5 0xA5\", got %q", h.v)
		}
	}
	es.oneOf("addr_format", o.AddrFormat, "byte", "ascii2", "ascii3", "hex2", "none")
	es.oneOf("charset", o.Charset, "ascii", "gbk")
	es.oneOf("checksum", o.Checksum, "none", "sum8", "xor8", "crc16modbus")
	if o.ChecksumFrom < 0 {
		es.add("checksum_from", "must not be negative, got %d", o.ChecksumFrom)
	}
	return es.err("template")
}

// NewTemplate checks opts and returns a Template driver.
func NewTemplate(opts TemplateOpts) (*Template, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	opts.LineSep = cmp.Or(opts.LineSep, " ")
	// Check parsed both.
	header, _ := ParseHex(opts.Header)
	trailer, _ := ParseHex(opts.Trailer)
	return &Template{opts: opts, header: header, trailer: trailer}, nil
}

// templateAddrs are the address formats of TemplateOpts.AddrFormat but
// "none": the largest address each carries and how it is written (empty:
// one binary byte).
var templateAddrs = map[string]struct {
	max    int
	format string
}{"": {255, ""}, "byte": {255, ""}, "ascii2": {99, "%02d"}, "ascii3": {999, "%03d"}, "hex2": {255, "%02X"}}

// Encode returns one frame for the board at addr.
func (t *Template) Encode(addr int, c Content) ([][]byte, error) {
	f := append([]byte(nil), t.header...)
	if a, ok := templateAddrs[t.opts.AddrFormat]; ok {
		if err := checkAddr("template", addr, 0, a.max); err != nil {
			return nil, err
		}
		if a.format == "" {
			f = append(f, byte(addr))
		} else {
			f = fmt.Appendf(f, a.format, addr)
		}
	}
	body, err := encodeText(t.opts.Charset, text(t.opts.Body, c, t.opts.LineSep))
	if err != nil {
		return nil, err
	}
	f = append(f, body...)
	if t.opts.Checksum != "" && t.opts.Checksum != "none" {
		to := t.opts.ChecksumTo
		if to <= 0 {
			to += len(f)
		}
		if t.opts.ChecksumFrom > to || to > len(f) {
			return nil, fmt.Errorf("led: template checksum range [%d:%d] of a %d-byte frame: %w",
				t.opts.ChecksumFrom, to, len(f), ErrTooLong)
		}
		span := f[t.opts.ChecksumFrom:to]
		switch t.opts.Checksum {
		case "sum8":
			f = append(f, Sum8(span))
		case "xor8":
			f = append(f, Xor8(span))
		case "crc16modbus":
			f = binary.LittleEndian.AppendUint16(f, CRC16Modbus(span))
		}
	}
	f = append(f, t.trailer...)
	return [][]byte{f}, nil
}

// ParseHex parses config bytes written as hex ("01", "0x07", "A5 A5",
// "01,02"), for TemplateOpts.Header and Trailer.
func ParseHex(s string) ([]byte, error) {
	var out []byte
	tok := ""
	flush := func() error {
		if tok == "" {
			return nil
		}
		t := tok
		tok = ""
		if len(t) > 2 && (t[:2] == "0x" || t[:2] == "0X") {
			t = t[2:]
		}
		if len(t)%2 != 0 {
			t = "0" + t
		}
		for i := 0; i < len(t); i += 2 {
			v, err := strconv.ParseUint(t[i:i+2], 16, 8)
			if err != nil {
				return fmt.Errorf("led: parse hex %q: %w", s, err)
			}
			out = append(out, byte(v))
		}
		return nil
	}
	for _, r := range s {
		if r == ' ' || r == ',' || r == '\t' {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		tok += string(r)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}
