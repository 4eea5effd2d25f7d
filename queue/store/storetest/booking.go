package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// BookingSite is TestSite with bookable resources, every weekday:
//   - dr-li (service A): 09:00-12:00, 15-minute slots of 1 place
//   - dr-wu (service A): 09:00-12:00, 20-minute slots of 1 place
//   - vacc (service E): 08:00-16:00, 30-minute slots of 10 places
//
// slots open 14 days ahead at 07:00; check-in from 30 minutes before the
// slot to 10 minutes after it (late: a normal ticket), missed 15 minutes
// after its end, holds of 5 minutes.
func BookingSite() queue.Site {
	s := TestSite()
	weekdays := []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}
	sched := func(open, close, slot time.Duration, capacity int) queue.Schedule {
		return queue.Schedule{Days: weekdays, Open: open, Close: close, Slot: slot, Capacity: capacity, DaysAhead: 14, OpensAt: 7 * time.Hour}
	}
	s.Resources = []queue.Resource{
		{ID: "dr-li", Service: "A", Schedule: sched(9*time.Hour, 12*time.Hour, 15*time.Minute, 1)},
		{ID: "dr-wu", Service: "A", Schedule: sched(9*time.Hour, 12*time.Hour, 20*time.Minute, 1)},
		{ID: "vacc", Service: "E", Schedule: sched(8*time.Hour, 16*time.Hour, 30*time.Minute, 10)},
	}
	s.Appointments = queue.Appointments{Early: 30 * time.Minute, Late: 10 * time.Minute, LatePolicy: queue.LateNormal,
		MissedGrace: 15 * time.Minute, HoldFor: 5 * time.Minute}
	return s
}

// tuesday is the day after the suite's start, in the site's zone.
var tuesday = monday9.AddDate(0, 0, 1)

// RunBooking is the conformance suite of appointments: every state and
// refusal, the concurrency rules and the sweeps, on a store of open.
func RunBooking(t *testing.T, open func(t *testing.T) queue.Store) {
	runSuite(t, open, []subtest{
		{"SlotGeneration", testSlotGeneration},
		{"ScheduleChange", testScheduleChange},
		{"States", testBookingStates},
		{"Refusals", testBookingRefusals},
		{"HoldExpiry", testHoldExpiry},
		{"Missed", testMissed},
		{"CheckIn", testCheckIn},
		{"CheckInLateRefused", testCheckInLateRefused},
		{"OneOfTwenty", func(t *testing.T, open openFunc) { testBookRace(t, open, "dr-li", 20, 1) }},
		{"TenOfFifty", func(t *testing.T, open openFunc) { testBookRace(t, open, "vacc", 50, 10) }},
		{"PatientRace", testPatientRace},
		{"SameKeyTwenty", testSameKey},
		{"DoubleCancel", testDoubleCancel},
		{"Check", testBookingCheck},
		{"CheckBookingDay", testCheckBookingDay},
		{"SnapshotScopes", testSnapshotScopes},
		{"SweepBatches", testSweepBatches},
	})
}

