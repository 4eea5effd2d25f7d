package view_test

import (
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/view"
)

// TestBookings: booking events count on the day of their slot, per
// resource, and a confirmed hold is not counted twice.
func TestBookings(t *testing.T) {
	def := queue.Site{ID: "h", Location: time.UTC, Resources: []queue.Resource{{ID: "dr-li"}, {ID: "vacc"}}}
	mon := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	tue := mon.AddDate(0, 0, 1)
	ev := func(v int64, typ queue.EventType, res string, at time.Time, detail string) queue.Event {
		return queue.Event{Site: "h", Version: v, Type: typ, Resource: res, Day: "2026-12-01", At: at, Detail: detail, BookingID: v}
	}
	evs := []queue.Event{
		ev(1, queue.EventBookingBooked, "dr-li", mon, ""),
		ev(2, queue.EventBookingHeld, "dr-li", mon, ""),
		ev(3, queue.EventBookingBooked, "dr-li", mon, queue.DetailConfirmed),
		ev(4, queue.EventBookingHeld, "vacc", mon, ""),
		ev(5, queue.EventBookingExpired, "vacc", mon, ""),
		ev(6, queue.EventBookingBooked, "vacc", mon, ""),
		ev(7, queue.EventBookingCheckedIn, "dr-li", tue, ""),
		ev(8, queue.EventBookingMissed, "dr-li", tue.Add(2*time.Hour), ""),
		ev(9, queue.EventBookingCancelled, "vacc", tue.Add(2*time.Hour), ""),
	}
	s := view.Replay(def, view.Opts{}, evs[:6])
	if got := s.Resources(); got[0].Booked != 0 {
		t.Errorf("Monday shows Tuesday's bookings: %+v", got)
	}
	s = view.Replay(def, view.Opts{}, evs)
	want := []view.Resource{{ID: "dr-li", Booked: 0, CheckedIn: 1, Missed: 1}, {ID: "vacc", Booked: 0, Cancelled: 2}}
	got := s.Resources()
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("resources on Tuesday = %+v, want %+v", got, want)
	}
	c := s.Clone()
	s.Apply(&queue.Event{Site: "h", Version: 10, Type: queue.EventBookingBooked, Resource: "vacc", Day: "2026-12-01", At: tue.Add(3 * time.Hour)})
	if c.Resources()[1].Booked != 0 || s.Resources()[1].Booked != 1 {
		t.Errorf("clone shares booking figures: clone %+v, site %+v", c.Resources(), s.Resources())
	}
	s.Apply(&queue.Event{Site: "h", Version: 11, Type: queue.EventCalled, TicketID: 1, At: tue.AddDate(0, 0, 1)})
	if r := s.Resources(); r[0] != (view.Resource{ID: "dr-li"}) {
		t.Errorf("the next day still shows %+v", r)
	}
}
