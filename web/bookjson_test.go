package web

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestAppointmentAndProblemJSON: an appointment and a problem are written
// as encoding/json writes them, to the byte.
func TestAppointmentAndProblemJSON(t *testing.T) {
	loc := time.FixedZone("CST", 8*3600)
	at := time.Date(2026, 12, 2, 8, 0, 0, 0, loc)
	held := at.Add(10*time.Minute + 123456789)
	for _, a := range []Appointment{
		{ID: 1, Site: "main", Resource: "dr-0042", Slot: 77, Start: at, End: at.Add(15 * time.Minute), Patient: "p-1", Code: "K7Q2", Status: "booked", CreatedAt: at.UTC()},
		{ID: 2, Site: `s "<&>" 王`, Resource: "r\n", Slot: 1, Start: at.In(time.UTC), End: at, Patient: "é\u2028", Code: "", Status: "held",
			HeldUntil: &held, Ticket: "A001", CreatedAt: at.Add(time.Nanosecond)},
	} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(a); err != nil {
			t.Fatal(err)
		}
		if got := appendAppointment(nil, &a); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("appointment %d:\n got %s\nwant %s", a.ID, got, want.Bytes())
		}
	}
	for _, p := range []Problem{
		{Type: ProblemType + "slot_full", Title: "slot full", Status: 409, Detail: "slot 12 (known full)", Code: "slot_full"},
		{Type: ProblemType + "unauthorized", Title: "missing or unknown bearer token", Status: 401, Code: "unauthorized"},
		{Type: ProblemType + "bad_request", Title: "bad request", Status: 400, Code: "bad_request",
			Detail: `body: want {"slot": ID, "patient": REF, "hold": BOOL}: invalid character '<' in "é"`},
	} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(p); err != nil {
			t.Fatal(err)
		}
		if got := appendProblem(nil, &p); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("problem %s:\n got %s\nwant %s", p.Code, got, want.Bytes())
		}
	}
}