// testSnapshotScopes: Snapshot counts the bookings of every day from today
// on, SnapshotOf with ResourcesOfDay today's alone (what a device's
// SNAPSHOT lists), with ResourcesNone none (the HTTP snapshot); with
// resources named, those alone (read one by one, or all and filtered
// past queue.MaxSnapshotResources); a booking shows in the next one.
func testSnapshotScopes(t *testing.T, open func(t *testing.T) queue.Store) {
	en := newBookingEnv(t, open)
	en.mustBook(en.slot("dr-li", monday9, 10, 0).ID, "p1")
	en.mustBook(en.slot("dr-wu", tuesday, 10, 0).ID, "p2")
	today, tomorrow := monday9.Format(time.DateOnly), tuesday.Format(time.DateOnly)
	many := []string{"vacc"}
	for i := range queue.MaxSnapshotResources {
		many = append(many, fmt.Sprintf("gone-%d", i))
	}
	many = append(many, "dr-wu")
	for _, c := range []struct {
		scope queue.ResourceScope
		only  []string
		want  []queue.ResourceDay
	}{
		{queue.ResourcesFromDay, nil, []queue.ResourceDay{{Resource: "dr-li", Day: today, Booked: 1}, {Resource: "dr-wu", Day: tomorrow, Booked: 1}}},
		{queue.ResourcesOfDay, nil, []queue.ResourceDay{{Resource: "dr-li", Day: today, Booked: 1}}},
		{queue.ResourcesNone, nil, nil},
		{queue.ResourcesFromDay, []string{"dr-wu", "vacc", "dr-wu"}, []queue.ResourceDay{{Resource: "dr-wu", Day: tomorrow, Booked: 1}}},
		{queue.ResourcesOfDay, []string{"dr-wu"}, nil},
		{queue.ResourcesFromDay, many, []queue.ResourceDay{{Resource: "dr-wu", Day: tomorrow, Booked: 1}}},
	} {
		snap, err := en.e.SnapshotOf(en.ctx, "hq", c.scope, c.only...)
		if err != nil || !slices.Equal(snap.Resources, c.want) {
			t.Errorf("scope %d of %d resources: %+v, %v; want %+v", c.scope, len(c.only), snap.Resources, err, c.want)
		}
	}
	// The figures of the last snapshot serve the next at its version
	// only: a booking moves the version, and the next reads it.
	en.mustBook(en.slot("dr-li", monday9, 11, 0).ID, "p3")
	snap, err := en.e.SnapshotOf(en.ctx, "hq", queue.ResourcesOfDay)
	if want := []queue.ResourceDay{{Resource: "dr-li", Day: today, Booked: 2}}; err != nil || !slices.Equal(snap.Resources, want) {
		t.Errorf("after another booking: %+v, %v; want %+v", snap.Resources, err, want)
	}
}

func newBookingEnv(t *testing.T, open func(t *testing.T) queue.Store, sites ...queue.Site) *env {
	t.Helper()
	if len(sites) == 0 {
		sites = []queue.Site{BookingSite()}
	}
	en := newEnv(t, open, sites...)
	if _, err := en.e.GenerateSlots(en.ctx); err != nil {
		t.Fatalf("generate slots: %v", err)
	}
	return en
}

// slot finds the slot of resource starting at local time hh:mm on day.
func (en *env) slot(resource string, day time.Time, hh, mm int) queue.Slot {
	en.t.Helper()
	slots, err := en.e.Slots(en.ctx, "hq", resource, day.Format(time.DateOnly))
	if err != nil {
		en.t.Fatalf("slots of %s: %v", resource, err)
	}
	want := time.Date(day.Year(), day.Month(), day.Day(), hh, mm, 0, 0, shanghai)
	for _, s := range slots {
		if s.Start.Equal(want) {
			return s
		}
	}
	en.t.Fatalf("no slot of %s at %s among %d", resource, want, len(slots))
	return queue.Slot{}
}

func (en *env) book(slot int64, patient string) (queue.Booking, error) {
	b, _, err := en.e.Book(en.ctx, queue.BookRequest{Request: en.req(), Slot: slot, Patient: patient})
	return b, err
}

func (en *env) mustBook(slot int64, patient string) queue.Booking {
	en.t.Helper()
	b, err := en.book(slot, patient)
	if err != nil {
		en.t.Fatalf("book slot %d for %s: %v", slot, patient, err)
	}
	return b
}

// booked is a slot's Booked as stored now.
func (en *env) booked(resource string, day time.Time, hh, mm int) int {
	en.t.Helper()
	return en.slot(resource, day, hh, mm).Booked
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: got %v, want %v", what, err, want)
	}
}

// bookingEvents lists the types of the site's booking events.
func (en *env) bookingEvents() []queue.EventType {
	en.t.Helper()
	var out []queue.EventType
	for _, e := range en.events() {
		if e.Type.IsBooking() {
			out = append(out, e.Type)
		}
	}
	return out
}

