package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/nowserving/nowserving/booking"
	"github.com/nowserving/nowserving/queue"
)

// Slot is a bookable slot as the API shows it.
type Slot struct {
	ID       int64     `json:"id"`
	Resource string    `json:"resource"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Capacity int       `json:"capacity"`
	Booked   int       `json:"booked"`
	Free     int       `json:"free"`
	Closed   bool      `json:"closed,omitempty"`
}

// Appointment is a booking as the API shows it.
type Appointment struct {
	ID        int64      `json:"id"`
	Site      string     `json:"site"`
	Resource  string     `json:"resource"`
	Slot      int64      `json:"slot"`
	Start     time.Time  `json:"start"`
	End       time.Time  `json:"end"`
	Patient   string     `json:"patient"`
	Code      string     `json:"code"`
	Status    string     `json:"status"`
	HeldUntil *time.Time `json:"held_until,omitempty"`
	Ticket    string     `json:"ticket,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
}

func toAppointment(b queue.Booking, loc *time.Location) Appointment {
	in := func(t time.Time) time.Time { return stored(t).In(loc) }
	a := Appointment{ID: b.ID, Site: b.Site, Resource: b.Resource, Slot: b.Slot, Start: in(b.Start), End: in(b.End),
		Patient: b.Patient, Code: b.Code, Status: string(b.Status), Ticket: b.Number, CreatedAt: in(b.CreatedAt)}
	if !b.HeldUntil.IsZero() {
		h := in(b.HeldUntil)
		a.HeldUntil = &h
	}
	return a
}

// bookBody is the body of POST .../appointments.
type bookBody struct {
	Slot    int64  `json:"slot"`
	Patient string `json:"patient"`
	Hold    bool   `json:"hold"`
}

func (s *Server) siteLoc(w http.ResponseWriter, r *http.Request) (*time.Location, bool) {
	site, ok := s.siteOf(w, r)
	if !ok {
		return nil, false
	}
	return site.Location, true
}

// siteOf is the site of the path, or false once the problem is answered.
func (s *Server) siteOf(w http.ResponseWriter, r *http.Request) (*queue.Site, bool) {
	site, err := s.o.Engine.Site(r.PathValue("site"))
	if err != nil {
		writeError(w, s.log, err)
		return nil, false
	}
	return site, true
}

// Slots is the answer of GET .../slots. A date with no slot listed says
// why: Past (before today), or Opening: the resources whose slots of the
// date have not opened yet (beyond their days_ahead), with when they open.
//
// A list is a page of at most MaxSlotPage slots (limit, default and at
// most MaxSlotPage) from offset: Total counts the day's slots of the
// query, NextOffset is the offset of the next page when more follow.
type Slots struct {
	Date       string               `json:"date"`
	Slots      []Slot               `json:"slots"`
	Total      int                  `json:"total"`
	NextOffset int                  `json:"next_offset,omitempty"`
	Past       bool                 `json:"past,omitempty"`
	Opening    map[string]time.Time `json:"opening,omitempty"`
}

// MaxSlotPage bounds a slot list's page: a day of every resource of a
// large site is tens of thousands of slots.
const MaxSlotPage = 1000

// pageParams reads the limit (1 to most, default most) and offset (from
// 0) of a list, or false once the problem is answered.
func pageParams(w http.ResponseWriter, query url.Values, most int) (limit, offset int, ok bool) {
	limit = most
	for _, p := range []struct {
		name   string
		v      *int
		lo, hi int
	}{{"limit", &limit, 1, most}, {"offset", &offset, 0, math.MaxInt32}} {
		q := query.Get(p.name)
		if q == "" {
			continue
		}
		n, err := strconv.Atoi(q)
		if err != nil || n < p.lo || n > p.hi {
			badRequest(w, fmt.Sprintf("%s %q: want an integer from %d to %d", p.name, q, p.lo, p.hi))
			return 0, 0, false
		}
		*p.v = n
	}
	return limit, offset, true
}

func (s *Server) slots(w http.ResponseWriter, r *http.Request) {
	ctx, done, err := s.front.AdmitRead(r.Context())
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	defer done()
	site, ok := s.siteOf(w, r)
	if !ok {
		return
	}
	query := r.URL.Query() // parsed once: each call parses it again
	loc, resource := site.Location, query.Get("resource")
	now := s.o.Engine.Now()
	today := now.In(loc).Format(time.DateOnly)
	date := query.Get("date")
	if date == "" {
		date = today
	}
	limit, offset, ok := pageParams(w, query, MaxSlotPage)
	if !ok {
		return
	}
	q := booking.SlotQuery{Site: site.ID, Resource: resource, Date: date, Offset: offset, Limit: limit}
	page, ok := s.front.EncodedPage(q, loc)
	if !ok {
		list, total, err := s.front.SlotPage(ctx, q)
		if err != nil {
			writeError(w, s.log, err)
			return
		}
		// Answered from the encoded form of the list the read cached,
		// when it did: the ETag is then the one the next reads of the
		// unchanged list carry, so their If-None-Match gets its 304.
		if page, ok = s.front.EncodedPageRead(q, loc); !ok {
			page = booking.EncodePage(nil, list, total, loc, appendQueueSlot)
		}
	}
	out := Slots{Date: date, Total: page.Total}
	if offset+page.Slots < page.Total {
		out.NextOffset = offset + page.Slots
	}
	day, _ := time.ParseInLocation(time.DateOnly, date, loc) // Slots parsed it
	out.Past = date < today
	for _, res := range site.Resources {
		sc := res.Schedule
		if (resource != "" && res.ID != resource) || out.Past || !day.After(sc.Horizon(now, loc)) {
			continue
		}
		if out.Opening == nil {
			out.Opening = map[string]time.Time{}
		}
		y, m, d := day.Date()
		out.Opening[res.ID] = time.Date(y, m, d-sc.DaysAhead, 0, 0, 0, 0, loc).Add(sc.OpensAt)
	}
	s.writeSlots(w, r, &out, page)
}

