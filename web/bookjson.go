package web

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// The appointments API's bodies without reflection. A booking, and in a
// rush its refusal (409 slot_full, 429), is the API's most frequent write:
// encoding/json decoded each request and encoded each answer through
// reflection, about a sixth of the handler's CPU (bench book's scale
// mode). Each function here gives the bytes, or the error, that
// encoding/json gives, which the tests check against it.

// readBookBody decodes the body of POST .../appointments into a bookBody
// as a json.Decoder with DisallowUnknownFields decodes the first maxBody
// bytes of it, its error included. The plain bodies clients send (the
// three fields in lower case, each at most once, a positive integer slot,
// a patient of printable ASCII without escapes, a literal hold) are read
// here; anything else goes to encoding/json over the same bytes. Like the
// decoder, it reads no further than the end of the object.
func readBookBody(body io.Reader) (bookBody, error) {
	lr := io.LimitReader(body, maxBody)
	bp := slotBufs.Get().(*[]byte)
	defer slotBufs.Put(bp) // nothing returned points into it
	buf := (*bp)[:0]
	var rerr error
	for rerr == nil {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		var n int
		n, rerr = lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		b, st := parseBookBody(buf)
		if st == bodyDone {
			return b, nil
		}
		if st == bodyOther {
			break
		}
	}
	rest := lr
	if rerr != nil {
		rest = errReader{rerr}
	}
	dec := json.NewDecoder(io.MultiReader(bytes.NewReader(buf), rest))
	dec.DisallowUnknownFields()
	var b bookBody
	err := dec.Decode(&b)
	return b, err
}

// errReader reads err, again and again (a reader that failed once stays
// failed, as the decoder saw it).
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// bodyState is how far parseBookBody got.
type bodyState int

const (
	bodyDone       bodyState = iota // the object is complete
	bodyIncomplete                  // so far so plain: more bytes may complete it
	bodyOther                       // not a plain body: encoding/json decides
)

// parseBookBody parses src as a plain booking body (see readBookBody).
func parseBookBody(src []byte) (bookBody, bodyState) {
	var b bookBody
	p := bodyParser{src: src}
	if !p.byte('{') {
		return b, p.st
	}
	if p.peek() == '}' {
		return b, bodyDone
	}
	var seen [3]bool
	for {
		key, ok := p.key()
		if !ok || !p.byte(':') {
			return b, p.st
		}
		var i int
		switch key {
		case "slot":
			i, b.Slot, ok = 0, p.positive(), p.st == bodyDone
		case "patient":
			i, b.Patient, ok = 1, p.plainString(), p.st == bodyDone
		case "hold":
			i, b.Hold, ok = 2, p.literal(), p.st == bodyDone
		default:
			return b, bodyOther
		}
		if !ok {
			return b, p.st
		}
		if seen[i] {
			return b, bodyOther // the last wins there: left to encoding/json
		}
		seen[i] = true
		switch p.next() {
		case ',':
		case '}':
			return b, bodyDone
		default:
			return b, p.st
		}
	}
}

// bodyParser reads a plain body; st is bodyDone while all is well, and
// says why it stopped otherwise.
type bodyParser struct {
	src []byte
	at  int
	st  bodyState
}

// peek is the next byte past white space, or 0 at the end (st
// bodyIncomplete) or at a NUL byte (st bodyOther).
func (p *bodyParser) peek() byte {
	for ; p.at < len(p.src); p.at++ {
		switch c := p.src[p.at]; c {
		case ' ', '\t', '\n', '\r':
		case 0:
			p.st = bodyOther
			return 0
		default:
			return c
		}
	}
	p.st = bodyIncomplete
	return 0
}

// next reads the comma or the closing brace past a value.
func (p *bodyParser) next() byte {
	c := p.peek()
	switch c {
	case ',', '}':
		p.at++
	case 0: // the end, or a NUL: st says which
	default:
		p.st = bodyOther
	}
	return c
}

// byte reads c (past white space).
func (p *bodyParser) byte(c byte) bool {
	got := p.peek()
	if got == c {
		p.at++
		return true
	}
	if got != 0 {
		p.st = bodyOther
	}
	return false
}

// key reads an object key of lower-case letters.
func (p *bodyParser) key() (string, bool) {
	if !p.byte('"') {
		return "", false
	}
	for i := p.at; i < len(p.src); i++ {
		switch c := p.src[i]; {
		case c == '"':
			k := string(p.src[p.at:i])
			p.at = i + 1
			return k, true
		case c < 'a' || c > 'z':
			p.st = bodyOther
			return "", false
		}
	}
	p.st = bodyIncomplete
	return "", false
}

