package tui

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/nowserving/nowserving/internal/testkit/golden"
	"github.com/nowserving/nowserving/internal/testkit/screen"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/view"
)

// bookingEv is a BOOKING_* EVENT of resource res's slot at slot, which is
// on the service day slotDay.
func bookingEv(v uint64, kind wire.EventKind, res string, id uint64, slot time.Time, slotDay string, at time.Time) *wire.Event {
	e := &wire.Event{Version: v, Site: "hospital", Kind: kind, Service: "A", Actor: "api:his", TimeMS: at.UnixMilli(),
		ServiceDay: day, Resource: res, BookingID: id, SlotMS: slot.UnixMilli()}
	if slotDay != day {
		e.TicketDay = slotDay
	}
	return e
}

// apptModel is the test console at t0 with today's appointments of two
// resources from its snapshot, then a morning's booking events.
func apptModel(t *testing.T) *Model {
	t.Helper()
	m := newTestModel(t, &recConn{}, 0)
	snap := snapshot()
	snap.Resources = []wire.ResourceInfo{
		{ID: "dr-li", Name: "Dr Li", Service: "A", Booked: 3, CheckedIn: 1},
		{ID: "vacc", Name: "Vaccination", Service: "E", Booked: 10, Cancelled: 1},
	}
	feed(m, SnapshotMsg{Snapshot: snap})
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	slot := t0.Add(30 * time.Minute)
	checkIn := bookingEv(14, wire.EventBookingCheckedIn, "dr-li", 7, slot, day, at(4))
	checkIn.Number, checkIn.TicketID, checkIn.Actor = "A010", ticketID("A010"), "kiosk-1"
	for _, e := range []*wire.Event{
		bookingEv(11, wire.EventBookingBooked, "dr-li", 20, slot.Add(time.Hour), day, at(1)),
		// A week ahead: it counts on its own day.
		bookingEv(12, wire.EventBookingBooked, "dr-li", 21, slot.AddDate(0, 0, 7), "2026-12-07", at(2)),
		ev(13, wire.EventIssued, "A010", "A", 0, wire.StatusWaiting, at(4), "kiosk-1"),
		checkIn,
		bookingEv(15, wire.EventBookingHeld, "vacc", 22, slot, day, at(5)),
		// Confirmed: counted once, when held.
		bookingEv(16, wire.EventBookingConfirmed, "vacc", 22, slot, day, at(6)),
		bookingEv(17, wire.EventBookingCancelled, "vacc", 9, slot, day, at(7)),
		bookingEv(18, wire.EventBookingMissed, "dr-li", 5, t0.Add(-time.Hour), day, at(8)),
	} {
		feed(m, EventMsg{Event: e})
	}
	feed(m, TickMsg(at(9)))
	return m
}

// TestAppointments: the console counts today's appointments per resource
// from the snapshot and the booking events after it, as the daemon does,
// and shows them in a table; an event stream line names the resource and
// the slot, never a patient.
func TestAppointments(t *testing.T) {
	m := apptModel(t)
	want := []view.Resource{
		{ID: "dr-li", Booked: 2, CheckedIn: 2, Missed: 1},
		{ID: "vacc", Booked: 10, Cancelled: 2},
	}
	got := m.site().v.Resources()
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("resources = %+v, want %+v", got, want)
	}
	v := m.View()
	for _, line := range []string{"dr-li  Dr Li", "vacc  Vaccination"} {
		if !strings.Contains(v, line) {
			t.Errorf("screen lacks the row of %q:\n%s", line, v)
		}
	}
	if l := screen.Line(v, "dr-li  Dr Li"); len(strings.Fields(l)) < 7 || strings.Join(strings.Fields(l)[3:7], " ") != "2 2 1 0" {
		t.Errorf("row of dr-li = %q, want booked 2, checked in 2, missed 1, cancelled 0", l)
	}
	if l := screen.Line(v, "checked_in"); !strings.Contains(l, "dr-li 10:30 A010") {
		t.Errorf("event line of the check-in = %q, want the resource, slot time and ticket", l)
	}
	golden.Assert(t, filepath.Join("testdata", "appointments-80x24.golden"), []byte(v+"\n"))

	// A site without resources has no appointments table.
	if v := busyModel(t, 80, 24, 0).View(); strings.Contains(v, "APPOINTMENTS") {
		t.Errorf("a site without resources shows appointments:\n%s", v)
	}
}

