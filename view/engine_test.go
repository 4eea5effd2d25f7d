package view_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/storetest"
	"github.com/nowserving/nowserving/view"
)

// start is a Monday 09:00 at the test site (Asia/Shanghai).
var start = time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)

// driver drives a real engine over SQLite.
type driver struct {
	t     *testing.T
	ctx   context.Context
	clock *storetest.Clock
	e     *queue.Engine
	site  queue.Site
	n     int
	// numbers are the numbers issued, for operations by number.
	numbers []string
	// bookings are the ids of the bookings made, for operations on them.
	bookings []int64
}

func newDriver(t *testing.T) *driver {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "q.db"), sqlite.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	d := &driver{t: t, ctx: t.Context(), clock: storetest.NewClock(start), site: storetest.BookingSite()}
	d.e = storetest.StartEngine(t, queue.Opts{Store: s, Sites: []queue.Site{d.site}, Clock: d.clock.Now, Batch: 8})
	if _, err := d.e.GenerateSlots(d.ctx); err != nil {
		t.Fatal(err)
	}
	return d
}

// bookingStep applies a booking operation: book RESOURCE DAYS SLOT
// PATIENT [hold] books the SLOT-th slot still to come of RESOURCE DAYS days
// from now (as far as it has slots), confirm/cancel-booking/check-in N act on the N-th
// booking made (as far as there are bookings). It reports false for an
// operation it does not know.
func (d *driver) bookingStep(op string, args []string) (bool, error) {
	nth := func(a string, n int) int {
		i, err := strconv.Atoi(a)
		if err != nil {
			d.t.Fatal(err)
		}
		return i % max(n, 1)
	}
	if op == "book" {
		day := d.clock.Now().In(d.site.Location).AddDate(0, 0, nth(args[1], 100)).Format(time.DateOnly)
		slots, err := d.e.Slots(d.ctx, d.site.ID, args[0], day)
		if err != nil {
			return true, err
		}
		slots = slices.DeleteFunc(slots, func(s queue.Slot) bool { return !s.Start.After(d.clock.Now()) })
		if len(slots) == 0 {
			return true, nil
		}
		b, _, err := d.e.Book(d.ctx, queue.BookRequest{Request: d.req(), Slot: slots[nth(args[2], len(slots))].ID,
			Patient: args[3], Hold: len(args) > 4})
		if err == nil {
			d.bookings = append(d.bookings, b.ID)
		}
		return true, err
	}
	if op != "confirm" && op != "cancel-booking" && op != "check-in" {
		return false, nil
	}
	if len(d.bookings) == 0 {
		return true, nil
	}
	r := queue.BookingRequest{Request: d.req(), ID: d.bookings[nth(args[0], len(d.bookings))]}
	var err error
	switch op {
	case "confirm":
		_, err = d.e.Confirm(d.ctx, r)
	case "cancel-booking":
		_, err = d.e.CancelBooking(d.ctx, r)
	case "check-in":
		_, err = d.e.CheckIn(d.ctx, r)
	}
	return true, err
}

func (d *driver) req() queue.Request {
	d.n++
	return queue.Request{Site: d.site.ID, Device: "test", Key: fmt.Sprintf("k%d", d.n)}
}

// step applies one operation; refusals by the rules are part of the game.
func (d *driver) step(op string, args ...string) {
	d.t.Helper()
	if op == "wait" {
		dur, err := time.ParseDuration(args[0])
		if err != nil {
			d.t.Fatal(err)
		}
		d.clock.Add(dur)
		return
	}
	if ok, err := d.bookingStep(op, args); ok {
		if err != nil && !queue.IsRefusal(err) {
			d.t.Fatalf("%s %v: %v", op, args, err)
		}
		return
	}
	tk, err := storetest.Do(d.ctx, d.e, d.req(), op, args...)
	if op == "issue" && err == nil {
		d.numbers = append(d.numbers, tk.Number)
	}
	if err != nil && !refused(err) {
		d.t.Fatalf("%s %v: %v", op, args, err)
	}
}

