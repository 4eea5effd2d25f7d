package queue

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Resource is something of a site that patients book: a doctor, a room, a
// vaccination line. A booking checked in becomes a ticket of Service.
type Resource struct {
	ID       string
	Names    map[string]string
	Service  string
	Schedule Schedule
}

// Schedule says when a resource has slots: on Days (empty: every day),
// from Open to Close (offsets from local midnight), one slot every Slot,
// each of Capacity places. The slots of a day open DaysAhead days before it,
// at OpensAt local time (DaysAhead 14 and OpensAt 7h: the slots of the 15th
// open on the 1st at 07:00).
type Schedule struct {
	Days      []time.Weekday
	Open      time.Duration
	Close     time.Duration
	Slot      time.Duration
	Capacity  int
	DaysAhead int
	OpensAt   time.Duration
}

// LatePolicy is what a check-in after the on-time window gets.
type LatePolicy string

// Late check-in policies.
const (
	LateNormal LatePolicy = "normal" // a normal ticket of the resource's service
	LateRefuse LatePolicy = "refuse" // refused: the patient books again
)

// Appointments are a site's booking rules.
type Appointments struct {
	// Early and Late bound the on-time check-in window around the slot
	// start: from Start-Early to Start+Late the ticket is of class
	// appointment. Before it the check-in is refused with the time to come
	// back (ErrCheckInEarly); after it LatePolicy applies.
	Early, Late time.Duration
	LatePolicy  LatePolicy
	// MissedGrace is how long after the slot end a booking not checked in
	// becomes MISSED.
	MissedGrace time.Duration
	// HoldFor is how long a HELD booking waits for its confirmation before
	// the sweep expires it.
	HoldFor time.Duration
	// PatientRate booking requests per PatientWindow are allowed per
	// patient by the front of the HTTP API (package booking); 0: no limit.
	PatientRate   int
	PatientWindow time.Duration
	// RequireKey refuses a booking request over HTTP without an
	// idempotency key.
	RequireKey bool
}

// Default booking rules, used where a site leaves them zero.
const (
	DefaultCheckInEarly = 30 * time.Minute
	DefaultCheckInLate  = 10 * time.Minute
	DefaultMissedGrace  = 15 * time.Minute
	DefaultHoldFor      = 5 * time.Minute
)

func (a Appointments) withDefaults() Appointments {
	if a.Early <= 0 {
		a.Early = DefaultCheckInEarly
	}
	if a.Late <= 0 {
		a.Late = DefaultCheckInLate
	}
	if a.LatePolicy == "" {
		a.LatePolicy = LateNormal
	}
	if a.MissedGrace <= 0 {
		a.MissedGrace = DefaultMissedGrace
	}
	if a.HoldFor <= 0 {
		a.HoldFor = DefaultHoldFor
	}
	return a
}

// Slot is one bookable time of a resource, a row created ahead by
// GenerateSlots. Booked counts the bookings holding a place in it (HELD,
// BOOKED, CHECKED_IN, MISSED); the database keeps it at most Capacity.
type Slot struct {
	ID       int64
	Site     string
	Resource string
	Start    time.Time
	End      time.Time
	Capacity int
	Booked   int
	// Closed is a slot the schedule no longer has: it takes no new
	// booking, its bookings stand.
	Closed bool
}

// Free is the number of places left.
func (s *Slot) Free() int { return max(0, s.Capacity-s.Booked) }

// BookingStatus is the state of a booking.
type BookingStatus string

// Booking states.
const (
	BookingHeld      BookingStatus = "HELD"
	BookingBooked    BookingStatus = "BOOKED"
	BookingCancelled BookingStatus = "CANCELLED"
	BookingCheckedIn BookingStatus = "CHECKED_IN"
	BookingMissed    BookingStatus = "MISSED"
	BookingExpired   BookingStatus = "EXPIRED"
)

// HoldsPlace reports whether a booking in status s counts in its slot's
// Booked: every state but CANCELLED and EXPIRED, the two that release it.
func (s BookingStatus) HoldsPlace() bool {
	return s != BookingCancelled && s != BookingExpired && s != ""
}

// PlaceStatuses are the states that hold a place (see HoldsPlace).
var PlaceStatuses = []BookingStatus{BookingHeld, BookingBooked, BookingCheckedIn, BookingMissed}

