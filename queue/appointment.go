package queue

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// BookRequest asks for a place in a slot for a patient. Hold makes it a
// HELD booking that Confirm turns into BOOKED before the site's HoldFor
// runs out.
type BookRequest struct {
	Request
	Slot    int64
	Patient string
	Hold    bool
}

// BookingRequest acts on one booking of a site, named by ID or by Code.
type BookingRequest struct {
	Request
	ID   int64
	Code string
}

// CheckIn is the answer to a check-in: the booking, now CHECKED_IN, and
// the ticket it became with where it stands. OnTime is false for a late
// check-in given a normal ticket.
type CheckIn struct {
	Booking  Booking
	Position Position
	OnTime   bool
}

// setVersion gives a check-in the version of its request's last event,
// as TAKE_TICKET's ticket has (PROTOCOL.md, TICKET tag 16).
func (c *CheckIn) setVersion(v int64) { c.Position.Ticket.Version = v }

// MaxPatientLen bounds a patient reference.
const MaxPatientLen = 128

// codeAlphabet is the booking code's alphabet: digits and capitals
// without 0, 1, I, L and O, which read alike.
const codeAlphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"

// CodeLen is the length of a booking code.
const CodeLen = 8

// newCode draws a booking code from crypto/rand.
func newCode() string {
	var b [CodeLen]byte
	var buf [32]byte
	for n := 0; n < CodeLen; {
		if _, err := rand.Read(buf[:]); err != nil {
			panic(fmt.Sprintf("queue: crypto/rand: %v", err)) // never fails on supported platforms
		}
		for _, c := range buf {
			// 248 = 8 * 31: no bias.
			if c < 248 && n < CodeLen {
				b[n] = codeAlphabet[int(c)%len(codeAlphabet)]
				n++
			}
		}
	}
	return string(b[:])
}

// NormalizeCode is a code as typed or scanned, in capitals without
// spaces or dashes.
func NormalizeCode(code string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == ' ' {
			return -1
		}
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, code)
}

// BookingStateError refuses an action on a booking in a state that does
// not allow it. It matches ErrBookingState.
type BookingStateError struct {
	ID     int64
	Status BookingStatus
	Action string
	// Code is the booking's code on a refused check-in: the device
	// protocol names the booking by the code its kiosk sent.
	Code string
}

func (e *BookingStateError) Error() string {
	return fmt.Sprintf("queue: booking %d is %s: cannot %s", e.ID, e.Status, e.Action)
}

// Is makes BookingStateError match ErrBookingState.
func (e *BookingStateError) Is(target error) bool { return target == ErrBookingState }

func (e *BookingStateError) refuses() {}

// CheckInLateError refuses a check-in after its window (where the site
// refuses late check-ins) or past the slot's end and grace. It matches
// ErrCheckInLate.
type CheckInLateError struct {
	ID     int64
	Code   string
	Reason string // "its slot ended at 10:30", "the window closed at 10:25"
}

func (e *CheckInLateError) Error() string {
	return fmt.Sprintf("%s: booking %d: %s", ErrCheckInLate, e.ID, e.Reason)
}

// Is makes CheckInLateError match ErrCheckInLate.
func (e *CheckInLateError) Is(target error) bool { return target == ErrCheckInLate }

func (e *CheckInLateError) refuses() {}

// Book takes a place in a slot: one conditional UPDATE of the slot's
// places, behind the store's CHECK and unique index. A retry of the same
// request (device and key) returns the first booking as it is now, with
// replayed true.
func (e *Engine) Book(ctx context.Context, r BookRequest) (Booking, bool, error) {
	op := opName("book", strconv.FormatInt(r.Slot, 10), PatientHash(r.Patient), map[bool]string{true: "hold"}[r.Hold])
	b, now, err := runIdempotent(ctx, e, call{Request: r.Request, lane: laneBooking, op: op}, steps[bookResult, Booking]{
		run: func(ctx context.Context, tx Tx, j *job, s *Site) (bookResult, error) {
			b, err := e.book(ctx, tx, j, s, r)
			return bookResult{b}, err
		},
		again: func(ctx context.Context, tx Tx, s *Site, v bookResult) (Booking, error) {
			cur, err := tx.Booking(ctx, v.ID)
			if err != nil {
				return Booking{}, fmt.Errorf("queue: read booking %d again: %w", v.ID, err)
			}
			return *cur, nil
		},
	})
	if err != nil {
		return Booking{}, false, err
	}
	if now != nil {
		return *now, true, nil
	}
	return b.Booking, false, nil
}