// positive reads an integer from 1 to MaxInt64 without sign, fraction or
// exponent (the bytes past it are for next to judge).
func (p *bodyParser) positive() int64 {
	if c := p.peek(); c < '1' || c > '9' {
		if c != 0 {
			p.st = bodyOther
		}
		return 0
	}
	i := p.at
	for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
		i++
	}
	if i == len(p.src) {
		p.st = bodyIncomplete // more digits may follow
		return 0
	}
	n, err := strconv.ParseInt(string(p.src[p.at:i]), 10, 64)
	if err != nil {
		p.st = bodyOther
		return 0
	}
	p.at = i
	return n
}

// plainString reads a string of printable ASCII without escapes.
func (p *bodyParser) plainString() string {
	if !p.byte('"') {
		return ""
	}
	for i := p.at; i < len(p.src); i++ {
		switch c := p.src[i]; {
		case c == '"':
			s := string(p.src[p.at:i])
			p.at = i + 1
			return s
		case c < 0x20 || c > 0x7e || c == '\\':
			p.st = bodyOther
			return ""
		}
	}
	p.st = bodyIncomplete
	return ""
}

// literal reads true or false.
func (p *bodyParser) literal() bool {
	c := p.peek()
	for _, lit := range []string{"true", "false"} {
		if c != lit[0] {
			continue
		}
		rest := p.src[p.at:]
		if len(rest) < len(lit) {
			if string(rest) != lit[:len(rest)] {
				p.st = bodyOther
			} else {
				p.st = bodyIncomplete
			}
			return false
		}
		if string(rest[:len(lit)]) != lit {
			p.st = bodyOther
			return false
		}
		p.at += len(lit)
		return lit == "true"
	}
	if c != 0 {
		p.st = bodyOther
	}
	return false
}

// appendAppointment appends the JSON of a, as json.Encoder writes it
// (with its newline).
func appendAppointment(b []byte, a *Appointment) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, a.ID, 10)
	b = append(b, `,"site":`...)
	b = appendString(b, a.Site)
	b = append(b, `,"resource":`...)
	b = appendString(b, a.Resource)
	b = append(b, `,"slot":`...)
	b = strconv.AppendInt(b, a.Slot, 10)
	b = append(b, `,"start":`...)
	b = appendTime(b, a.Start)
	b = append(b, `,"end":`...)
	b = appendTime(b, a.End)
	b = append(b, `,"patient":`...)
	b = appendString(b, a.Patient)
	b = append(b, `,"code":`...)
	b = appendString(b, a.Code)
	b = append(b, `,"status":`...)
	b = appendString(b, a.Status)
	if a.HeldUntil != nil {
		b = append(b, `,"held_until":`...)
		b = appendTime(b, *a.HeldUntil)
	}
	if a.Ticket != "" {
		b = append(b, `,"ticket":`...)
		b = appendString(b, a.Ticket)
	}
	b = append(b, `,"created_at":`...)
	b = appendTime(b, a.CreatedAt)
	return append(b, "}\n"...)
}

// appendProblem appends the JSON of p, as json.Encoder writes it (with
// its newline).
func appendProblem(b []byte, p *Problem) []byte {
	b = append(b, `{"type":`...)
	b = appendString(b, p.Type)
	b = append(b, `,"title":`...)
	b = appendString(b, p.Title)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(p.Status), 10)
	if p.Detail != "" {
		b = append(b, `,"detail":`...)
		b = appendString(b, p.Detail)
	}
	b = append(b, `,"code":`...)
	b = appendString(b, p.Code)
	return append(b, "}\n"...)
}

// Header values the appointments API sets on every answer, shared (a
// handler that changes one sets a slice of its own, as Header.Set does).
var (
	hdrJSON    = []string{"application/json"}
	hdrProblem = []string{"application/problem+json"}
	hdrNoStore = []string{"no-store"}
	hdrNoCache = []string{"no-cache"}
)

// writeAppointment answers a as writeJSON would, byte for byte.
func writeAppointment(w http.ResponseWriter, status int, a *Appointment) {
	writeBody(w, status, hdrJSON, func(b []byte) []byte { return appendAppointment(b, a) })
}

// writeBody answers status with the body enc appends, of content type
// typ, not to be stored, in a buffer of slotBufs.
func writeBody(w http.ResponseWriter, status int, typ []string, enc func([]byte) []byte) {
	h := w.Header()
	h["Content-Type"] = typ
	h["Cache-Control"] = hdrNoStore
	w.WriteHeader(status)
	bp := slotBufs.Get().(*[]byte)
	b := enc((*bp)[:0])
	w.Write(b)
	if cap(b) <= 1<<20 {
		*bp = b
		slotBufs.Put(bp)
	}
}
