package protocol_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// TestSnapshotOfManyResources: a site of 5,000 resources, each with a
// booking today, is far more than one frame holds. A display's SUBSCRIBE
// gets a first page that fits its frame, with ResourceTotal and
// ResourceNext; a display that names two resources gets those two and
// only their booking events; a console walks the pages with STATUS
// ResourceAfter and gets every resource once, in order, with its figure
// (PROTOCOL.md section 7, "Resources").
func TestSnapshotOfManyResources(t *testing.T) {
	const n = 5000
	site := testSite()
	for i := range n {
		site.Resources = append(site.Resources, queue.Resource{ID: fmt.Sprintf("dr-%04d", i),
			Names: map[string]string{"en": fmt.Sprintf("Dr %04d", i)}, Service: "A",
			Schedule: queue.Schedule{Open: 11 * time.Hour, Close: 11*time.Hour + 15*time.Minute, Slot: 15 * time.Minute, Capacity: 2, DaysAhead: 1}})
	}
	d := protocoltest.New(t, site, testDevices())
	d.Clock = engineClock.Now
	// Reading 5,000 resources' bookings under -race on a loaded machine
	// can take seconds; the time is not what this test is about.
	d.StoreTimeout = time.Minute
	// The door display waits in silence while the console pages.
	d.ServerOpts = func(o *protocol.Opts) { o.IdleTimeout = 10 * time.Minute }
	en := &env{Daemon: d, t: t}
	en.Start()
	t.Cleanup(en.Stop)
	ctx := t.Context()
	slotOf := bookEveryResource(t, d)

	disp, _ := en.login("display-1", 1)
	disp.patience = time.Minute
	id := disp.next
	disp.next++
	disp.write(id, 0, &wire.Subscribe{Snapshot: true})
	f, m, err := disp.read()
	for _, beat := m.(*wire.Heartbeat); beat && err == nil; _, beat = m.(*wire.Heartbeat) {
		f, m, err = disp.read() // the server's, while a loaded machine reads the answer
	}
	if err != nil {
		t.Fatalf("display subscribe: %v (a SNAPSHOT too large for its frame?)", err)
	}
	first, ok := m.(*wire.Snapshot)
	if !ok || f.RequestID != id {
		t.Fatalf("display subscribe answered %T %+v", m, m)
	}
	if len(f.Payload) > wire.MaxPayload || first.ResourceTotal != n || first.ResourceNext == "" ||
		len(first.Resources) == 0 || len(first.Resources) >= n || first.ResourceNext != first.Resources[len(first.Resources)-1].ID {
		t.Fatalf("first page: %d B, %d resources, total %d, next %q", len(f.Payload), len(first.Resources), first.ResourceTotal, first.ResourceNext)
	}

	door, _ := en.login("display-2", 1)
	door.patience = time.Minute
	only, ok := door.do(&wire.Subscribe{Snapshot: true, Resources: []string{"dr-4999", "dr-0007"}}).(*wire.Snapshot)
	if !ok {
		t.Fatal("filtered subscribe: no SNAPSHOT")
	}
	want := []wire.ResourceInfo{
		{ID: "dr-0007", Name: "Dr 0007", Service: "A", Booked: 1},
		{ID: "dr-4999", Name: "Dr 4999", Service: "A", Booked: 1},
	}
	if len(only.Resources) != 2 || only.Resources[0] != want[0] || only.Resources[1] != want[1] || only.ResourceTotal != 2 || only.ResourceNext != "" {
		t.Errorf("filtered snapshot %+v total %d next %q, want %+v", only.Resources, only.ResourceTotal, only.ResourceNext, want)
	}

	con, _ := en.login("console-1", 1)
	con.patience = time.Minute
	var all []wire.ResourceInfo
	pages := 0
	for next := ""; ; pages++ {
		page, ok := con.do(&wire.Status{ResourceAfter: next}).(*wire.Snapshot)
		if !ok || page.ResourceTotal != n {
			t.Fatalf("page %d after %q: %+v %+v", pages, next, page, con.other)
		}
		b, err := page.AppendBinary(nil)
		if err != nil || len(b) > wire.MaxPayload {
			t.Fatalf("page %d: %d B, %v", pages, len(b), err)
		}
		all = append(all, page.Resources...)
		if next = page.ResourceNext; next == "" {
			break
		}
	}
	if len(all) != n || pages < 2 {
		t.Fatalf("console got %d resources in %d pages, want %d in several", len(all), pages+1, n)
	}
	for i, r := range all {
		if id := fmt.Sprintf("dr-%04d", i); r.ID != id || r.Booked != 1 {
			t.Fatalf("resource %d: %+v, want %s booked 1", i, r, id)
		}
	}
	con.wantError(&wire.Status{ResourceAfter: "no-such"}, wire.ErrBadPayload.Code)

	// The door display hears of its own resources only.
	for _, r := range []string{"dr-0100", "dr-0007"} {
		if _, _, err := d.Engine.Book(ctx, queue.BookRequest{Request: queue.Request{Site: "hq", Device: "api:test"}, Slot: slotOf[r].ID, Patient: "q-" + r}); err != nil {
			t.Fatal(err)
		}
	}
	evs := door.eventsUntil(only.Version + 2)
	if len(evs) != 1 || evs[0].Resource != "dr-0007" {
		t.Errorf("door display events %+v, want dr-0007's booking only", evs)
	}
}

// bookEveryResource gives every resource of d's site a slot at 11:00 on
// 2026-11-30 and a booking in it, and returns the slots by resource. They
// go into the store in one transaction: thousands of slot generations and
// bookings through the engine take a minute on a loaded machine, and what
// a device is sent of them is read from the store alike.
func bookEveryResource(t *testing.T, d *protocoltest.Daemon) map[string]queue.Slot {
	t.Helper()
	ctx := t.Context()
	site := d.Site
	start := time.Date(2026, 11, 30, 11, 0, 0, 0, site.Location)
	var want []queue.Slot
	for _, r := range site.Resources {
		want = append(want, queue.Slot{Site: site.ID, Resource: r.ID, Start: start, End: start.Add(15 * time.Minute), Capacity: 2})
	}
	now := engineClock.Now()
	slotOf := map[string]queue.Slot{}
	err := d.Store.Update(ctx, func(ctx context.Context, tx queue.Tx) error {
		clear(slotOf)
		if _, err := tx.InsertSlots(ctx, want); err != nil {
			return err
		}
		slots, err := tx.Slots(ctx, queue.SlotQuery{Site: site.ID, From: start, To: start.Add(time.Minute)})
		if err != nil {
			return err
		}
		for i, sl := range slots {
			slotOf[sl.Resource] = sl
			if ok, err := tx.TakePlace(ctx, sl.ID, now); err != nil || !ok {
				return fmt.Errorf("take a place in %d: %v, %w", sl.ID, ok, err)
			}
			b := queue.Booking{Site: site.ID, Resource: sl.Resource, Slot: sl.ID, Start: sl.Start, End: sl.End, Patient: "p-" + sl.Resource,
				Code: fmt.Sprintf("T%07d", i), Status: queue.BookingBooked, CreatedAt: now, UpdatedAt: now, Device: "api:test"}
			if err := tx.InsertBooking(ctx, &b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || len(slotOf) != len(site.Resources) {
		t.Fatalf("%d resources booked, %v; want %d", len(slotOf), err, len(site.Resources))
	}
	return slotOf
}
