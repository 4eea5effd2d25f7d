package web

import (
	"net/http"
	"strconv"
)

// The appointments API's answers without reflection. A booking, and in a
// rush its refusal (409 slot_full, 429), is the API's most frequent write:
// encoding/json encoded each answer through reflection. Each function here
// gives the bytes encoding/json gives, which the tests check against it.

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