// book takes no permit of the front itself: Book does, once memory
// cannot answer the request.
func (s *Server) book(w http.ResponseWriter, r *http.Request) {
	loc, ok := s.siteLoc(w, r)
	if !ok {
		return
	}
	var b bookBody
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(&b)
	switch {
	case err != nil:
		err = fmt.Errorf(`body: want {"slot": ID, "patient": REF, "hold": BOOL}: %w`, err)
	case b.Slot <= 0:
		err = errors.New("body: slot is required")
	case b.Patient == "" || len(b.Patient) > queue.MaxPatientLen:
		err = fmt.Errorf("body: patient is required, at most %d bytes", queue.MaxPatientLen)
	default:
		err = s.checkKey(r)
	}
	if err != nil {
		badRequest(w, err.Error())
		return
	}
	bk, replayed, err := s.front.Book(r.Context(), queue.BookRequest{Request: s.request(r), Slot: b.Slot, Patient: b.Patient, Hold: b.Hold})
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	status := http.StatusCreated
	if replayed {
		status = http.StatusOK
	}
	w.Header()["Location"] = []string{"/api/v1/sites/" + bk.Site + "/appointments/" + strconv.FormatInt(bk.ID, 10)}
	a := toAppointment(bk, loc)
	writeAppointment(w, status, &a)
}

// checkKey checks the Idempotency-Key of a booking request: at most 128
// characters, and present where the site requires it
// (appointments.require_idempotency_key).
func (s *Server) checkKey(r *http.Request) error {
	key := r.Header.Get("Idempotency-Key")
	if len(key) > 128 {
		return errors.New("Idempotency-Key: at most 128 characters")
	}
	if site, err := s.o.Engine.Site(r.PathValue("site")); err == nil && site.Appointments.RequireKey && key == "" {
		return errors.New("Idempotency-Key: required for bookings at this site")
	}
	return nil
}

// bookingRequest is the request naming the booking of the path.
func (s *Server) bookingRequest(w http.ResponseWriter, r *http.Request) (queue.BookingRequest, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		badRequest(w, fmt.Sprintf("appointment id %q: want a positive integer", r.PathValue("id")))
		return queue.BookingRequest{}, false
	}
	return queue.BookingRequest{Request: s.request(r), ID: id}, true
}

func (s *Server) appointment(w http.ResponseWriter, r *http.Request) {
	s.bookingOp(w, r, func(br queue.BookingRequest) (queue.Booking, error) {
		return s.o.Engine.Booking(r.Context(), br.Site, br.ID)
	})
}

func (s *Server) cancelAppointment(w http.ResponseWriter, r *http.Request) {
	s.bookingOp(w, r, func(br queue.BookingRequest) (queue.Booking, error) { return s.front.Cancel(r.Context(), br) })
}

func (s *Server) confirmAppointment(w http.ResponseWriter, r *http.Request) {
	s.bookingOp(w, r, func(br queue.BookingRequest) (queue.Booking, error) { return s.o.Engine.Confirm(r.Context(), br) })
}

// bookingOp answers op on the booking of the path with the booking.
func (s *Server) bookingOp(w http.ResponseWriter, r *http.Request, op func(queue.BookingRequest) (queue.Booking, error)) {
	loc, ok := s.siteLoc(w, r)
	if !ok {
		return
	}
	br, ok := s.bookingRequest(w, r)
	if !ok {
		return
	}
	b, err := op(br)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	a := toAppointment(b, loc)
	writeAppointment(w, http.StatusOK, &a)
}

// checkIn turns the booking into a ticket and answers it as the ticket API
// does (POST .../tickets).
func (s *Server) checkIn(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.siteLoc(w, r); !ok {
		return
	}
	br, ok := s.bookingRequest(w, r)
	if !ok {
		return
	}
	ci, err := s.o.Engine.CheckIn(r.Context(), br)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	w.Header().Set("Location", fmt.Sprintf("/api/v1/sites/%s/tickets/%s", ci.Position.Ticket.Site, ci.Position.Ticket.Number))
	writeJSON(w, http.StatusCreated, toPosition(ci.Position, s.o.Clock()))
}

// retryAfter sets Retry-After for a rate-limited or shed request, in
// whole seconds rounded up.
func retryAfter(w http.ResponseWriter, err error) {
	var re *booking.RateError
	var oe *booking.OverloadError
	switch {
	case errors.As(err, &re):
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(re.RetryAfter.Seconds()))))
	case errors.As(err, &oe):
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(oe.RetryAfter.Seconds()))))
	default:
		w.Header().Set("Retry-After", "1")
	}
}