func testSlotGeneration(t *testing.T, open func(t *testing.T) queue.Store) {
	en := newBookingEnv(t, open)
	// Monday 09:00 (after 07:00): slots up to 14 days ahead. Today dr-li
	// has 09:15..11:45 left (11), Tuesday all 12.
	for _, c := range []struct {
		resource string
		day      time.Time
		want     int
	}{{"dr-li", monday9, 11}, {"dr-li", tuesday, 12}, {"dr-wu", tuesday, 9}, {"vacc", tuesday, 16},
		{"dr-li", monday9.AddDate(0, 0, 14), 12}, {"dr-li", monday9.AddDate(0, 0, 15), 0}, {"dr-li", monday9.AddDate(0, 0, 5), 0}} {
		slots, err := en.e.Slots(en.ctx, "hq", c.resource, c.day.Format(time.DateOnly))
		if err != nil || len(slots) != c.want {
			t.Errorf("slots of %s on %s: %d, %v; want %d", c.resource, c.day.Format("Mon 2006-01-02"), len(slots), err, c.want)
		}
	}
	all, err := en.e.Slots(en.ctx, "hq", "", tuesday.Format(time.DateOnly))
	if err != nil || len(all) != 12+9+16 {
		t.Errorf("every slot on Tuesday: %d, %v; want 37", len(all), err)
	}
	for _, rerun := range []string{"GenerateSlots", "Sweep"} {
		n, err := en.e.GenerateSlots(en.ctx)
		if rerun == "Sweep" {
			n, err = en.e.Sweep(en.ctx)
		}
		if err != nil || n != 0 {
			t.Errorf("%s again: %d, %v; want nothing created", rerun, n, err)
		}
	}
	// The next morning at 07:00 the 15th day opens, once.
	en.clock.Set(time.Date(2026, 12, 1, 7, 0, 0, 0, shanghai))
	if n, err := en.e.Sweep(en.ctx); err != nil || n != 12+9+16 {
		t.Errorf("sweep at 07:00: %d, %v; want the 37 slots of the new day", n, err)
	}
	if n, err := en.e.Sweep(en.ctx); err != nil || n != 0 {
		t.Errorf("sweep again: %d, %v; want 0", n, err)
	}
	if _, err := en.e.Slots(en.ctx, "hq", "nobody", "2026-12-01"); !errors.Is(err, queue.ErrUnknownResource) {
		t.Errorf("slots of an unknown resource: %v", err)
	}
	if _, err := en.e.Slots(en.ctx, "hq", "", "1 Dec"); !errors.Is(err, queue.ErrBadRequest) {
		t.Errorf("slots of a bad date: %v", err)
	}
}

func testScheduleChange(t *testing.T, open func(t *testing.T) queue.Store) {
	en := newBookingEnv(t, open)
	b := en.mustBook(en.slot("dr-li", tuesday, 9, 15).ID, "p1")
	// dr-li now sees patients every 30 minutes, two at a time: the :15 and
	// :45 slots close (the booking stands), :00 and :30 take 2.
	site := BookingSite()
	site.Resources[0].Schedule.Slot, site.Resources[0].Schedule.Capacity = 30*time.Minute, 2
	_ = en.e.Close(en.ctx)
	en.start([]queue.Site{site})
	n, err := en.e.GenerateSlots(en.ctx)
	if err != nil || n == 0 {
		t.Fatalf("generate after the change: %d, %v", n, err)
	}
	closed := en.slot("dr-li", tuesday, 9, 15)
	if !closed.Closed || closed.Booked != 1 {
		t.Errorf("slot 09:15 after the change = %+v, want closed with its booking", closed)
	}
	if got, _ := en.e.Booking(en.ctx, "hq", b.ID); got.Status != queue.BookingBooked {
		t.Errorf("booking in the closed slot: %s, want BOOKED", got.Status)
	}
	if s := en.slot("dr-li", tuesday, 9, 30); s.Capacity != 2 || s.Closed {
		t.Errorf("slot 09:30 after the change = %+v, want capacity 2, open", s)
	}
	_, err = en.book(closed.ID, "p2")
	wantErr(t, "book a closed slot", err, queue.ErrSlotClosed)
	if n, err := en.e.GenerateSlots(en.ctx); err != nil || n != 0 {
		t.Errorf("generate again: %d, %v; want 0", n, err)
	}
}

