package led

import (
	"strconv"
	"strings"
	"time"
)

// Content is what one board shows. Counter boards use Number and Counter;
// hall boards use Lines (most recent call first, e.g. "A023 -> 5"); Text is
// a free message ("Closed", "欢迎光临"). The zero Content blanks a board.
type Content struct {
	Number  string   // ticket number text, e.g. "A023"
	Counter string   // counter name or number, e.g. "5"
	Text    string   // free text
	Lines   []string // hall board lines, most recent first
}

// IsZero reports whether c blanks the board.
func (c Content) IsZero() bool {
	return c.Number == "" && c.Counter == "" && c.Text == "" && len(c.Lines) == 0
}

// Equal reports whether c and d show the same thing.
func (c Content) Equal(d Content) bool {
	if c.Number != d.Number || c.Counter != d.Counter || c.Text != d.Text || len(c.Lines) != len(d.Lines) {
		return false
	}
	for i := range c.Lines {
		if c.Lines[i] != d.Lines[i] {
			return false
		}
	}
	return true
}

// Driver turns content for the board at addr into the frames to send, in
// order. Encode is pure: same input, same bytes. It fails on an address the
// protocol cannot carry or on text the board cannot show.
type Driver interface {
	Encode(addr int, c Content) ([][]byte, error)
}

// ReplyParser is implemented by drivers whose boards answer each frame.
// ParseReply looks at the bytes received so far after sending req: it
// returns done=false, err=nil while more bytes are needed, done=true when buf
// holds a complete valid reply, and an error when the reply is wrong (bad
// checksum, exception, other address). It must not panic on any input.
//
// A driver whose boards answer only in some configurations also implements
// ExpectsReply() bool; when that returns false the Port does not wait.
type ReplyParser interface {
	ParseReply(req, buf []byte) (done bool, err error)
}

// replyParser returns d's ReplyParser if its boards answer.
func replyParser(d Driver) ReplyParser {
	rp, ok := d.(ReplyParser)
	if !ok {
		return nil
	}
	if e, ok := d.(interface{ ExpectsReply() bool }); ok && !e.ExpectsReply() {
		return nil
	}
	return rp
}

// Initializer is implemented by drivers that must configure a board before
// content can be shown (e.g. allocating an Alpha STRING file). Port sends
// these frames once per board after each (re)connection.
type Initializer interface {
	Init(addr int) ([][]byte, error)
}

// Gapper is implemented by drivers whose protocol defines the silent time
// between frames (Modbus RTU: 3.5 character times). baud is the line speed.
type Gapper interface {
	FrameGap(baud int) time.Duration
}

// DefaultText is what a board shows when its driver has no template: the
// number and counter ("A023 5") when there is a number, else the lines
// joined with sep, else the free text.
func DefaultText(c Content, sep string) string {
	switch {
	case c.Number != "":
		return strings.TrimSpace(c.Number + " " + c.Counter)
	case len(c.Lines) > 0:
		return strings.Join(c.Lines, sep)
	default:
		return c.Text
	}
}

// text renders c with tmpl, or with DefaultText when tmpl is empty.
func text(tmpl string, c Content, sep string) string {
	if tmpl == "" {
		return DefaultText(c, sep)
	}
	return Render(tmpl, c, sep)
}

// Render fills a body template with content. Placeholders: {number},
// {counter}, {text}, {lines} (all lines joined with sep), {line1}…{line9}.
// A width may follow a colon: {number:5} pads on the left with spaces to 5
// characters, {number:-5} pads on the right; longer values are cut to the
// width. Unknown placeholders are kept as written.
func Render(tmpl string, c Content, sep string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		b.WriteString(tmpl[:i])
		name := tmpl[i+1 : i+j]
		v, ok := field(name, c, sep)
		if !ok {
			b.WriteString(tmpl[i : i+j+1])
		} else {
			b.WriteString(v)
		}
		tmpl = tmpl[i+j+1:]
	}
}

func field(name string, c Content, sep string) (string, bool) {
	width := 0
	if k := strings.IndexByte(name, ':'); k >= 0 {
		w, err := strconv.Atoi(name[k+1:])
		if err != nil || w > 256 || w < -256 {
			return "", false
		}
		width = w
		name = name[:k]
	}
	var v string
	switch name {
	case "number":
		v = c.Number
	case "counter":
		v = c.Counter
	case "text":
		v = c.Text
	case "lines":
		v = strings.Join(c.Lines, sep)
	default:
		if len(name) == 5 && strings.HasPrefix(name, "line") && name[4] >= '1' && name[4] <= '9' {
			n := int(name[4] - '1')
			if n < len(c.Lines) {
				v = c.Lines[n]
			}
			break
		}
		return "", false
	}
	return pad(v, width), true
}

func pad(v string, width int) string {
	if width == 0 {
		return v
	}
	left := width > 0
	if !left {
		width = -width
	}
	r := []rune(v)
	if len(r) >= width {
		return string(r[:width])
	}
	fill := strings.Repeat(" ", width-len(r))
	if left {
		return fill + v
	}
	return v + fill
}
