package web

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// bookingEnv is newEnv with resources at site main: dr (1 place every 15
// minutes) and vacc (3 places every 30 minutes), Mon-Fri 10:00-12:00, and
// their slots made; mods change the site first.
func bookingEnv(t testing.TB, mods ...func(*queue.Site)) *env {
	t.Helper()
	e := newEnv(t, func(qo *queue.Opts, _ *Opts) {
		s := &qo.Sites[0]
		sched := func(slot time.Duration, n int) queue.Schedule {
			return queue.Schedule{Open: 10 * time.Hour, Close: 12 * time.Hour, Slot: slot, Capacity: n, DaysAhead: 7, OpensAt: 7 * time.Hour}
		}
		s.Resources = []queue.Resource{{ID: "dr", Service: "A", Schedule: sched(15*time.Minute, 1)}, {ID: "vacc", Service: "A", Schedule: sched(30*time.Minute, 3)}}
		s.Appointments = queue.Appointments{PatientRate: 5, PatientWindow: 10 * time.Second}
		for _, m := range mods {
			m(s)
		}
	})
	if _, err := e.eng.GenerateSlots(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

type slotList struct {
	Date  string `json:"date"`
	Slots []Slot `json:"slots"`
}

func (e *env) slotIDs(t *testing.T, resource string) []int64 {
	t.Helper()
	l := decode[slotList](t, e.do("GET", "/api/v1/sites/main/slots?resource="+resource+"&date=2026-03-02", "", ""), http.StatusOK)
	var ids []int64
	for _, s := range l.Slots {
		ids = append(ids, s.ID)
	}
	return ids
}

func (e *env) bookSlot(slot int64, patient, key string) *http.Response {
	return e.do("POST", "/api/v1/sites/main/appointments", "", fmt.Sprintf(`{"slot": %d, "patient": %q}`, slot, patient), "Idempotency-Key", key)
}

func TestAppointments(t *testing.T) {
	e := bookingEnv(t)
	l := decode[slotList](t, e.do("GET", "/api/v1/sites/main/slots?date=2026-03-02", "", ""), http.StatusOK)
	if len(l.Slots) != 8+4 || l.Slots[0].Free != 1 || l.Slots[0].Start.Format("15:04") != "10:00" {
		t.Fatalf("slots of the day: %+v", l)
	}
	dr, vacc := e.slotIDs(t, "dr"), e.slotIDs(t, "vacc")
	a := decode[Appointment](t, e.bookSlot(dr[0], "p-1", "k1"), http.StatusCreated)
	if a.Status != "BOOKED" || len(a.Code) != 8 || a.Resource != "dr" {
		t.Errorf("booked %+v", a)
	}
	if again := decode[Appointment](t, e.bookSlot(dr[0], "p-1", "k1"), http.StatusOK); again.ID != a.ID {
		t.Errorf("replay gave %d, want %d", again.ID, a.ID)
	}
	for _, c := range []struct {
		slot    int64
		patient string
		status  int
		code    string
	}{
		{dr[0], "p-2", http.StatusConflict, "slot_full"},
		{vacc[0], "p-1", http.StatusConflict, "overlapping_booking"},
		{999, "p-2", http.StatusUnprocessableEntity, "unknown_slot"},
		{dr[1], "", http.StatusBadRequest, "bad_request"},
	} {
		p := decode[Problem](t, e.bookSlot(c.slot, c.patient, ""), c.status)
		if p.Code != c.code {
			t.Errorf("book %d for %q: %s, want %s", c.slot, c.patient, p.Code, c.code)
		}
	}
	decode[Appointment](t, e.bookSlot(vacc[1], "p-3", ""), http.StatusCreated)
	if p := decode[Problem](t, e.bookSlot(vacc[1], "p-3", ""), http.StatusConflict); p.Code != "already_booked" {
		t.Errorf("same patient twice: %s", p.Code)
	}
	path := fmt.Sprintf("/api/v1/sites/main/appointments/%d", a.ID)
	if got := decode[Appointment](t, e.do("GET", path, "", ""), http.StatusOK); got.Code != a.Code {
		t.Errorf("GET appointment: %+v", got)
	}
	// 09:00, the slot at 10:00: check-in opens at 09:30.
	if p := decode[Problem](t, e.do("POST", path+"/check-in", "", ""), http.StatusConflict); p.Code != "check_in_early" || p.Detail == "" {
		t.Errorf("early check-in: %+v", p)
	}
	e.clock.Fix(time.Date(2026, 3, 2, 9, 45, 0, 0, time.UTC))
	pos := decode[Position](t, e.do("POST", path+"/check-in", "", ""), http.StatusCreated)
	if pos.Ticket.Class != "appointment" || pos.Ticket.Service != "A" || pos.Ticket.Status != "WAITING" {
		t.Errorf("check-in: %+v", pos)
	}
	if p := decode[Problem](t, e.do("DELETE", path, "", ""), http.StatusConflict); p.Code != "appointment_state" {
		t.Errorf("cancel a checked-in appointment: %+v", p)
	}
	b := decode[Appointment](t, e.bookSlot(dr[2], "p-4", ""), http.StatusCreated)
	bpath := fmt.Sprintf("/api/v1/sites/main/appointments/%d", b.ID)
	if c := decode[Appointment](t, e.do("DELETE", bpath, "", ""), http.StatusOK); c.Status != "CANCELLED" {
		t.Errorf("cancel: %+v", c)
	}
	if p := decode[Problem](t, e.do("DELETE", bpath, "", ""), http.StatusConflict); p.Code != "appointment_state" {
		t.Errorf("cancel twice: %+v", p)
	}
	// An id that is not one is malformed, 400 as a malformed body is;
	// a well-formed id no booking has is 404: for every operation on one.
	for _, op := range []struct{ method, suffix string }{{"GET", ""}, {"DELETE", ""}, {"POST", "/confirm"}, {"POST", "/check-in"}} {
		for _, id := range []string{"abc", "0", "-3"} {
			if p := decode[Problem](t, e.do(op.method, "/api/v1/sites/main/appointments/"+id+op.suffix, "", ""), http.StatusBadRequest); p.Code != "bad_request" {
				t.Errorf("%s appointment %q%s: %+v", op.method, id, op.suffix, p)
			}
		}
		if p := decode[Problem](t, e.do(op.method, "/api/v1/sites/main/appointments/999"+op.suffix, "", ""), http.StatusNotFound); p.Code != "booking_not_found" {
			t.Errorf("%s appointment 999%s: %+v", op.method, op.suffix, p)
		}
	}
	// A HELD booking is confirmed once; a second confirm is refused.
	held := decode[Appointment](t, e.do("POST", "/api/v1/sites/main/appointments", "", fmt.Sprintf(`{"slot": %d, "patient": "p-5", "hold": true}`, dr[3])), http.StatusCreated)
	hpath := fmt.Sprintf("/api/v1/sites/main/appointments/%d/confirm", held.ID)
	if c := decode[Appointment](t, e.do("POST", hpath, "", ""), http.StatusOK); held.Status != "HELD" || c.Status != "BOOKED" {
		t.Errorf("hold %s, then confirm: %+v", held.Status, c)
	}
	if p := decode[Problem](t, e.do("POST", hpath, "", "", "Idempotency-Key", "confirm-2"), http.StatusConflict); p.Code != "appointment_state" {
		t.Errorf("confirm twice: %+v", p)
	}
	if p := decode[Problem](t, e.do("GET", "/api/v1/sites/main/slots?date=tomorrow", "", ""), http.StatusBadRequest); p.Code != "bad_request" {
		t.Errorf("slots of a malformed date: %+v", p)
	}
	for _, body := range []string{`{"slot": "x"}`, `{"slot": 1, "patient": "p", "colour": "red"}`, `{"patient": "p"}`, `{`} {
		p := decode[Problem](t, e.do("POST", "/api/v1/sites/main/appointments", "", body), http.StatusBadRequest)
		if p.Code != "bad_request" {
			t.Errorf("malformed booking %s: %+v", body, p)
		}
	}
	decode[Problem](t, e.do("GET", "/api/v1/sites/main/slots?resource=nobody", "", ""), http.StatusNotFound)
}

// TestSlotsPastAndNotOpen: a date before today, and a date beyond a
// resource's days_ahead, both list no slots, and say which it is: past,
// or when each resource's slots of that date open.
func TestSlotsPastAndNotOpen(t *testing.T) {
	e := bookingEnv(t) // Monday 2026-03-02 09:00 UTC; days_ahead 7 from 07:00
	type answer struct {
		Slots   []Slot               `json:"slots"`
		Past    bool                 `json:"past"`
		Opening map[string]time.Time `json:"opening"`
	}
	past := decode[answer](t, e.do("GET", "/api/v1/sites/main/slots?date=2026-02-27", "", ""), http.StatusOK)
	if len(past.Slots) != 0 || !past.Past || past.Opening != nil {
		t.Errorf("a past date: %+v, want no slots and past", past)
	}
	far := decode[answer](t, e.do("GET", "/api/v1/sites/main/slots?date=2026-03-10&resource=dr", "", ""), http.StatusOK)
	want := time.Date(2026, 3, 3, 7, 0, 0, 0, time.UTC)
	if len(far.Slots) != 0 || far.Past || len(far.Opening) != 1 || !far.Opening["dr"].Equal(want) {
		t.Errorf("a date beyond days_ahead: %+v, want no slots, opening dr at %s", far, want)
	}
	open := decode[answer](t, e.do("GET", "/api/v1/sites/main/slots?date=2026-03-09", "", ""), http.StatusOK)
	if len(open.Slots) == 0 || open.Past || open.Opening != nil {
		t.Errorf("the last open date: %+v", open)
	}
}

// TestSlotsPaged: a slot list is a page: limit and offset walk the day's
// 12 slots in order with total and next_offset; a bad limit or offset is
// 400; without limit a page is at most MaxSlotPage.
func TestSlotsPaged(t *testing.T) {
	e := bookingEnv(t)
	type page struct {
		Slots      []Slot `json:"slots"`
		Total      int    `json:"total"`
		NextOffset int    `json:"next_offset"`
	}
	whole := decode[page](t, e.do("GET", "/api/v1/sites/main/slots?date=2026-03-02", "", ""), http.StatusOK)
	if len(whole.Slots) != 12 || whole.Total != 12 || whole.NextOffset != 0 {
		t.Fatalf("the whole day: %d slots, total %d, next %d", len(whole.Slots), whole.Total, whole.NextOffset)
	}
	var walked []Slot
	for off, pages := 0, 0; ; pages++ {
		p := decode[page](t, e.do("GET", fmt.Sprintf("/api/v1/sites/main/slots?date=2026-03-02&limit=5&offset=%d", off), "", ""), http.StatusOK)
		if p.Total != 12 || len(p.Slots) > 5 || pages > 3 {
			t.Fatalf("page at %d: %+v", off, p)
		}
		walked = append(walked, p.Slots...)
		if p.NextOffset == 0 {
			break
		}
		off = p.NextOffset
	}
	if len(walked) != 12 {
		t.Fatalf("walked %d slots, want 12", len(walked))
	}
	for i := range walked {
		if walked[i].ID != whole.Slots[i].ID {
			t.Errorf("slot %d: %d, want %d", i, walked[i].ID, whole.Slots[i].ID)
		}
	}
	for _, q := range []string{"limit=0", "limit=1001", "limit=x", "offset=-1"} {
		if p := decode[Problem](t, e.do("GET", "/api/v1/sites/main/slots?date=2026-03-02&"+q, "", ""), http.StatusBadRequest); p.Code != "bad_request" {
			t.Errorf("%s: %+v", q, p)
		}
	}
	if MaxSlotPage != 1000 {
		t.Errorf("MaxSlotPage %d: openapi.yaml says 1000", MaxSlotPage)
	}
}

// TestRequiredKey: where appointments.require_idempotency_key is on, a
// booking without Idempotency-Key is 400 bad_request; with one it books.
func TestRequiredKey(t *testing.T) {
	e := bookingEnv(t, func(s *queue.Site) { s.Appointments.RequireKey = true })
	dr := e.slotIDs(t, "dr")
	if p := decode[Problem](t, e.bookSlot(dr[0], "p-1", ""), http.StatusBadRequest); p.Code != "bad_request" {
		t.Errorf("no key: %+v", p)
	}
	decode[Appointment](t, e.bookSlot(dr[0], "p-1", "k-1"), http.StatusCreated)
}

// TestAppointmentRate: the sixth request of a patient within 10 s is 429
// with Retry-After, a retry of the first, acknowledged, key too (the rate
// is checked before the replay, openapi.yaml); another patient is not
// held back; after Retry-After the retry gets its booking (200).
func TestAppointmentRate(t *testing.T) {
	e := bookingEnv(t)
	dr := e.slotIDs(t, "dr")
	first := decode[Appointment](t, e.bookSlot(dr[0], "p-1", "k-1"), http.StatusCreated)
	for range 4 {
		e.bookSlot(dr[0], "p-1", "").Body.Close()
	}
	for _, r := range []struct {
		slot int64
		key  string
	}{{dr[1], ""}, {dr[0], "k-1"}} {
		resp := e.bookSlot(r.slot, "p-1", r.key)
		if p := decode[Problem](t, resp, http.StatusTooManyRequests); p.Code != "rate_limited" || resp.Header.Get("Retry-After") != "10" {
			t.Errorf("past the rate (key %q): %+v, Retry-After %q", r.key, p, resp.Header.Get("Retry-After"))
		}
	}
	decode[Appointment](t, e.bookSlot(dr[1], "p-2", ""), http.StatusCreated)
	e.clock.Fix(time.Date(2026, 3, 2, 9, 0, 10, 0, time.UTC))
	if again := decode[Appointment](t, e.bookSlot(dr[0], "p-1", "k-1"), http.StatusOK); again.ID != first.ID {
		t.Errorf("the retry after Retry-After: booking %d, want %d", again.ID, first.ID)
	}
	decode[Appointment](t, e.bookSlot(dr[2], "p-1", ""), http.StatusCreated)
}

// TestReplaySameTimes: a replay of a booking or of a ticket (read back
// from the store, to the millisecond) gives the times of the first answer
// (from the clock, to the nanosecond), not times that differ under a
// millisecond.
func TestReplaySameTimes(t *testing.T) {
	e := bookingEnv(t)
	e.clock.Fix(time.Date(2026, 3, 2, 9, 0, 0, 123456789, time.UTC))
	body := fmt.Sprintf(`{"slot": %d, "patient": "p-ns", "hold": true}`, e.slotIDs(t, "dr")[0])
	first := decode[Appointment](t, e.do("POST", "/api/v1/sites/main/appointments", "", body, "Idempotency-Key", "k-ns"), http.StatusCreated)
	again := decode[Appointment](t, e.do("POST", "/api/v1/sites/main/appointments", "", body, "Idempotency-Key", "k-ns"), http.StatusOK)
	if !again.CreatedAt.Equal(first.CreatedAt) || first.HeldUntil == nil || again.HeldUntil == nil || !again.HeldUntil.Equal(*first.HeldUntil) {
		t.Errorf("booking: first created %v held until %v, replay %v and %v", first.CreatedAt, first.HeldUntil, again.CreatedAt, again.HeldUntil)
	}
	tf := decode[Position](t, e.do("POST", "/api/v1/sites/main/tickets", "", `{"service":"A"}`, "Idempotency-Key", "t-ns"), http.StatusCreated)
	ta := decode[Position](t, e.do("POST", "/api/v1/sites/main/tickets", "", `{"service":"A"}`, "Idempotency-Key", "t-ns"), http.StatusCreated)
	if tf.Ticket.IssuedAt == nil || ta.Ticket.IssuedAt == nil || !ta.Ticket.IssuedAt.Equal(*tf.Ticket.IssuedAt) {
		t.Errorf("ticket: first issued at %v, replay %v", tf.Ticket.IssuedAt, ta.Ticket.IssuedAt)
	}
}