func testBookingStates(t *testing.T, open func(t *testing.T) queue.Store) {
	en := newBookingEnv(t, open)
	sl := en.slot("dr-li", tuesday, 10, 0)
	b := en.mustBook(sl.ID, "patient-1")
	if b.Status != queue.BookingBooked || len(b.Code) != queue.CodeLen || b.ID == 0 || b.Resource != "dr-li" || !b.Start.Equal(sl.Start) {
		t.Errorf("booking = %+v", b)
	}
	if got, err := en.e.BookingByCode(en.ctx, "hq", b.Code[:4]+"-"+b.Code[4:]); err != nil || got.ID != b.ID {
		t.Errorf("booking by code with a dash: %+v, %v", got, err)
	}
	if n := en.booked("dr-li", tuesday, 10, 0); n != 1 {
		t.Errorf("booked after booking: %d", n)
	}
	c, err := en.e.CancelBooking(en.ctx, queue.BookingRequest{Request: en.req(), ID: b.ID})
	if err != nil || c.Status != queue.BookingCancelled {
		t.Fatalf("cancel: %+v, %v", c, err)
	}
	_, err = en.e.CancelBooking(en.ctx, queue.BookingRequest{Request: en.req(), ID: b.ID})
	wantErr(t, "second cancel", err, queue.ErrBookingState)
	if n := en.booked("dr-li", tuesday, 10, 0); n != 0 {
		t.Errorf("booked after two cancels: %d, want 0", n)
	}
	h, _, err := en.e.Book(en.ctx, queue.BookRequest{Request: en.req(), Slot: sl.ID, Patient: "patient-2", Hold: true})
	if err != nil || h.Status != queue.BookingHeld || h.HeldUntil.IsZero() {
		t.Fatalf("hold: %+v, %v", h, err)
	}
	cf, err := en.e.Confirm(en.ctx, queue.BookingRequest{Request: en.req(), Code: h.Code})
	if err != nil || cf.Status != queue.BookingBooked {
		t.Errorf("confirm: %+v, %v", cf, err)
	}
	_, err = en.e.Confirm(en.ctx, queue.BookingRequest{Request: en.req(), Code: h.Code})
	wantErr(t, "confirm twice", err, queue.ErrBookingState)
	want := []queue.EventType{queue.EventBookingBooked, queue.EventBookingCancelled, queue.EventBookingHeld, queue.EventBookingBooked}
	if got := en.bookingEvents(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("booking events %v, want %v", got, want)
	}
}

func testBookingRefusals(t *testing.T, open func(t *testing.T) queue.Store) {
	en := newBookingEnv(t, open)
	sl := en.slot("dr-li", tuesday, 10, 0)
	en.mustBook(sl.ID, "p1")
	_, err := en.book(sl.ID, "p2")
	wantErr(t, "full slot", err, queue.ErrSlotFull)
	vacc := en.slot("vacc", tuesday, 10, 0)
	en.mustBook(vacc.ID, "p3")
	_, err = en.book(vacc.ID, "p3")
	wantErr(t, "same patient twice in a slot", err, queue.ErrAlreadyBooked)
	// dr-wu 10:00-10:20 overlaps p1's dr-li 10:00-10:15; 10:20 does not.
	_, err = en.book(en.slot("dr-wu", tuesday, 10, 0).ID, "p1")
	wantErr(t, "overlapping booking", err, queue.ErrOverlap)
	en.mustBook(en.slot("dr-wu", tuesday, 10, 20).ID, "p1")
	_, err = en.book(999999, "p4")
	wantErr(t, "unknown slot", err, queue.ErrSlotNotFound)
	_, err = en.book(sl.ID, "")
	wantErr(t, "no patient", err, queue.ErrBadRequest)
	en.clock.Set(tuesday.Add(time.Hour + time.Minute))
	_, err = en.book(vacc.ID, "p5")
	wantErr(t, "a slot that started", err, queue.ErrSlotClosed)
	_, err = en.e.CancelBooking(en.ctx, queue.BookingRequest{Request: en.req(), ID: 999999})
	wantErr(t, "cancel an unknown booking", err, queue.ErrBookingNotFound)
	_, err = en.e.CheckIn(en.ctx, queue.BookingRequest{Request: en.req(), Code: "ZZZZZZZZ"})
	wantErr(t, "check in an unknown code", err, queue.ErrBookingNotFound)
	if n := en.booked("dr-li", tuesday, 10, 0); n != 1 {
		t.Errorf("booked after the refusals: %d, want 1", n)
	}
}