func refused(err error) bool {
	var te *queue.TransitionError
	for _, s := range []error{queue.ErrNoneWaiting, queue.ErrCounterBusy, queue.ErrCounterIdle, queue.ErrCounterPaused,
		queue.ErrNotFound, queue.ErrReentryLimit, queue.ErrServiceFull, queue.ErrServiceClosed, queue.ErrBadRequest} {
		if errors.Is(err, s) {
			return true
		}
	}
	return errors.As(err, &te)
}

func (d *driver) events() []queue.Event {
	d.t.Helper()
	evs, err := d.e.Events(d.ctx, d.site.ID, 0, 0)
	if err != nil {
		d.t.Fatal(err)
	}
	return evs
}

func (d *driver) snapshot() queue.Snapshot {
	d.t.Helper()
	snap, err := d.e.Snapshot(d.ctx, d.site.ID)
	if err != nil {
		d.t.Fatal(err)
	}
	return snap
}

// figures is what a view and a snapshot both say, to compare them.
type figures struct {
	Version   int64
	Services  []serviceFigures
	Counters  []counterFigures
	Resources []view.Resource
}

type serviceFigures struct {
	Code                                         string
	Waiting, Issued, Called, Served, NoShows, Cx int
	Longest, AvgWait, AvgService                 time.Duration
}

type counterFigures struct {
	ID     string
	Mode   queue.CounterMode
	Ticket int64
	Status queue.Status
	Queue  string
	Since  time.Time
	Served int
}

func snapFigures(s queue.Snapshot) figures {
	f := figures{Version: s.Version}
	for _, sv := range s.Services {
		f.Services = append(f.Services, serviceFigures{sv.Code, sv.Waiting, sv.Issued, sv.Called, sv.Served, sv.NoShows,
			sv.Cancelled, sv.LongestWait, sv.AvgWait, sv.AvgService})
	}
	for _, c := range s.Counters {
		cf := counterFigures{ID: c.ID, Mode: c.Mode, Since: c.Since.UTC(), Served: c.Served}
		if c.Ticket != nil {
			cf.Ticket, cf.Status, cf.Queue = c.Ticket.ID, c.Ticket.Status, c.Ticket.Queue
		}
		f.Counters = append(f.Counters, cf)
	}
	for _, r := range storetest.BookingSite().Resources {
		rf := view.Resource{ID: r.ID}
		for _, rd := range s.Resources {
			if rd.Day == s.Day && rd.Resource == r.ID {
				rf = view.Resource{ID: r.ID, Booked: rd.Booked, CheckedIn: rd.CheckedIn, Missed: rd.Missed, Cancelled: rd.Cancelled}
			}
		}
		f.Resources = append(f.Resources, rf)
	}
	return f
}

func viewFigures(v *view.Site, now time.Time) figures {
	f := figures{Version: v.Version}
	for _, sv := range v.Services {
		f.Services = append(f.Services, serviceFigures{sv.Code, sv.Waiting, sv.Issued, sv.Called, sv.Served, sv.NoShows,
			sv.Cancelled, sv.LongestWait(now), sv.AvgWait(), sv.AvgService()})
	}
	for _, c := range v.Counters {
		f.Counters = append(f.Counters, counterFigures{c.ID, c.Mode, c.TicketID, c.Status, c.Queue, c.Since.UTC(), c.Served})
	}
	f.Resources = v.Resources()
	return f
}

func diff(t *testing.T, what string, got, want figures) {
	t.Helper()
	if fmt.Sprint(got) == fmt.Sprint(want) {
		return
	}
	t.Errorf("%s: version %d vs %d", what, got.Version, want.Version)
	for i := range max(len(got.Services), len(want.Services)) {
		if i >= len(got.Services) || i >= len(want.Services) || got.Services[i] != want.Services[i] {
			t.Errorf("  service %d:\n   view %+v\n   snap %+v", i, at(got.Services, i), at(want.Services, i))
		}
	}
	for i := range max(len(got.Counters), len(want.Counters)) {
		if i >= len(got.Counters) || i >= len(want.Counters) || got.Counters[i] != want.Counters[i] {
			t.Errorf("  counter %d:\n   view %+v\n   snap %+v", i, at(got.Counters, i), at(want.Counters, i))
		}
	}
	for i := range max(len(got.Resources), len(want.Resources)) {
		if i >= len(got.Resources) || i >= len(want.Resources) || got.Resources[i] != want.Resources[i] {
			t.Errorf("  resource %d:\n   view %+v\n   snap %+v", i, at(got.Resources, i), at(want.Resources, i))
		}
	}
}

