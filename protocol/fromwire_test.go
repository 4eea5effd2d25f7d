package protocol

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/storetest"
	"github.com/nowserving/nowserving/view"
)

// dayOfEvents drives a real engine through a day that sends every kind of
// event the queue has (a transfer, a recall, a re-entry, a ticket held
// past the rollover) and returns its log, its site and its snapshot.
func dayOfEvents(t *testing.T) (queue.Site, []queue.Event, queue.Snapshot) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "q.db"), sqlite.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	site := storetest.TestSite()
	// 03:55 in Shanghai: the rollover (04:00) comes during the day.
	clock := storetest.NewClock(time.Date(2026, 11, 30, 19, 55, 0, 0, time.UTC))
	e := storetest.StartEngine(t, queue.Opts{Store: st, Sites: []queue.Site{site}, Clock: clock.Now})
	n := 0
	req := func() queue.Request {
		n++
		return queue.Request{Site: site.ID, Device: "test", Key: fmt.Sprint("k", n)}
	}
	cr := func(c string) queue.CounterRequest { return queue.CounterRequest{Request: req(), Counter: c} }
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	issue := func(sv string, class queue.Class) queue.Ticket {
		tk, err := e.Issue(ctx, queue.IssueRequest{Request: req(), Service: sv, Class: class})
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	late := issue("A", queue.ClassVIP)
	must(e.CallNext(ctx, cr("1")))
	must(e.Start(ctx, cr("1")))
	clock.Add(10 * time.Minute) // past the rollover: a new day, counter 1 still serves
	a := issue("A", queue.ClassNormal)
	issue("E", queue.ClassEmergency)
	must(e.Complete(ctx, cr("1")))
	must(e.CallNext(ctx, cr("2")))
	clock.Add(90 * time.Second)
	must(e.Recall(ctx, cr("2")))
	must(e.Transfer(ctx, queue.TransferRequest{Request: req(), Counter: "2", ToService: "C"}))
	must(e.CallNumber(ctx, queue.NumberRequest{Request: req(), Counter: "3", Number: a.Number}))
	must(e.Transfer(ctx, queue.TransferRequest{Request: req(), Counter: "3", ToCounter: "4"}))
	must(e.CallNext(ctx, cr("4")))
	must(e.Start(ctx, cr("4")))
	clock.Add(4 * time.Minute)
	must(e.Complete(ctx, cr("4")))
	c := issue("A", queue.ClassNormal)
	must(e.CallNext(ctx, cr("1")))
	must(e.NoShow(ctx, cr("1")))
	must(e.Reenter(ctx, queue.NumberRequest{Request: req(), Number: c.Number}))
	must(e.Cancel(ctx, queue.NumberRequest{Request: req(), Number: c.Number}))
	must(e.Pause(ctx, cr("5")))
	must(e.Resume(ctx, cr("5")))
	must(e.CallNext(ctx, cr("8")))
	issue("A", queue.ClassRevisit)
	if err := e.MarkPrintFailed(ctx, queue.PrintFailure{Site: site.ID, TicketID: late.ID, Actor: "kiosk-1", Reason: "paper out"}); err != nil {
		t.Fatal(err)
	}
	evs, err := e.Events(ctx, site.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := e.Snapshot(ctx, site.ID)
	if err != nil {
		t.Fatal(err)
	}
	return site, evs, snap
}

// throughWire is what a console reads of ev: the EVENT frame the server
// sends, encoded, decoded and turned back.
func throughWire(t *testing.T, site *queue.Site, ev *queue.Event) (queue.Event, bool) {
	t.Helper()
	m, ok := eventMsg(site, ev)
	if !ok {
		return queue.Event{}, false
	}
	b, err := m.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	var got wire.Event
	if err := got.Decode(b); err != nil {
		t.Fatal(err)
	}
	return QueueEvent(&got)
}

// TestQueueEventRoundTrip: every event of a day reads back from its EVENT
// frame as the engine wrote it (times in whole milliseconds, the detail
// left out but the counter a transfer sends the ticket to), so the console folds what the daemon's readers fold.
func TestQueueEventRoundTrip(t *testing.T) {
	t.Parallel() // its own store; its time is spent waiting on synced commits
	site, evs, snap := dayOfEvents(t)
	kinds := map[queue.EventType]bool{}
	var back []queue.Event
	toCounter := "" // the counter of the transfer to counter 4
	for i := range evs {
		want := evs[i]
		got, ok := throughWire(t, &site, &want)
		if !ok {
			t.Errorf("v%d %s: not sent", want.Version, want.Type)
			continue
		}
		kinds[want.Type] = true
		back = append(back, got)
		want.At = want.At.Truncate(time.Millisecond)
		want.Waited, want.ServiceTime = want.Waited.Truncate(time.Millisecond), want.ServiceTime.Truncate(time.Millisecond)
		to := want.ToCounter() // the one detail the wire carries
		want.Detail = ""
		if to != "" {
			want.Detail, toCounter = queue.DetailToCounter+to, to
		}
		if want.Issuer == "" {
			want.Issuer = want.Service
		}
		if !got.At.Equal(want.At) {
			t.Errorf("v%d %s: at %v, want %v", want.Version, want.Type, got.At, want.At)
		}
		got.At = want.At
		if !reflect.DeepEqual(got, want) {
			t.Errorf("v%d %s through the wire:\n got %+v\nwant %+v", want.Version, want.Type, got, want)
		}
	}
	for _, k := range []queue.EventType{queue.EventIssued, queue.EventCalled, queue.EventRecalled, queue.EventTransferred,
		queue.EventServing, queue.EventDone, queue.EventNoShow, queue.EventReentered, queue.EventCancelled,
		queue.EventCounterPaused, queue.EventCounterOpened, queue.EventPrintFailed} {
		if !kinds[k] {
			t.Errorf("the day sent no %s event", k)
		}
	}
	if toCounter != "4" {
		t.Errorf("the transfer to counter 4 arrived for counter %q", toCounter)
	}
	got, want := view.Replay(site, view.Opts{}, back), view.Replay(site, view.Opts{}, evs)
	if g, w := picture(got), picture(want); g != w {
		t.Errorf("the view of the events through the wire differs:\n got %s\nwant %s", g, w)
	}
	if snap.Day == evs[0].Day {
		t.Errorf("the day did not roll over (%s)", snap.Day)
	}
}

// picture prints what a view shows (times in UTC).
func picture(v *view.Site) string {
	return fmt.Sprintf("%s v%d %v\n%+v\n%+v\n%+v", v.Day, v.Version, v.At.UTC(), v.Services, v.Counters, v.Calls)
}

// TestQueueSnapshotRoundTrip: a SNAPSHOT reads back as the engine's
// snapshot, waits in whole seconds, and a view started from it equals one
// started from the engine's.
func TestQueueSnapshotRoundTrip(t *testing.T) {
	t.Parallel() // its own store; its time is spent waiting on synced commits
	site, _, snap := dayOfEvents(t)
	b, err := snapshotBody(&site, &snap).AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	var m wire.Snapshot
	if err := m.Decode(b); err != nil {
		t.Fatal(err)
	}
	got := QueueSnapshot(&m)
	want := snap
	want.At = want.At.Truncate(time.Millisecond)
	want.Services = nil
	for _, sv := range snap.Services {
		for _, d := range []*time.Duration{&sv.LongestWait, &sv.AvgWait, &sv.AvgService} {
			*d = d.Truncate(time.Second)
		}
		sv.Open = sv.Open && !sv.Full
		want.Services = append(want.Services, sv)
	}
	want.Counters = nil
	for _, c := range snap.Counters {
		c.Since = c.Since.Truncate(time.Millisecond)
		if tk := c.Ticket; tk != nil {
			c.Ticket = &queue.Ticket{ID: tk.ID, Site: tk.Site, Number: tk.Number, Status: tk.Status, Queue: tk.Queue, Counter: c.ID}
		}
		want.Counters = append(want.Counters, c)
	}
	for _, sn := range []*queue.Snapshot{&got, &want} {
		sn.At = sn.At.UTC()
		for i := range sn.Counters {
			sn.Counters[i].Since = sn.Counters[i].Since.UTC()
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("snapshot through the wire:\n got %+v\nwant %+v", got, want)
	}
	busy := 0
	for _, c := range got.Counters {
		if c.Ticket != nil && c.Ticket.ID != 0 {
			busy++
		}
	}
	if busy == 0 {
		t.Errorf("no counter holds a ticket at the end of the day: the test checks no ticket id")
	}
}