func testHoldExpiry(t *testing.T, open func(t *testing.T) queue.Store) {
	en := newBookingEnv(t, open)
	sl := en.slot("dr-li", tuesday, 11, 0)
	h, _, err := en.e.Book(en.ctx, queue.BookRequest{Request: en.req(), Slot: sl.ID, Patient: "p1", Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = en.book(sl.ID, "p2")
	wantErr(t, "book a slot held", err, queue.ErrSlotFull)
	en.clock.Add(5*time.Minute + time.Second)
	_, err = en.e.Confirm(en.ctx, queue.BookingRequest{Request: en.req(), ID: h.ID})
	wantErr(t, "confirm after the hold ran out", err, queue.ErrBookingState)
	if n, err := en.e.Sweep(en.ctx); err != nil || n != 1 {
		t.Errorf("sweep: %d, %v; want the hold expired", n, err)
	}
	if got, _ := en.e.Booking(en.ctx, "hq", h.ID); got.Status != queue.BookingExpired {
		t.Errorf("hold after the sweep: %s, want EXPIRED", got.Status)
	}
	if n := en.booked("dr-li", tuesday, 11, 0); n != 0 {
		t.Errorf("booked after the expiry: %d, want 0", n)
	}
	en.mustBook(sl.ID, "p2")
	if n, _ := en.e.Sweep(en.ctx); n != 0 {
		t.Errorf("sweep again moved %d", n)
	}
}

func testMissed(t *testing.T, open func(t *testing.T) queue.Store) {
	en := newBookingEnv(t, open)
	b := en.mustBook(en.slot("dr-li", tuesday, 9, 0).ID, "p1")
	en.clock.Set(tuesday.Add(29 * time.Minute)) // slot end 09:15 + 15 min grace - 1 min
	if _, err := en.e.Sweep(en.ctx); err != nil {
		t.Errorf("sweep inside the grace: %v", err)
	}
	if got, _ := en.e.Booking(en.ctx, "hq", b.ID); got.Status != queue.BookingBooked {
		t.Errorf("status inside the grace %s, want BOOKED", got.Status)
	}
	en.clock.Set(tuesday.Add(31 * time.Minute))
	_, err := en.e.CheckIn(en.ctx, queue.BookingRequest{Request: en.req(), Code: b.Code})
	wantErr(t, "check in past the grace", err, queue.ErrCheckInLate)
	if n, err := en.e.Sweep(en.ctx); err != nil || n != 1 {
		t.Errorf("sweep past the grace: %d, %v; want 1 (the slots of the day were made by the first sweep)", n, err)
	}
	got, _ := en.e.Booking(en.ctx, "hq", b.ID)
	if got.Status != queue.BookingMissed {
		t.Errorf("status %s, want MISSED", got.Status)
	}
	if evs := en.bookingEvents(); evs[len(evs)-1] != queue.EventBookingMissed {
		t.Errorf("last booking event %v", evs)
	}
	_, err = en.e.CancelBooking(en.ctx, queue.BookingRequest{Request: en.req(), ID: b.ID})
	wantErr(t, "cancel a missed booking", err, queue.ErrBookingState)
}

func testCheckIn(t *testing.T, open func(t *testing.T) queue.Store) {
	en := newBookingEnv(t, open)
	early := en.mustBook(en.slot("dr-li", tuesday, 9, 30).ID, "p1")
	later := en.mustBook(en.slot("dr-li", tuesday, 9, 45).ID, "p2")
	late := en.mustBook(en.slot("dr-wu", tuesday, 9, 0).ID, "p3")
	en.clock.Set(tuesday.Add(-time.Hour)) // 08:00
	_, err := en.e.CheckIn(en.ctx, queue.BookingRequest{Request: en.req(), Code: early.Code})
	var ee *queue.CheckInEarlyError
	if !errors.As(err, &ee) || !errors.Is(err, queue.ErrCheckInEarly) || ee.At.Format("15:04") != "09:00" {
		t.Errorf("check in at 08:00 for 09:30: %v, want come back at 09:00", err)
	}
	en.clock.Set(tuesday.Add(16 * time.Minute)) // 09:16: 09:30 and 09:45 on time, 09:00 late
	normal := en.issue("A", "")
	ciLater, err := en.e.CheckIn(en.ctx, queue.BookingRequest{Request: en.req(), Code: later.Code})
	if err != nil || !ciLater.OnTime || ciLater.Position.Ticket.Class != queue.ClassAppointment || ciLater.Booking.Status != queue.BookingCheckedIn {
		t.Fatalf("check in on time: %+v, %v", ciLater, err)
	}
	ciEarly, err := en.e.CheckIn(en.ctx, queue.BookingRequest{Request: en.req(), ID: early.ID})
	if err != nil || ciEarly.Position.Ticket.Service != "A" || ciEarly.Booking.TicketID != ciEarly.Position.Ticket.ID {
		t.Fatalf("check in on time: %+v, %v", ciEarly, err)
	}
	if ciEarly.Position.Ahead != 0 || ciLater.Position.Ahead != 0 {
		t.Errorf("ahead of the 09:30 appointment: %d, want 0 (slot order, before normal tickets)", ciEarly.Position.Ahead)
	}
	// dr-wu 09:00 + 10 minutes: 09:16 is late, a normal ticket.
	ciLate, err := en.e.CheckIn(en.ctx, queue.BookingRequest{Request: en.req(), Code: late.Code})
	if err != nil || ciLate.OnTime || ciLate.Position.Ticket.Class != queue.ClassNormal {
		t.Errorf("late check-in: %+v, %v; want a normal ticket", ciLate, err)
	}
	_, err = en.e.CheckIn(en.ctx, queue.BookingRequest{Request: en.req(), Code: later.Code})
	wantErr(t, "check in twice", err, queue.ErrBookingState)
	_, err = en.e.CancelBooking(en.ctx, queue.BookingRequest{Request: en.req(), ID: later.ID})
	wantErr(t, "cancel a checked-in booking", err, queue.ErrBookingState)
	order := []string{ciEarly.Position.Ticket.Number, ciLater.Position.Ticket.Number, normal.Number, ciLate.Position.Ticket.Number}
	for i, want := range order {
		if got := en.next("1").Number; got != want {
			t.Errorf("call %d: %s, want %s (order %v)", i+1, got, want, order)
		}
		en.must("start", "1")
		en.must("done", "1")
	}
}

func testCheckInLateRefused(t *testing.T, open func(t *testing.T) queue.Store) {
	site := BookingSite()
	site.Appointments.LatePolicy = queue.LateRefuse
	en := newBookingEnv(t, open, site)
	b := en.mustBook(en.slot("dr-li", tuesday, 9, 0).ID, "p1")
	en.clock.Set(tuesday.Add(11 * time.Minute))
	_, err := en.e.CheckIn(en.ctx, queue.BookingRequest{Request: en.req(), Code: b.Code})
	wantErr(t, "late check-in refused", err, queue.ErrCheckInLate)
	if got, _ := en.e.Booking(en.ctx, "hq", b.ID); got.Status != queue.BookingBooked {
		t.Errorf("after a refused check-in: %s, want BOOKED", got.Status)
	}
}

// testBookRace: n patients book one slot of the given capacity at once;
// exactly capacity succeed, the others are refused as full.
func testBookRace(t *testing.T, open func(t *testing.T) queue.Store, resource string, n, capacity int) {
	en := newBookingEnv(t, open)
	sl := en.slot(resource, tuesday, 10, 0)
	var ok, full atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := en.book(sl.ID, fmt.Sprintf("patient-%d", i))
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, queue.ErrSlotFull):
				full.Add(1)
			default:
				t.Errorf("book %d: %v", i, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if ok.Load() != int64(capacity) || full.Load() != int64(n-capacity) {
		t.Errorf("%d booked, %d refused as full; want %d and %d", ok.Load(), full.Load(), capacity, n-capacity)
	}
	if got := en.booked(resource, tuesday, 10, 0); got != capacity {
		t.Errorf("slot booked = %d, want %d", got, capacity)
	}
	bs, err := en.e.Bookings(en.ctx, queue.BookingFilter{Site: "hq", Slot: sl.ID})
	if err != nil || len(bs) != capacity {
		t.Errorf("bookings of the slot: %d, %v; want %d", len(bs), err, capacity)
	}
}

// testPatientRace: ten patients each book three slots that overlap (dr-li
// 10:00-10:15, dr-wu 10:00-10:20, vacc 10:00-10:30) at once, through two
// engines that follow each other over the store (two daemons), which also
// race for the places: each transaction's check sees the bookings of the
// patient the other committed, so every patient ends with one booking of
// the three, never two, and every other request is refused as full or
// overlapping.
func testPatientRace(t *testing.T, open func(t *testing.T) queue.Store) {
	en := newBookingEnv(t, open)
	var engines []*queue.Engine
	for range 2 {
		engines = append(engines, StartEngine(t, queue.Opts{Store: en.store, Sites: []queue.Site{BookingSite()}, Clock: en.clock.Now,
			Batch: 32, Follow: true, PollInterval: 2 * time.Millisecond, PollIdle: 2 * time.Millisecond}))
	}
	var slots []int64
	for _, r := range []string{"dr-li", "dr-wu", "vacc"} {
		slots = append(slots, en.slot(r, tuesday, 10, 0).ID)
	}
	const patients = 10
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range patients * len(slots) {
		wg.Go(func() {
			<-start
			r := queue.BookRequest{Request: en.req(), Slot: slots[i%len(slots)], Patient: fmt.Sprintf("patient-%d", i/len(slots))}
			_, _, err := engines[i%2].Book(en.ctx, r)
			if err != nil && !errors.Is(err, queue.ErrSlotFull) && !errors.Is(err, queue.ErrOverlap) {
				t.Errorf("book %d for %s: %v", r.Slot, r.Patient, err)
			}
		})
	}
	close(start)
	wg.Wait()
	for p := range patients {
		patient := fmt.Sprintf("patient-%d", p)
		bs, err := en.e.Bookings(en.ctx, queue.BookingFilter{Site: "hq", Patient: patient})
		if err != nil || len(bs) != 1 {
			t.Errorf("%s holds %d bookings (%v) of three overlapping slots, want 1", patient, len(bs), err)
		}
	}
}

func testSameKey(t *testing.T, open func(t *testing.T) queue.Store) {
	en := newBookingEnv(t, open)
	sl := en.slot("vacc", tuesday, 10, 0)
	r := queue.BookRequest{Request: queue.Request{Site: "hq", Device: "api:test", Key: "retry-1"}, Slot: sl.ID, Patient: "p1"}
	var wg sync.WaitGroup
	ids := make([]int64, 20)
	var replays atomic.Int64
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, replayed, err := en.e.Book(en.ctx, r)
			if err != nil {
				t.Errorf("book %d: %v", i, err)
			}
			if replayed {
				replays.Add(1)
			}
			ids[i] = b.ID
		}()
	}
	wg.Wait()
	for i, id := range ids {
		if id != ids[0] || id == 0 {
			t.Fatalf("booking ids %v differ at %d", ids, i)
		}
	}
	if replays.Load() != 19 {
		t.Errorf("%d replays, want 19", replays.Load())
	}
	if got := en.booked("vacc", tuesday, 10, 0); got != 1 {
		t.Errorf("slot booked = %d, want 1", got)
	}
	r.Slot = en.slot("vacc", tuesday, 11, 0).ID
	_, _, err := en.e.Book(en.ctx, r)
	wantErr(t, "key reused for another slot", err, queue.ErrKeyReused)
}

