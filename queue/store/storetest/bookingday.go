package storetest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// BookingDayWant is what PlayBookingDay leaves per resource on Tuesday
// 2026-12-01 (the slots' day), as a report counts it: bookings made,
// cancelled, checked in on time and late, missed.
var BookingDayWant = map[string][5]int{
	"dr-li": {4, 1, 1, 1, 1},
	"dr-wu": {1, 0, 1, 0, 0},
	"vacc":  {2, 1, 1, 0, 0},
}

// PlayBookingDay runs a day of appointments at BookingSite on e, whose
// clock is c: every end a booking can have, on Tuesday 2026-12-01.
//   - dr-li 09:00 checked in on time, 09:15 checked in late (a normal
//     ticket), 09:30 cancelled, 09:45 missed;
//   - dr-wu 09:00 held then confirmed and checked in, 09:20 held and
//     expired (never booked);
//   - vacc 10:00 two bookings, one cancelled and one checked in;
//   - dr-li on Wednesday 09:00, booked (counted on Wednesday).
//
// The appointment ticket of dr-li 09:00 is then called at counter 1.
func PlayBookingDay(t testing.TB, e *queue.Engine, c *Clock) {
	t.Helper()
	ctx := context.Background()
	tue := time.Date(2026, 12, 1, 0, 0, 0, 0, shanghai)
	at := func(d time.Time, hh, mm int) time.Time {
		return d.Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute)
	}
	n := 0
	req := func() queue.Request {
		n++
		return queue.Request{Site: "hq", Device: "test", Key: "day-" + strconv.Itoa(n)}
	}
	slot := func(resource string, d time.Time, hh, mm int) int64 {
		slots, err := e.Slots(ctx, "hq", resource, d.Format(time.DateOnly))
		if err != nil {
			t.Fatalf("slots of %s: %v", resource, err)
		}
		for _, s := range slots {
			if s.Start.Equal(at(d, hh, mm)) {
				return s.ID
			}
		}
		t.Fatalf("no slot of %s at %02d:%02d", resource, hh, mm)
		return 0
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	book := func(resource string, d time.Time, hh, mm int, patient string, hold bool) queue.Booking {
		t.Helper()
		b, _, err := e.Book(ctx, queue.BookRequest{Request: req(), Slot: slot(resource, d, hh, mm), Patient: patient, Hold: hold})
		must("book "+resource+" for "+patient, err)
		return b
	}
	checkIn := func(b queue.Booking, when time.Time) {
		t.Helper()
		c.Fix(when)
		_, err := e.CheckIn(ctx, queue.BookingRequest{Request: req(), Code: b.Code})
		must("check in "+b.Code, err)
	}
	cancel := func(b queue.Booking) {
		t.Helper()
		_, err := e.CancelBooking(ctx, queue.BookingRequest{Request: req(), ID: b.ID})
		must("cancel booking", err)
	}
	c.Fix(at(tue, 7, 30))
	_, err := e.GenerateSlots(ctx)
	must("generate slots", err)
	li9 := book("dr-li", tue, 9, 0, "p1", false)
	li915 := book("dr-li", tue, 9, 15, "p2", false)
	cancel(book("dr-li", tue, 9, 30, "p3", false))
	book("dr-li", tue, 9, 45, "p4", false)
	wu9 := book("dr-wu", tue, 9, 0, "p5", true)
	_, err = e.Confirm(ctx, queue.BookingRequest{Request: req(), ID: wu9.ID})
	must("confirm", err)
	book("dr-wu", tue, 9, 20, "p6", true)
	v1 := book("vacc", tue, 10, 0, "p7", false)
	cancel(book("vacc", tue, 10, 0, "p8", false))
	book("dr-li", tue.AddDate(0, 0, 1), 9, 0, "p9", false)
	checkIn(li9, at(tue, 8, 50))
	checkIn(wu9, at(tue, 8, 55))
	c.Fix(at(tue, 9, 1))
	_, err = e.CallNext(ctx, queue.CounterRequest{Request: req(), Counter: "1"})
	must("call next", err)
	checkIn(li915, at(tue, 9, 30))
	checkIn(v1, at(tue, 9, 45))
	c.Fix(at(tue, 10, 20)) // dr-li 09:45 ended 10:00, grace 15 min; the hold ran out long ago
	_, err = e.Sweep(ctx)
	must("sweep", err)
}
