package protocol_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// bookingEnv is a daemon at 10:00 in Shanghai whose site has resource dr
// ("Dr Li") with slots of one place from 10:15 to 12:00 today, the slots,
// and a function booking one for a patient.
func bookingEnv(t *testing.T) (*env, []queue.Slot, func(queue.Slot, string) queue.Booking) {
	t.Helper()
	site := testSite()
	site.Resources = []queue.Resource{{ID: "dr", Names: map[string]string{"en": "Dr Li"}, Service: "A", Schedule: queue.Schedule{
		Open: 10*time.Hour + 15*time.Minute, Close: 12 * time.Hour, Slot: 15 * time.Minute, Capacity: 1, DaysAhead: 1}}}
	d := protocoltest.New(t, site, testDevices())
	d.Clock = engineClock.Now
	en := &env{Daemon: d, t: t}
	en.Start()
	t.Cleanup(en.Stop)
	ctx := t.Context()
	if _, err := d.Engine.GenerateSlots(ctx); err != nil {
		t.Fatal(err)
	}
	slots, err := d.Engine.Slots(ctx, "hq", "dr", "2026-11-30")
	if err != nil || len(slots) < 4 {
		t.Fatalf("slots: %v, %v", slots, err)
	}
	return en, slots, func(slot queue.Slot, patient string) queue.Booking {
		t.Helper()
		b, _, err := d.Engine.Book(ctx, queue.BookRequest{Request: queue.Request{Site: "hq", Device: "api:test"}, Slot: slot.ID, Patient: patient})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

// TestCheckIn: a kiosk checks a booking in with its code and gets the
// appointment ticket, with the slot's start; too early, unknown and
// second check-ins are refused with their codes, the messages naming the
// code the kiosk sent; a retry of the same key
// gets the same ticket.
func TestCheckIn(t *testing.T) {
	en, slots, book := bookingEnv(t)
	soon, later := book(slots[0], "p1"), book(slots[3], "p2") // 10:15 and 11:00
	cl, _ := en.login("kiosk-1", 1)
	code := strings.ToLower(soon.Code[:4]) + "-" + soon.Code[4:]
	tk := cl.ticket(&wire.CheckIn{IdemKey: "ci-1", Code: code})
	if tk.Class != wire.ClassAppointment || tk.Status != wire.StatusWaiting || tk.AppointmentMS != soon.Start.UnixMilli() || tk.Service != "A" {
		t.Errorf("check-in ticket %+v", tk)
	}
	last, err := en.Engine.LastVersion(t.Context(), "hq")
	if err != nil {
		t.Fatal(err)
	}
	if tk.Version == 0 || tk.Version != uint64(last) {
		t.Errorf("check-in ticket version %d, want the site's last %d (its CHECKED_IN event)", tk.Version, last)
	}
	if again := cl.ticket(&wire.CheckIn{IdemKey: "ci-1", Code: code}); again.ID != tk.ID || again.Version != tk.Version {
		t.Errorf("retry gave ticket %d version %d, want %d version %d", again.ID, again.Version, tk.ID, tk.Version)
	}
	if e := cl.wantError(&wire.CheckIn{IdemKey: "ci-2", Code: soon.Code}, wire.ErrBookingNotActive.Code); !strings.Contains(e.Msg, "booking "+soon.Code+" is CHECKED_IN") {
		t.Errorf("second check-in: %q, want it to name the code sent, %s (§5a)", e.Msg, soon.Code)
	}
	e := cl.wantError(&wire.CheckIn{IdemKey: "ci-3", Code: later.Code}, wire.ErrCheckInEarly.Code)
	if !strings.Contains(e.Msg, "come back at 10:30") {
		t.Errorf("early: %q", e.Msg)
	}
	cl.wantError(&wire.CheckIn{IdemKey: "ci-4", Code: "ZZZZZZZZ"}, wire.ErrUnknownBooking.Code)
	kp, _ := en.login("display-1", 1)
	kp.wantError(&wire.CheckIn{IdemKey: "ci-5", Code: later.Code}, wire.ErrForbidden.Code)
}

// TestBookingEvents: a console's SNAPSHOT lists today's appointments per
// resource and its subscription delivers the booking events, with the
// resource, booking and slot and nothing of the patient; a keypad's
// subscription to its counter never gets them (PROTOCOL.md section 5a).
func TestBookingEvents(t *testing.T) {
	en, slots, book := bookingEnv(t)
	book(slots[1], "patient-ref-1")
	con, _ := en.login("console-1", 1)
	snap, ok := con.do(&wire.Subscribe{Snapshot: true}).(*wire.Snapshot)
	if !ok {
		t.Fatal("subscribe: no snapshot")
	}
	if want := (wire.ResourceInfo{ID: "dr", Name: "Dr Li", Service: "A", Booked: 1}); len(snap.Resources) != 1 || snap.Resources[0] != want {
		t.Errorf("snapshot resources %+v, want %+v", snap.Resources, want)
	}
	kp, _ := en.login("keypad-1", 1)
	if _, ok := kp.do(&wire.Subscribe{Counters: []uint32{1}, FromVersion: snap.Version}).(*wire.OK); !ok {
		t.Fatal("keypad subscribe: no OK")
	}
	b := book(slots[0], "patient-ref-2")
	cl, _ := en.login("kiosk-1", 1)
	tk := cl.ticket(&wire.CheckIn{IdemKey: "ci-1", Code: b.Code})
	evs := con.eventsUntil(snap.Version + 3) // BOOKED, ISSUED, CHECKED_IN
	if len(evs) != 3 || evs[0].Kind != wire.EventBookingBooked || evs[1].Kind != wire.EventIssued || evs[2].Kind != wire.EventBookingCheckedIn {
		t.Fatalf("console events %+v, want booking_booked, issued, booking_checked_in", evs)
	}
	want := wire.Event{Version: snap.Version + 1, Site: "hq", Kind: wire.EventBookingBooked, Service: "A", Actor: "api:test",
		TimeMS: evs[0].TimeMS, ServiceDay: "2026-11-30", Resource: "dr", BookingID: uint64(b.ID), SlotMS: b.Start.UnixMilli()}
	if *evs[0] != want {
		t.Errorf("booking event %+v, want %+v", *evs[0], want)
	}
	if e := evs[2]; e.Number != tk.Number || e.TicketID != tk.ID || e.Resource != "dr" || e.BookingID != uint64(b.ID) {
		t.Errorf("check-in event %+v, want ticket %s of booking %d", e, tk.Number, b.ID)
	}
	for _, e := range evs {
		if s := fmt.Sprintf("%+v", *e); strings.Contains(s, "patient-ref") || strings.Contains(s, b.Code) {
			t.Errorf("event %s names the patient or the booking code", s)
		}
	}
	kevs := kp.eventsUntil(snap.Version + 2) // the ticket's ISSUED only
	if len(kevs) != 1 || kevs[0].Kind != wire.EventIssued {
		t.Errorf("keypad events %+v, want the ISSUED only", kevs)
	}
}