// bookResult is a booking as the idempotency record of the request that
// made it keeps it: its ID alone, {"id":N}, since a retry reads the
// booking as it is now. The record is smaller (written with every
// booking, and without the patient's reference) and encoded without
// reflection. A record of the whole booking, as kept before, decodes to
// its ID too.
type bookResult struct{ Booking }

// MarshalJSON writes the booking's ID alone.
func (r bookResult) MarshalJSON() ([]byte, error) {
	return append(strconv.AppendInt([]byte(`{"id":`), r.ID, 10), '}'), nil
}

// UnmarshalJSON reads the ID of a stored booking.
func (r *bookResult) UnmarshalJSON(b []byte) error {
	var v struct{ ID int64 }
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("queue: decode booking result: %w", err)
	}
	r.Booking = Booking{ID: v.ID}
	return nil
}

func checkPatient(p string) error {
	if p == "" || len(p) > MaxPatientLen {
		return fmt.Errorf("%w: patient reference: want 1 to %d bytes", ErrBadRequest, MaxPatientLen)
	}
	return nil
}

// book applies one BookRequest in tx.
func (e *Engine) book(ctx context.Context, tx Tx, j *job, s *Site, r BookRequest) (Booking, error) {
	if err := checkPatient(r.Patient); err != nil {
		return Booking{}, err
	}
	now := e.clock()
	// The read, the UPDATE that takes the place and the patient's lock,
	// in one statement where the store can; refused on what the read
	// shows, without the UPDATE, where it cannot.
	sl, ok, err := tx.TakeSlot(ctx, PatientKey{Site: s.ID, Patient: r.Patient}, r.Slot, now)
	if errors.Is(err, ErrSlotNotFound) || (err == nil && sl.Site != s.ID) {
		return Booking{}, fmt.Errorf("%w: %d at site %s", ErrSlotNotFound, r.Slot, s.ID)
	}
	if err != nil {
		return Booking{}, fmt.Errorf("queue: book slot %d: %w", r.Slot, err)
	}
	// A place taken in a slot of a resource the site no longer has is
	// undone with the request (a booking runs in a savepoint, or alone).
	res, err := s.resource(sl.Resource)
	if err != nil {
		return Booking{}, err
	}
	if !ok {
		return Booking{}, slotRefusal(s, sl, now)
	}
	if err := patientFree(ctx, tx, s, r.Patient, sl); err != nil {
		return Booking{}, err
	}
	b := Booking{Site: s.ID, Resource: sl.Resource, Slot: sl.ID, Start: sl.Start, End: sl.End, Patient: r.Patient,
		Code: newCode(), Status: BookingBooked, CreatedAt: now, UpdatedAt: now, Device: r.Device, IdemKey: r.Key}
	if r.Hold {
		b.Status, b.HeldUntil = BookingHeld, now.Add(s.Appointments.withDefaults().HoldFor)
	}
	if err := tx.InsertBooking(ctx, &b); err != nil {
		if errors.Is(err, ErrDuplicate) {
			// Another transaction's booking of this patient, or a code
			// drawn twice: run again, to see the one or draw anew.
			return Booking{}, fmt.Errorf("queue: book slot %d: %w: %w", sl.ID, ErrConflict, err)
		}
		return Booking{}, fmt.Errorf("queue: book slot %d: %w", sl.ID, err)
	}
	j.emit(bookingEvent(b.Status.Event(), s, &b, res.Service, r.Device, now))
	return b, nil
}

