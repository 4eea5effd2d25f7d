package web

import (
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/nowserving/nowserving/booking"
	"github.com/nowserving/nowserving/queue"
)

// slotBufs are the buffers slot lists are written into.
var slotBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// writeSlots answers out, whose slots are page, as writeJSON would, byte
// for byte, without reflection: a slot list is the appointments API's
// most read answer (DESIGN §5a, 50 reads to a booking), and encoding/json
// spent most of its CPU on it. A list in memory comes already encoded
// (booking.EncodedPage). The answer's ETag is a hash of its bytes; a
// request whose If-None-Match has it is answered 304 without a body.
//
// A client that accepts gzip gets the answer compressed, once it is large
// enough and its list is in memory (slotsEncoding), with an ETag of its
// own: the hash with "-gz" (RFC 9110 8.8.3: a strong validator names one
// representation). Every answer says Vary: Accept-Encoding.
func (s *Server) writeSlots(w http.ResponseWriter, r *http.Request, out *Slots, page booking.EncodedPage) {
	bp := slotBufs.Get().(*[]byte)
	b, at := appendAnswer((*bp)[:0], out, page.JSON)
	h := fnv.New64a()
	var sum [8]byte
	binary.BigEndian.PutUint64(sum[:], page.Sum)
	h.Write(sum[:])
	h.Write(b[:at])
	h.Write(b[at+len(page.JSON):])
	key := h.Sum64()
	gz, kept := s.slotsEncoding(r.Header["Accept-Encoding"], len(b), page, key)
	// The ETag and the Content-Length in one string and one array:
	// five allocations a read were two.
	var vb [48]byte
	v := strconv.AppendUint(append(vb[:0], '"'), key, 36)
	if gz {
		v = append(v, "-gz"...)
	}
	v = append(v, '"')
	hd := w.Header()
	hd["Content-Type"] = hdrJSON
	hd["Cache-Control"] = hdrNoCache
	hd["Vary"] = hdrVaryEncoding
	if inm := r.Header["If-None-Match"]; len(inm) > 0 && matches(inm[0], string(v)) {
		hd["Etag"] = []string{string(v)}
		w.WriteHeader(http.StatusNotModified)
	} else {
		body := b
		if gz {
			if body = kept; body == nil {
				body = s.compressSlots(b, page, key)
			}
			hd["Content-Encoding"] = hdrGzip
		}
		n := len(v)
		vs := string(strconv.AppendInt(v, int64(len(body)), 10))
		vals := &[2]string{vs[:n], vs[n:]}
		hd["Etag"] = vals[0:1:1]
		hd["Content-Length"] = vals[1:2:2]
		w.WriteHeader(http.StatusOK)
		w.Write(body)
	}
	if cap(b) <= 1<<20 {
		*bp = b
		slotBufs.Put(bp)
	}
}

// The slot lists' header values, shared as bookjson.go's are.
var (
	hdrVaryEncoding = []string{"Accept-Encoding"}
	hdrGzip         = []string{"gzip"}
)

// matches reports whether an If-None-Match header names tag (or is *).
func matches(header, tag string) bool {
	for h := range strings.SplitSeq(header, ",") {
		h = strings.TrimPrefix(strings.TrimSpace(h), "W/")
		if h == tag || h == "*" {
			return true
		}
	}
	return false
}

// appendSlots appends the JSON of out, as json.Encoder writes it (with
// its newline).
func appendSlots(b []byte, out *Slots) []byte {
	var list []byte
	for i := range out.Slots {
		if i > 0 {
			list = append(list, ',')
		}
		list = appendSlot(list, &out.Slots[i])
	}
	b, _ = appendAnswer(b, out, list)
	return b
}

// appendQueueSlot appends s as the API shows it, its times in loc (the
// front's booking.SlotEncoder).
func appendQueueSlot(b []byte, s *queue.Slot, loc *time.Location) []byte {
	return appendSlot(b, &Slot{ID: s.ID, Resource: s.Resource, Start: s.Start.In(loc), End: s.End.In(loc),
		Capacity: s.Capacity, Booked: s.Booked, Free: s.Free(), Closed: s.Closed})
}

// appendSlot appends the JSON of one slot.
func appendSlot(b []byte, s *Slot) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, s.ID, 10)
	b = append(b, `,"resource":`...)
	b = appendString(b, s.Resource)
	b = append(b, `,"start":`...)
	b = appendTime(b, s.Start)
	b = append(b, `,"end":`...)
	b = appendTime(b, s.End)
	b = append(b, `,"capacity":`...)
	b = strconv.AppendInt(b, int64(s.Capacity), 10)
	b = append(b, `,"booked":`...)
	b = strconv.AppendInt(b, int64(s.Booked), 10)
	b = append(b, `,"free":`...)
	b = strconv.AppendInt(b, int64(s.Free), 10)
	if s.Closed {
		b = append(b, `,"closed":true`...)
	}
	return append(b, '}')
}

// appendAnswer appends the JSON of out with list, the encoded slots
// separated by commas, as its slots, and returns where list begins.
func appendAnswer(b []byte, out *Slots, list []byte) ([]byte, int) {
	b = append(b, `{"date":`...)
	b = appendString(b, out.Date)
	b = append(b, `,"slots":[`...)
	at := len(b)
	b = append(b, list...)
	b = append(b, `],"total":`...)
	b = strconv.AppendInt(b, int64(out.Total), 10)
	if out.NextOffset != 0 {
		b = append(b, `,"next_offset":`...)
		b = strconv.AppendInt(b, int64(out.NextOffset), 10)
	}
	if out.Past {
		b = append(b, `,"past":true`...)
	}
	if len(out.Opening) > 0 {
		o, _ := json.Marshal(out.Opening) // rare: a day not open yet
		b = append(b, `,"opening":`...)
		b = append(b, o...)
	}
	return append(b, "}\n"...), at
}

// appendTime appends t as time.Time's MarshalJSON does.
func appendTime(b []byte, t time.Time) []byte {
	if y := t.Year(); y < 0 || y > 9999 {
		o, _ := json.Marshal(t) // refused there too
		return append(b, o...)
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// appendString appends s as a JSON string, as encoding/json does: plain
// ASCII as it is, anything else through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			o, _ := json.Marshal(s)
			return append(b, o...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