func testDoubleCancel(t *testing.T, open func(t *testing.T) queue.Store) {
	en := newBookingEnv(t, open)
	b := en.mustBook(en.slot("vacc", tuesday, 10, 0).ID, "p1")
	en.mustBook(en.slot("vacc", tuesday, 10, 0).ID, "p2")
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := en.e.CancelBooking(en.ctx, queue.BookingRequest{Request: en.req(), ID: b.ID})
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, queue.ErrBookingState):
				refused.Add(1)
			default:
				t.Errorf("cancel: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 || refused.Load() != 9 {
		t.Errorf("%d cancels succeeded, %d refused; want 1 and 9", ok.Load(), refused.Load())
	}
	if got := en.booked("vacc", tuesday, 10, 0); got != 1 {
		t.Errorf("slot booked = %d, want 1 (released once)", got)
	}
}

// testCheckBookingDay: a day with every end a booking can have (held,
// confirmed, expired, cancelled, checked in on time and late, missed) and
// an appointment ticket called passes Check: booking events, with or
// without a ticket, are no "event names a ticket that does not exist".
func testCheckBookingDay(t *testing.T, open func(t *testing.T) queue.Store) {
	en := newBookingEnv(t, open)
	ss, ok := en.store.(txSQLStore)
	if !ok {
		t.Skip("store has no Check")
	}
	PlayBookingDay(t, en.e, en.clock)
	r, err := ss.Check(en.ctx, sqlstore.CheckOpts{MaxViolations: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Errorf("violations after a day of bookings:\n%s", strings.Join(r.Violations, "\n"))
	}
	if r.Tickets != 4 {
		t.Errorf("%d tickets, want the 4 check-ins", r.Tickets)
	}
}

// testBookingCheck: a day of bookings made by the engine passes Check;
// then each booking invariant is broken behind the store's back and
// reported, the patient by its hash only.
func testBookingCheck(t *testing.T, open func(t *testing.T) queue.Store) {
	en := newBookingEnv(t, open)
	ss, ok := en.store.(txSQLStore)
	if !ok {
		t.Skip("store has no Check")
	}
	vacc := en.slot("vacc", tuesday, 9, 0)
	b1 := en.mustBook(vacc.ID, "patient-secret-1")
	b2 := en.mustBook(vacc.ID, "patient-secret-2")
	if _, err := en.e.CancelBooking(en.ctx, queue.BookingRequest{Request: en.req(), ID: b2.ID}); err != nil {
		t.Fatal(err)
	}
	en.clock.Set(tuesday.Add(-10 * time.Minute))
	ci, err := en.e.CheckIn(en.ctx, queue.BookingRequest{Request: en.req(), Code: b1.Code})
	if err != nil {
		t.Fatal(err)
	}
	report := func(step string, want ...string) {
		t.Helper()
		r, err := ss.Check(en.ctx, sqlstore.CheckOpts{MaxViolations: 100})
		if err != nil {
			t.Fatalf("%s: Check: %v", step, err)
		}
		text := strings.Join(r.Violations, "\n")
		if len(want) == 0 && text != "" {
			t.Fatalf("%s: violations:\n%s", step, text)
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: report lacks %q:\n%s", step, w, text)
			}
		}
		if strings.Contains(text, "patient-secret") {
			t.Errorf("%s: report shows a patient in clear:\n%s", step, text)
		}
	}
	report("consistent")
	d, db := ss.Dialect(), ss.DB()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(en.ctx, d.Rebind(q), args...); err != nil {
			t.Fatalf("corrupt: %s: %v", q, err)
		}
	}
	exec("UPDATE slots SET booked = 3 WHERE id = ?", vacc.ID)
	report("count off", fmt.Sprintf("slot %d (start 2026-12-01 01:00Z): booked 3 of capacity 10, but 1 bookings hold a place", vacc.ID))
	drop := "DROP INDEX bookings_patient_slot_uq"
	if d.Name == "mysql" {
		drop += " ON bookings"
	}
	exec(drop)
	exec("UPDATE bookings SET patient = ?, status = 'BOOKED' WHERE id = ?", "patient-secret-1", b2.ID)
	report("patient twice", fmt.Sprintf("slot %d: patient %s holds 2 places", vacc.ID, queue.PatientHash("patient-secret-1")))
	exec("DELETE FROM tickets WHERE id = ?", ci.Position.Ticket.ID)
	report("ticket gone", fmt.Sprintf("booking %d is checked in as ticket %s (id %d), which does not exist", b1.ID, ci.Position.Ticket.Number, ci.Position.Ticket.ID))
}