// slotRefusal says why TakeSlot took no place.
func slotRefusal(s *Site, sl *Slot, now time.Time) error {
	at := sl.Start.In(s.Location).Format("2006-01-02 15:04")
	switch {
	case sl.Closed:
		return fmt.Errorf("%w: slot %d of %s at %s was closed by a schedule change", ErrSlotClosed, sl.ID, sl.Resource, at)
	case !sl.Start.After(now):
		return fmt.Errorf("%w: slot %d of %s at %s has started", ErrSlotClosed, sl.ID, sl.Resource, at)
	}
	return fmt.Errorf("%w: slot %d of %s at %s", ErrSlotFull, sl.ID, sl.Resource, at)
}

// patientFree refuses a second booking of the patient in the slot or one
// overlapping it. The patient's lock, which TakeSlot took, makes its read
// see any booking of the patient another transaction commits.
func patientFree(ctx context.Context, tx Tx, s *Site, patient string, sl *Slot) error {
	other, err := tx.FindBookings(ctx, BookingFilter{Site: s.ID, Patient: patient, Statuses: []BookingStatus{BookingHeld, BookingBooked},
		StartBefore: sl.End, EndAfter: sl.Start, Limit: 1})
	if err != nil {
		return fmt.Errorf("queue: bookings of patient %s: %w", PatientHash(patient), err)
	}
	if len(other) == 0 {
		return nil
	}
	if other[0].Slot == sl.ID {
		return fmt.Errorf("%w: booking %d", ErrAlreadyBooked, other[0].ID)
	}
	return fmt.Errorf("%w: booking %d of %s at %s", ErrOverlap, other[0].ID, other[0].Resource,
		other[0].Start.In(s.Location).Format("2006-01-02 15:04"))
}