func at[T any](s []T, i int) any {
	if i < len(s) {
		return s[i]
	}
	return nil
}

// randomOp is one operation chosen at random from what the site offers.
func randomOp(r *rand.Rand, numbers []string) (string, []string) {
	counters := []string{"1", "2", "3", "4", "5", "6", "7", "8"}
	services := []string{"A", "E", "C", "P", "V", "M"}
	c := counters[r.IntN(len(counters))]
	resources := []string{"dr-li", "dr-wu", "vacc"}
	n := func(k int) string { return strconv.Itoa(r.IntN(k)) }
	num := func() string {
		if len(numbers) == 0 {
			return "A001"
		}
		return numbers[r.IntN(len(numbers))]
	}
	switch k := r.IntN(100); {
	case k < 12:
		// Bookings: today's and the next days' slots, six patients
		// (so some refused as overlapping), a hold now and then.
		switch j := r.IntN(20); {
		case j < 8:
			// Mostly today's next slots, so that some are checked in
			// or missed.
			a := []string{resources[r.IntN(len(resources))], strconv.Itoa(max(0, r.IntN(6)-3)), n(4), "patient-" + n(6)}
			if j < 2 {
				a = append(a, "hold")
			}
			return "book", a
		case j < 10:
			return "confirm", []string{n(1000)}
		case j < 13:
			return "cancel-booking", []string{n(1000)}
		default:
			return "check-in", []string{n(1000)}
		}
	case k < 25:
		sv := services[r.IntN(len(services))]
		classes := []string{"normal", "normal", "normal", "vip", "revisit", "emergency"}
		return "issue", []string{sv, classes[r.IntN(len(classes))]}
	case k < 45:
		return "next", []string{c}
	case k < 50:
		return "recall", []string{c}
	case k < 60:
		return "start", []string{c}
	case k < 70:
		return "done", []string{c}
	case k < 75:
		return "noshow", []string{c}
	case k < 78:
		return "reenter", []string{num()}
	case k < 81:
		return "transfer-service", []string{c, services[r.IntN(len(services))]}
	case k < 83:
		return "transfer-counter", []string{c, counters[r.IntN(len(counters))]}
	case k < 85:
		return "call-number", []string{c, num()}
	case k < 88:
		return "cancel", []string{num()}
	case k < 90:
		return "pause", []string{c}
	case k < 93:
		return "resume", []string{c}
	case k < 95:
		return "sweep", nil
	default:
		return "wait", []string{fmt.Sprintf("%ds", 1+r.IntN(900))}
	}
}

// TestReplayEqualsSnapshot drives the engine with random operations
// (tickets, counters and bookings) and checks, every few steps, that replaying the whole log gives the figures
// of the engine's Snapshot, and that a view started from an earlier
// snapshot and fed the events since agrees on everything it can know.
func TestReplayEqualsSnapshot(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 7))
			d := newDriver(t)
			var mid queue.Snapshot
			for i := range 300 {
				op, args := randomOp(r, d.numbers)
				d.step(op, args...)
				if i == 100 {
					mid = d.snapshot()
				}
				if i%25 != 24 {
					continue
				}
				snap := d.snapshot()
				evs := d.events()
				v := view.Replay(d.site, view.Opts{}, evs)
				diff(t, fmt.Sprintf("step %d replay", i), viewFigures(v, snap.At), snapFigures(snap))
				if mid.Version > 0 {
					fv := view.FromSnapshot(d.site, view.Opts{}, mid)
					for j := range evs {
						if evs[j].Version > mid.Version {
							fv.Apply(&evs[j])
						}
					}
					got, want := viewFigures(fv, snap.At), snapFigures(snap)
					// Longest waits are bounds until the snapshot's tickets left.
					for k := range got.Services {
						got.Services[k].Longest, want.Services[k].Longest = 0, 0
						got.Services[k].AvgWait, want.Services[k].AvgWait = 0, 0
						got.Services[k].AvgService, want.Services[k].AvgService = 0, 0
					}
					diff(t, fmt.Sprintf("step %d from snapshot", i), got, want)
				}
			}
		})
	}
}