// TestEndToEndAppointments: a console on a real daemon counts the
// appointments made, cancelled and checked in while it watches, and a
// console started afterwards gets the same figures from its snapshot.
func TestEndToEndAppointments(t *testing.T) {
	now := time.Now().UTC()
	site := queue.Site{
		ID: "hq", Location: time.UTC,
		Services: []queue.Service{{Code: "A", Prefix: "A", Width: 3, AvgService: 5 * time.Minute}},
		Counters: []queue.Counter{{ID: "1", Services: []queue.CounterService{{Service: "A", Weight: 1}}}},
		Resources: []queue.Resource{{ID: "dr-li", Names: map[string]string{"en": "Dr Li"}, Service: "A",
			Schedule: queue.Schedule{Open: 0, Close: 24 * time.Hour, Slot: time.Hour, Capacity: 5, DaysAhead: 2}}},
		// Any slot of the next hour or two is on time.
		Appointments: queue.Appointments{Early: 3 * time.Hour, Late: time.Hour},
	}
	var devs []protocol.Device
	for id, role := range map[string]wire.Role{"kiosk-1": wire.RoleKiosk, "console-1": wire.RoleConsole} {
		devs = append(devs, protocol.Device{ID: id, Role: role, Site: "hq", Secret: secret(id)})
	}
	pd := protocoltest.New(t, site, devs)
	pd.Start()
	t.Cleanup(pd.Stop)
	d := &daemon{pd}
	ctx := context.Background()
	if _, err := d.Engine.GenerateSlots(ctx); err != nil {
		t.Fatal(err)
	}
	slotOf := func(at time.Time) queue.Slot {
		t.Helper()
		slots, err := d.Engine.Slots(ctx, "hq", "dr-li", at.Format(time.DateOnly))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range slots {
			if s.Start.After(now) {
				return s
			}
		}
		t.Fatalf("no slot after %s on %s", now, at.Format(time.DateOnly))
		return queue.Slot{}
	}
	// Near midnight the next slot is tomorrow's: so be it, today then has
	// none, and the figures are those of tomorrow's slot on its day.
	if now.Add(time.Hour).Day() != now.Day() {
		t.Skip("too close to midnight UTC for a slot today")
	}
	today, later := slotOf(now), slotOf(now.AddDate(0, 0, 1))
	n := 0
	book := func(s queue.Slot, patient string) queue.Booking {
		t.Helper()
		n++
		b, _, err := d.Engine.Book(ctx, queue.BookRequest{Request: queue.Request{Site: "hq", Device: "api", Key: "b" + strconv.Itoa(n)},
			Slot: s.ID, Patient: patient})
		if err != nil {
			t.Fatalf("book %d for %s: %v", s.ID, patient, err)
		}
		return b
	}
	book(today, "p-before") // before the console starts: in its snapshot

	lc := startConsole(t, d)
	row := func(v string) string { return strings.Join(strings.Fields(screen.Line(v, "dr-li  Dr Li")), " ") }
	lc.waitFor(t, "the snapshot's appointments", func(v string) bool { return row(v) == "dr-li Dr Li 1 0 0 0" })

	b := book(today, "p-kiosk")
	c := book(today, "p-cancel")
	book(later, "p-tomorrow") // counts tomorrow
	if _, err := d.Engine.CancelBooking(ctx, queue.BookingRequest{Request: queue.Request{Site: "hq", Device: "api", Key: "c1"}, ID: c.ID}); err != nil {
		t.Fatal(err)
	}
	kiosk := d.dial(t, "kiosk-1", wire.RoleKiosk)
	tk, err := kiosk.CheckIn(ctx, b.Code, client.TicketOpts{})
	if err != nil {
		t.Fatalf("check in: %v", err)
	}
	lc.waitFor(t, "booked 1, checked in 1, cancelled 1", func(v string) bool {
		return row(v) == "dr-li Dr Li 1 1 0 1" && strings.Contains(v, "checked_in")
	})
	if v := lc.m.View(); !strings.Contains(screen.Line(v, "checked_in"), tk.Number) {
		t.Errorf("the check-in's event line lacks ticket %s:\n%s", tk.Number, v)
	}
	for _, secret := range []string{"p-kiosk", "p-before", b.Code} {
		if strings.Contains(lc.m.View(), secret) {
			t.Errorf("the console shows %q, which devices are never sent", secret)
		}
	}

	// A console started now has the same figures, from its snapshot.
	lc2 := startConsole(t, d)
	lc2.waitFor(t, "the same figures from the snapshot", func(v string) bool { return row(v) == "dr-li Dr Li 1 1 0 1" })
}

// TestHistoryKeepsAppointments: the replay of the day's events that takes
// the place of the snapshot's view (TestHistory) keeps the appointments the
// snapshot counted: they were booked days before the events it replays.
func TestHistoryKeepsAppointments(t *testing.T) {
	m := newTestModel(t, &recConn{}, 0)
	snap, hist := dayStart()
	snap.Resources = []wire.ResourceInfo{{ID: "dr-li", Name: "Dr Li", Service: "A", Booked: 4, CheckedIn: 1}}
	feed(m, SnapshotMsg{Snapshot: snap})
	for _, e := range hist {
		feed(m, EventMsg{Event: e})
	}
	s := m.site()
	if s.hist != nil || s.v.Version != 3 {
		t.Fatalf("the history did not replace the view (version %d)", s.v.Version)
	}
	if got := s.v.Resources(); len(got) != 1 || got[0] != (view.Resource{ID: "dr-li", Booked: 4, CheckedIn: 1}) {
		t.Errorf("after the history, resources = %+v, want dr-li booked 4, checked in 1", got)
	}
}

// TestResourceNamesFromConfig: a resource named in the console's
// configuration (SiteOpts.Resources, in the screen's language) keeps that
// name when the snapshot names it in the daemon's main language; one the
// configuration does not name takes the snapshot's.
func TestResourceNamesFromConfig(t *testing.T) {
	o := testSiteOpts(&recConn{})
	o.Resources = map[string]string{"dr-li": "Dr Li"}
	m := New(Opts{Sites: []SiteOpts{o}, Addr: "127.0.0.1:7400", Renderer: asciiRenderer()})
	feed(m, tea.WindowSizeMsg{Width: 80, Height: 24}, TickMsg(t0), StateMsg{State: LinkConnected})
	snap := snapshot()
	snap.Resources = []wire.ResourceInfo{
		{ID: "dr-li", Name: "李医生", Service: "A", Booked: 1},
		{ID: "vacc", Name: "疫苗接种", Service: "E", Booked: 2},
	}
	feed(m, SnapshotMsg{Snapshot: snap})
	v := m.View()
	for _, line := range []string{"dr-li  Dr Li", "vacc  疫苗接种"} {
		if !strings.Contains(v, line) {
			t.Errorf("screen lacks the row of %q:\n%s", line, v)
		}
	}
	if strings.Contains(v, "李医生") {
		t.Errorf("the snapshot's name replaced the configuration's:\n%s", v)
	}
}