// findBooking reads the booking r names at site s.
func findBooking(ctx context.Context, tx Tx, s *Site, r BookingRequest) (*Booking, error) {
	var b *Booking
	var err error
	switch {
	case r.ID != 0:
		b, err = tx.Booking(ctx, r.ID)
	case r.Code != "":
		b, err = tx.BookingByCode(ctx, s.ID, NormalizeCode(r.Code))
	default:
		return nil, fmt.Errorf("%w: no booking id or code", ErrBadRequest)
	}
	if errors.Is(err, ErrBookingNotFound) || (err == nil && b.Site != s.ID) {
		return nil, fmt.Errorf("%w: %s at site %s", ErrBookingNotFound, r.name(), s.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("queue: read booking %s: %w", r.name(), err)
	}
	return b, nil
}

// call is r as an idempotent request op of the bulk lane.
func (r BookingRequest) call(op string) call {
	return call{Request: r.Request, lane: laneBulk, op: opName(op, r.name())}
}

func (r BookingRequest) name() string {
	if r.ID != 0 {
		return strconv.FormatInt(r.ID, 10)
	}
	return "with code " + NormalizeCode(r.Code)
}

// setBooking moves b to status to with a compare-and-set on its status
// and emits to's event; a move to a state that holds no place (see
// HoldsPlace) gives the place back.
func setBooking(ctx context.Context, tx Tx, j *job, s *Site, b *Booking, to BookingStatus, actor string, now time.Time) error {
	from := b.Status
	b.Status, b.UpdatedAt = to, now
	if err := tx.UpdateBooking(ctx, b, from); err != nil {
		return fmt.Errorf("queue: booking %d %s to %s: %w", b.ID, from, to, err)
	}
	if from.HoldsPlace() && !to.HoldsPlace() {
		if err := tx.ReleasePlace(ctx, b.Slot); err != nil {
			return fmt.Errorf("queue: release place of booking %d: %w", b.ID, err)
		}
	}
	service := ""
	if res, err := s.resource(b.Resource); err == nil {
		service = res.Service
	}
	j.emit(bookingEvent(to.Event(), s, b, service, actor, now))
	return nil
}

// CancelBooking cancels a HELD or BOOKED booking and gives its place
// back. The compare-and-set on its status makes a second cancel a refusal
// (ErrBookingState) that releases nothing.
func (e *Engine) CancelBooking(ctx context.Context, r BookingRequest) (Booking, error) {
	return idempotent(ctx, e, r.call("cancel-booking"), func(ctx context.Context, tx Tx, j *job, s *Site) (Booking, error) {
		b, err := findBooking(ctx, tx, s, r)
		if err != nil {
			return Booking{}, err
		}
		if b.Status != BookingBooked && b.Status != BookingHeld {
			return Booking{}, &BookingStateError{ID: b.ID, Status: b.Status, Action: "cancel"}
		}
		return *b, setBooking(ctx, tx, j, s, b, BookingCancelled, r.Device, e.clock())
	})
}

// Confirm turns a HELD booking whose hold has not run out into BOOKED.
func (e *Engine) Confirm(ctx context.Context, r BookingRequest) (Booking, error) {
	return idempotent(ctx, e, r.call("confirm"), func(ctx context.Context, tx Tx, j *job, s *Site) (Booking, error) {
		b, err := findBooking(ctx, tx, s, r)
		if err != nil {
			return Booking{}, err
		}
		now := e.clock()
		if b.Status != BookingHeld || !now.Before(b.HeldUntil) {
			return Booking{}, &BookingStateError{ID: b.ID, Status: b.Status, Action: "confirm (held until " + b.HeldUntil.In(s.Location).Format("15:04:05") + ")"}
		}
		b.HeldUntil = time.Time{}
		if err := setBooking(ctx, tx, j, s, b, BookingBooked, r.Device, now); err != nil {
			return Booking{}, err
		}
		j.events[len(j.events)-1].Detail = DetailConfirmed
		return *b, nil
	})
}

// CheckIn turns a BOOKED booking into a ticket of its resource's service.
// In the on-time window (Appointments.Early before the slot start to Late
// after it) the ticket is of class appointment, ordered among the
// appointments by slot time; later, a normal ticket or a refusal
// (LatePolicy); earlier, a refusal saying when to come back
// (CheckInEarlyError). Past the slot end and the missed grace the booking
// is missed.
func (e *Engine) CheckIn(ctx context.Context, r BookingRequest) (CheckIn, error) {
	ci, again, err := runIdempotent(ctx, e, r.call("check-in"), steps[CheckIn, CheckIn]{
		run: func(ctx context.Context, tx Tx, j *job, s *Site) (CheckIn, error) {
			return e.checkIn(ctx, tx, j, s, r)
		},
		again: func(ctx context.Context, tx Tx, s *Site, ci CheckIn) (CheckIn, error) {
			cur, err := tx.Ticket(ctx, ci.Position.Ticket.ID)
			if err != nil {
				return CheckIn{}, fmt.Errorf("queue: read checked-in ticket: %w", err)
			}
			pos, err := e.position(ctx, tx, s, cur)
			if err != nil {
				return CheckIn{}, err
			}
			pos.Ticket.Version = ci.Position.Ticket.Version // the check-in's CHECKED_IN event
			ci.Position = pos
			return ci, nil
		},
	})
	if err != nil {
		return CheckIn{}, err
	}
	if again != nil {
		ci = *again
	}
	ci.Position.Appointment = ci.Booking.Start
	return ci, nil
}

func (e *Engine) checkIn(ctx context.Context, tx Tx, j *job, s *Site, r BookingRequest) (CheckIn, error) {
	b, err := findBooking(ctx, tx, s, r)
	if err != nil {
		return CheckIn{}, err
	}
	if b.Status != BookingBooked {
		return CheckIn{}, &BookingStateError{ID: b.ID, Status: b.Status, Action: "check in", Code: b.Code}
	}
	rules := s.Appointments.withDefaults()
	now := e.clock()
	if open := b.Start.Add(-rules.Early); now.Before(open) {
		return CheckIn{}, &CheckInEarlyError{Code: b.Code, At: open.In(s.Location), Now: now}
	}
	if !now.Before(b.End.Add(rules.MissedGrace)) {
		return CheckIn{}, &CheckInLateError{ID: b.ID, Code: b.Code, Reason: "its slot ended at " + b.End.In(s.Location).Format("15:04")}
	}
	onTime := !now.After(b.Start.Add(rules.Late))
	class := ClassAppointment
	if !onTime {
		if rules.LatePolicy == LateRefuse {
			return CheckIn{}, &CheckInLateError{ID: b.ID, Code: b.Code, Reason: "the window closed at " + b.Start.Add(rules.Late).In(s.Location).Format("15:04")}
		}
		class = ClassNormal
	}
	res, err := s.resource(b.Resource)
	if err != nil {
		return CheckIn{}, err
	}
	t, err := e.issue(ctx, tx, j, s, IssueRequest{Request: r.Request, Service: res.Service, Class: class, slot: b.Start})
	if err != nil {
		return CheckIn{}, err
	}
	b.TicketID, b.Number = t.ID, t.Number
	if err := setBooking(ctx, tx, j, s, b, BookingCheckedIn, r.Device, now); err != nil {
		return CheckIn{}, err
	}
	pos, err := e.position(ctx, tx, s, &t)
	if err != nil {
		return CheckIn{}, err
	}
	return CheckIn{Booking: *b, Position: pos, OnTime: onTime}, nil
}

// Booking reads one booking of a site.
func (e *Engine) Booking(ctx context.Context, site string, id int64) (Booking, error) {
	return e.readBooking(ctx, site, BookingRequest{ID: id})
}

// BookingByCode reads the booking of a site with this code.
func (e *Engine) BookingByCode(ctx context.Context, site, code string) (Booking, error) {
	return e.readBooking(ctx, site, BookingRequest{Code: code})
}

func (e *Engine) readBooking(ctx context.Context, site string, r BookingRequest) (Booking, error) {
	s, err := e.Site(site)
	if err != nil {
		return Booking{}, err
	}
	b, err := read(ctx, e, func(ctx context.Context, tx Tx) (*Booking, error) {
		return findBooking(ctx, tx, s, r)
	})
	if err != nil {
		return Booking{}, err
	}
	return *b, nil
}

// Bookings lists the bookings f selects (f.Site is the site).
func (e *Engine) Bookings(ctx context.Context, f BookingFilter) ([]Booking, error) {
	if _, err := e.Site(f.Site); err != nil {
		return nil, err
	}
	return read(ctx, e, func(ctx context.Context, tx Tx) ([]Booking, error) {
		return tx.FindBookings(ctx, f)
	})
}

// sweepBookings marks the BOOKED bookings whose slot ended more than the
// missed grace ago MISSED, and expires the holds that ran out (giving
// their places back). It returns how many bookings it moved.
func (e *Engine) sweepBookings(ctx context.Context, s *Site) (int, error) {
	if len(s.Resources) == 0 {
		return 0, nil
	}
	return submit(ctx, e, &job{site: s.ID, lane: laneBulk}, func(ctx context.Context, tx Tx, j *job) (int, error) {
		n := 0
		now := e.clock()
		rules := s.Appointments.withDefaults()
		for _, sw := range []struct {
			f  BookingFilter
			to BookingStatus
		}{
			{BookingFilter{Site: s.ID, Statuses: []BookingStatus{BookingBooked}, EndBefore: now.Add(-rules.MissedGrace), Limit: 1000}, BookingMissed},
			{BookingFilter{Site: s.ID, Statuses: []BookingStatus{BookingHeld}, HeldBefore: now, Limit: 1000}, BookingExpired},
		} {
			found, err := tx.FindBookings(ctx, sw.f)
			if err != nil {
				return 0, fmt.Errorf("queue: sweep bookings of %s to %s: %w", s.ID, sw.to, err)
			}
			for i := range found {
				if err := setBooking(ctx, tx, j, s, &found[i], sw.to, "sweep", now); err != nil {
					return 0, err
				}
				n++
			}
		}
		return n, nil
	})
}