// Booking is one patient's place in a slot.
type Booking struct {
	ID       int64
	Site     string
	Resource string
	Slot     int64
	Start    time.Time // the slot's
	End      time.Time
	// Patient is the hospital's opaque reference: never parsed, never
	// logged (PatientHash is).
	Patient string
	// Code is the short code the patient types or scans at a kiosk.
	Code      string
	Status    BookingStatus
	HeldUntil time.Time // HELD only
	TicketID  int64     // CHECKED_IN only
	Number    string    // the ticket's number, CHECKED_IN only
	CreatedAt time.Time
	UpdatedAt time.Time
	Device    string
	IdemKey   string
}

// PatientHash is what logs show of a patient reference: the first 12 hex
// digits of its SHA-256.
func PatientHash(patient string) string {
	h := sha256.Sum256([]byte(patient))
	return hex.EncodeToString(h[:6])
}

// Booking event types, in the site's version sequence with the ticket
// events: each is named after the state it puts its booking in.
const (
	EventBookingHeld      = EventType(bookingEvents + BookingHeld)
	EventBookingBooked    = EventType(bookingEvents + BookingBooked)
	EventBookingCancelled = EventType(bookingEvents + BookingCancelled)
	EventBookingCheckedIn = EventType(bookingEvents + BookingCheckedIn)
	EventBookingMissed    = EventType(bookingEvents + BookingMissed)
	EventBookingExpired   = EventType(bookingEvents + BookingExpired)
)

// bookingEvents begins the name of every booking event type.
const bookingEvents = "BOOKING_"

// Event is the type of the event of a booking's move to state s.
func (s BookingStatus) Event() EventType { return EventType(bookingEvents + s) }

// DetailConfirmed is the Detail of the BOOKING_BOOKED event of a confirmed
// hold (its place was counted by BOOKING_HELD).
const DetailConfirmed = "confirmed"

// IsBooking reports whether t is a booking event.
func (t EventType) IsBooking() bool { return strings.HasPrefix(string(t), bookingEvents) }

// bookingEvent is the event of booking b's change. Service is the
// resource's service and Day the slot's service day, so the reducer counts
// it on the right day; on CHECKED_IN TicketID and Number name the ticket.
func bookingEvent(typ EventType, s *Site, b *Booking, service, actor string, at time.Time) Event {
	return Event{Site: s.ID, Type: typ, BookingID: b.ID, Slot: b.Slot, Resource: b.Resource, SlotAt: b.Start,
		Service: service, Issuer: service, Day: s.Day(b.Start), TicketID: b.TicketID, Number: b.Number,
		Actor: actor, At: at}
}

// resource finds a resource of the site.
func (s *Site) resource(id string) (*Resource, error) {
	for i := range s.Resources {
		if s.Resources[i].ID == id {
			return &s.Resources[i], nil
		}
	}
	return nil, fmt.Errorf("%w: %q at site %s", ErrUnknownResource, id, s.ID)
}

// validateResources is Validate's check of the resources and their
// schedules.
func (s *Site) validateResources(services map[string]bool) error {
	seen := map[string]bool{}
	for _, r := range s.Resources {
		if !codeRE.MatchString(r.ID) || seen[r.ID] {
			return fmt.Errorf("queue: site %s: resource id %q invalid or repeated", s.ID, r.ID)
		}
		seen[r.ID] = true
		if !services[r.Service] {
			return fmt.Errorf("queue: site %s resource %s: unknown service %q", s.ID, r.ID, r.Service)
		}
		sc := r.Schedule
		switch {
		case sc.Slot <= 0 || sc.Slot > 24*time.Hour:
			return fmt.Errorf("queue: site %s resource %s: slot length %v outside (0, 24h]", s.ID, r.ID, sc.Slot)
		case sc.Open < 0 || sc.Close > 24*time.Hour || sc.Open+sc.Slot > sc.Close:
			return fmt.Errorf("queue: site %s resource %s: hours %v-%v hold no slot of %v", s.ID, r.ID, sc.Open, sc.Close, sc.Slot)
		case sc.Capacity < 1:
			return fmt.Errorf("queue: site %s resource %s: capacity %d below 1", s.ID, r.ID, sc.Capacity)
		case sc.DaysAhead < 0 || sc.DaysAhead > 366:
			return fmt.Errorf("queue: site %s resource %s: days ahead %d outside 0..366", s.ID, r.ID, sc.DaysAhead)
		case sc.OpensAt < 0 || sc.OpensAt >= 24*time.Hour:
			return fmt.Errorf("queue: site %s resource %s: opening time %v outside one day", s.ID, r.ID, sc.OpensAt)
		}
	}
	switch s.Appointments.LatePolicy {
	case "", LateNormal, LateRefuse:
	default:
		return fmt.Errorf("queue: site %s: late check-in policy %q: want normal or refuse", s.ID, s.Appointments.LatePolicy)
	}
	return nil
}
