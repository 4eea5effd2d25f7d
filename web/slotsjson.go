package web

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// slotBufs are the buffers slot lists are written into.
var slotBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// writeSlots answers out as writeJSON would, byte for byte, without
// reflection: a slot list is the appointments API's most read answer
// (DESIGN §5a, 50 reads to a booking), and encoding/json spent most of
// its CPU on it.
func writeSlots(w http.ResponseWriter, out *Slots) {
	bp := slotBufs.Get().(*[]byte)
	b := appendSlots((*bp)[:0], out)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	if cap(b) <= 1<<20 {
		*bp = b
		slotBufs.Put(bp)
	}
}

// appendSlots appends the JSON of out, as json.Encoder writes it (with
// its newline).
func appendSlots(b []byte, out *Slots) []byte {
	b = append(b, `{"date":`...)
	b = appendString(b, out.Date)
	b = append(b, `,"slots":[`...)
	for i := range out.Slots {
		s := &out.Slots[i]
		if i > 0 {
			b = append(b, ',')
		}
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
		b = append(b, '}')
	}
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
	return append(b, "}\n"...)
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
