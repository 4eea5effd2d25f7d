package config

import (
	"regexp"
	"strings"
	"time"
)

// Resource is something patients book at a site: a doctor, a room, a
// vaccination line. A booking checked in becomes a ticket of Service.
type Resource struct {
	// ID is unique in the site, [a-z0-9-]{1,32} (it appears in URLs).
	ID string `mapstructure:"id"`
	// Name is optional; when set it needs every site language.
	Name Names `mapstructure:"name"`
	// Service is the site service whose queue a checked-in patient joins.
	Service  string   `mapstructure:"service"`
	Schedule Schedule `mapstructure:"schedule"`
}

// Schedule says when a resource has slots.
type Schedule struct {
	// Days are written mon..sun; empty means every day.
	Days []time.Weekday `mapstructure:"days"`
	// Open is the first slot's start, Close the end of the last one.
	Open  Clock `mapstructure:"open"`
	Close Clock `mapstructure:"close"`
	// Slot is the length of one slot (required, whole minutes).
	Slot time.Duration `mapstructure:"slot"`
	// Capacity is the places of one slot (default 1).
	Capacity int `mapstructure:"capacity"`
	// DaysAhead is how far ahead slots open (default 14); the slots of a
	// day open DaysAhead days before it at OpensAt (default 07:00).
	DaysAhead int   `mapstructure:"days_ahead"`
	OpensAt   Clock `mapstructure:"opens_at"`
}

// LatePolicy is what a check-in after the on-time window gets.
type LatePolicy string

// The late check-in policies.
const (
	LateNormal LatePolicy = "normal"
	LateRefuse LatePolicy = "refuse"
)

// Appointments are a site's booking rules.
type Appointments struct {
	// CheckInEarly and CheckInLate bound the on-time window around a
	// slot's start (defaults 30m and 10m): inside it the ticket is of class
	// appointment; before it the check-in is refused with the time to come
	// back; after it Late applies.
	CheckInEarly time.Duration `mapstructure:"check_in_early"`
	CheckInLate  time.Duration `mapstructure:"check_in_late"`
	// Late is normal (a normal ticket) or refuse (default normal).
	Late LatePolicy `mapstructure:"late"`
	// MissedGrace is how long after its slot's end a booking not checked
	// in becomes MISSED (default 15m).
	MissedGrace time.Duration `mapstructure:"missed_grace"`
	// HoldFor is how long a HELD booking waits for its confirmation
	// (default 5m).
	HoldFor time.Duration `mapstructure:"hold_for"`
	// PatientRate booking requests per PatientWindow are allowed per
	// patient over HTTP (default 5 per 10s); more are answered 429.
	PatientRate   int           `mapstructure:"patient_rate"`
	PatientWindow time.Duration `mapstructure:"patient_window"`
	// RequireIdempotencyKey refuses a booking request over HTTP without an
	// Idempotency-Key (400 bad_request). Absent means off, so that
	// configurations written before it keep working; the shipped
	// configurations, and new ones, set it on.
	RequireIdempotencyKey bool `mapstructure:"require_idempotency_key"`
}

// Appointment defaults.
const (
	DefaultCapacity      = 1
	DefaultDaysAhead     = 14
	DefaultCheckInEarly  = 30 * time.Minute
	DefaultCheckInLate   = 10 * time.Minute
	DefaultMissedGrace   = 15 * time.Minute
	DefaultHoldFor       = 5 * time.Minute
	DefaultPatientRate   = 5
	DefaultPatientWindow = 10 * time.Second
)

// DefaultOpensAt is when a day's slots open, DaysAhead days before it.
var DefaultOpensAt = Clock{Hour: 7}

var reResourceID = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)

