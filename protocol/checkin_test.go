package protocol_test

import (
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// TestCheckIn: a kiosk checks a booking in with its code and gets the
// appointment ticket, with the slot's start; too early, unknown and
// second check-ins are refused with their codes; a retry of the same key
// gets the same ticket.
func TestCheckIn(t *testing.T) {
	site := testSite()
	site.Resources = []queue.Resource{{ID: "dr", Service: "A", Schedule: queue.Schedule{
		Open: 10*time.Hour + 15*time.Minute, Close: 12 * time.Hour, Slot: 15 * time.Minute, Capacity: 1, DaysAhead: 1}}}
	d := protocoltest.New(t, site, testDevices())
	d.Clock = engineClock.Now // 10:00 in Shanghai
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
	book := func(slot queue.Slot, patient string) queue.Booking {
		b, _, err := d.Engine.Book(ctx, queue.BookRequest{Request: queue.Request{Site: "hq", Device: "api:test"}, Slot: slot.ID, Patient: patient})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	soon, later := book(slots[0], "p1"), book(slots[3], "p2") // 10:15 and 11:00
	cl, _ := en.login("kiosk-1", 1)
	code := strings.ToLower(soon.Code[:4]) + "-" + soon.Code[4:]
	tk := cl.ticket(&wire.CheckIn{IdemKey: "ci-1", Code: code})
	if tk.Class != wire.ClassAppointment || tk.Status != wire.StatusWaiting || tk.AppointmentMS != soon.Start.UnixMilli() || tk.Service != "A" {
		t.Errorf("check-in ticket %+v", tk)
	}
	last, err := d.Engine.LastVersion(ctx, "hq")
	if err != nil {
		t.Fatal(err)
	}
	if tk.Version == 0 || tk.Version != uint64(last) {
		t.Errorf("check-in ticket version %d, want the site's last %d (its CHECKED_IN event)", tk.Version, last)
	}
	if again := cl.ticket(&wire.CheckIn{IdemKey: "ci-1", Code: code}); again.ID != tk.ID || again.Version != tk.Version {
		t.Errorf("retry gave ticket %d version %d, want %d version %d", again.ID, again.Version, tk.ID, tk.Version)
	}
	cl.wantError(&wire.CheckIn{IdemKey: "ci-2", Code: soon.Code}, wire.ErrBookingNotActive.Code)
	e := cl.wantError(&wire.CheckIn{IdemKey: "ci-3", Code: later.Code}, wire.ErrCheckInEarly.Code)
	if !strings.Contains(e.Msg, "come back at 10:30") {
		t.Errorf("early: %q", e.Msg)
	}
	cl.wantError(&wire.CheckIn{IdemKey: "ci-4", Code: "ZZZZZZZZ"}, wire.ErrUnknownBooking.Code)
	kp, _ := en.login("display-1", 1)
	kp.wantError(&wire.CheckIn{IdemKey: "ci-5", Code: later.Code}, wire.ErrForbidden.Code)
}
