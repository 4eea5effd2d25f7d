package view

import (
	"github.com/nowserving/nowserving/queue"
)

// Resource is the picture of one bookable resource's slots of a service
// day, from its BOOKING_* events (counted on the day of the slot, not of the
// event: a booking made a week ahead counts on its day):
//   - Booked: bookings holding a place that are not checked in or missed
//     yet (HELD or BOOKED);
//   - CheckedIn, Missed: bookings that became a ticket, or were missed;
//   - Cancelled: bookings cancelled, or holds that expired.
type Resource struct {
	ID        string
	Booked    int
	CheckedIn int
	Missed    int
	Cancelled int
}

// Resources are the bookable resources of the site on its day (Day), the
// configured ones in order, then any other seen in the events.
func (s *Site) Resources() []Resource {
	day := s.bookings[s.Day]
	out := make([]Resource, 0, len(s.resources))
	for _, id := range s.resources {
		r := Resource{ID: id}
		if c := day[id]; c != nil {
			r = *c
		}
		out = append(out, r)
	}
	return out
}

// restoreBookings takes the figures of one resource and day from a
// snapshot.
func (s *Site) restoreBookings(rd queue.ResourceDay) {
	if rd.Day < s.Day {
		return
	}
	*s.resource(rd.Day, rd.Resource) = Resource{ID: rd.Resource, Booked: rd.Booked, CheckedIn: rd.CheckedIn,
		Missed: rd.Missed, Cancelled: rd.Cancelled}
}

// resource returns the figures of a resource on a slot day, adding them
// when first seen.
func (s *Site) resource(day, id string) *Resource {
	if s.bookings == nil {
		s.bookings = map[string]map[string]*Resource{}
	}
	m := s.bookings[day]
	if m == nil {
		m = map[string]*Resource{}
		s.bookings[day] = m
	}
	r := m[id]
	if r == nil {
		r = &Resource{ID: id}
		m[id] = r
		s.knowResource(id)
	}
	return r
}

// applyBooking counts a booking event on its slot's day. Days before the
// site's day are dropped by newDay (see forgetBookings).
func (s *Site) applyBooking(e *queue.Event) {
	if e.Day != "" && e.Day < s.Day {
		return
	}
	r := s.resource(e.Day, e.Resource)
	switch e.Type {
	case queue.EventBookingHeld:
		r.Booked++
	case queue.EventBookingBooked:
		if e.Detail != queue.DetailConfirmed {
			r.Booked++
		}
	case queue.EventBookingCancelled, queue.EventBookingExpired:
		r.Booked--
		r.Cancelled++
	case queue.EventBookingCheckedIn:
		r.Booked--
		r.CheckedIn++
	case queue.EventBookingMissed:
		r.Booked--
		r.Missed++
	}
}

func (s *Site) knowResource(id string) {
	for _, r := range s.resources {
		if r == id {
			return
		}
	}
	s.resources = append(s.resources, id)
}

// forgetBookings drops the booking figures of days before day.
func (s *Site) forgetBookings(day string) {
	for d := range s.bookings {
		if d < day {
			delete(s.bookings, d)
		}
	}
}

// TakeBookings replaces the booking figures of s with those of o, a
// picture of the same site at the same version: a replay of the last
// events, which took the place of a picture started from a snapshot, keeps
// the bookings the snapshot counted, made before the events it replayed.
func (s *Site) TakeBookings(o *Site) {
	s.bookings = o.cloneBookings()
	for _, id := range o.resources {
		s.knowResource(id)
	}
}

// cloneBookings deep-copies the booking figures.
func (s *Site) cloneBookings() map[string]map[string]*Resource {
	if s.bookings == nil {
		return nil
	}
	out := make(map[string]map[string]*Resource, len(s.bookings))
	for d, m := range s.bookings {
		c := make(map[string]*Resource, len(m))
		for id, r := range m {
			v := *r
			c[id] = &v
		}
		out[d] = c
	}
	return out
}