// applyAppointmentDefaults fills the unset keys of site k.
func applyAppointmentDefaults(s *Site, k string, isSet func(string) bool) {
	a := &s.Appointments
	ak := k + ".appointments"
	orDefault(isSet, ak+".check_in_early", &a.CheckInEarly, DefaultCheckInEarly)
	orDefault(isSet, ak+".check_in_late", &a.CheckInLate, DefaultCheckInLate)
	orDefault(isSet, ak+".missed_grace", &a.MissedGrace, DefaultMissedGrace)
	orDefault(isSet, ak+".hold_for", &a.HoldFor, DefaultHoldFor)
	orDefault(isSet, ak+".patient_window", &a.PatientWindow, DefaultPatientWindow)
	orDefault(isSet, ak+".late", &a.Late, LateNormal)
	orDefault(isSet, ak+".patient_rate", &a.PatientRate, DefaultPatientRate)
	for i := range s.Resources {
		sk := keyf("%s.resources[%d].schedule", k, i)
		sc := &s.Resources[i].Schedule
		orDefault(isSet, sk+".capacity", &sc.Capacity, DefaultCapacity)
		orDefault(isSet, sk+".days_ahead", &sc.DaysAhead, DefaultDaysAhead)
		orDefault(isSet, sk+".opens_at", &sc.OpensAt, DefaultOpensAt)
	}
}

// validateAppointments checks the resources against the services of
// codeAt, their schedules and the booking rules.
func (s *Site) validateAppointments(k string, langs []string, codeAt map[string]int, ps *problems) {
	ids := newIDList(k+".resources", "resource id", reResourceID, "must be 1 to 32 lowercase letters, digits and dashes")
	for i := range s.Resources {
		r := &s.Resources[i]
		rk := ids.check(i, r.ID, ps)
		checkNames(rk+".name", r.Name, langs, false, ps)
		if _, ok := codeAt[r.Service]; !ok {
			ps.add(rk+".service", "unknown service %q in site %q", r.Service, s.ID)
		}
		validateSchedule(rk+".schedule", &r.Schedule, ps)
	}
	if _, ok := s.Classes["appointment"]; len(s.Resources) > 0 && !ok {
		ps.add(k+".classes", "class \"appointment\" is required when the site has resources (checked-in bookings get it)")
	}
	a := &s.Appointments
	ak := k + ".appointments"
	for _, d := range []struct {
		key string
		val time.Duration
	}{{"check_in_early", a.CheckInEarly}, {"check_in_late", a.CheckInLate}, {"missed_grace", a.MissedGrace},
		{"hold_for", a.HoldFor}, {"patient_window", a.PatientWindow}} {
		if d.val <= 0 || d.val > 24*time.Hour {
			ps.add(ak+"."+d.key, "must be positive and at most 24h, got %s", d.val)
		}
	}
	switch a.Late {
	case LateNormal, LateRefuse:
	default:
		ps.add(ak+".late", "must be normal or refuse, got %q", a.Late)
	}
	if a.PatientRate < 1 || a.PatientRate > 10000 {
		ps.add(ak+".patient_rate", "must be 1..10000, got %d", a.PatientRate)
	}
}

func validateSchedule(k string, sc *Schedule, ps *problems) {
	seen := map[time.Weekday]bool{}
	for j, d := range sc.Days {
		if seen[d] {
			ps.add(keyf("%s.days[%d]", k, j), "day %s listed twice", strings.ToLower(d.String()[:3]))
		}
		seen[d] = true
	}
	switch {
	case sc.Slot <= 0 || sc.Slot%time.Minute != 0:
		ps.add(k+".slot", "required: a positive number of whole minutes, got %s", sc.Slot)
	case sc.Open.Minutes() >= sc.Close.Minutes():
		ps.add(k+".close", "must be after open %s, got %s", sc.Open, sc.Close)
	case time.Duration(sc.Close.Minutes()-sc.Open.Minutes())*time.Minute < sc.Slot:
		ps.add(k+".slot", "%s does not fit between open %s and close %s", sc.Slot, sc.Open, sc.Close)
	}
	if sc.Capacity < 1 || sc.Capacity > 10000 {
		ps.add(k+".capacity", "must be 1..10000, got %d", sc.Capacity)
	}
	if sc.DaysAhead < 0 || sc.DaysAhead > 366 {
		ps.add(k+".days_ahead", "must be 0..366, got %d", sc.DaysAhead)
	}
	if sc.OpensAt.Minutes() >= 24*60 {
		ps.add(k+".opens_at", "must be before 24:00, got %s", sc.OpensAt)
	}
}
