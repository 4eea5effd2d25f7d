package booking_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nowserving/nowserving/booking"
	"github.com/nowserving/nowserving/internal/testkit/parttest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// counting counts the transactions that reach the store, and the slots
// read in them (one per booking request the engine applies).
type counting struct {
	queue.Store
	updates, views, slotReads atomic.Int64
	hang                      atomic.Bool // a read waits until its context ends
}

func (c *counting) Update(ctx context.Context, fn func(context.Context, queue.Tx) error) error {
	c.updates.Add(1)
	return c.Store.Update(ctx, func(ctx context.Context, tx queue.Tx) error {
		return fn(ctx, slotCounting{tx, &c.slotReads})
	})
}

type slotCounting struct {
	queue.Tx
	n *atomic.Int64
}

func (t slotCounting) Slot(ctx context.Context, id int64) (*queue.Slot, error) {
	t.n.Add(1)
	return t.Tx.Slot(ctx, id)
}

// TakeSlot is how the engine reads a booking's slot, taking its place in
// the same statement.
func (t slotCounting) TakeSlot(ctx context.Context, k queue.PatientKey, slot int64, now time.Time) (*queue.Slot, bool, error) {
	t.n.Add(1)
	return t.Tx.TakeSlot(ctx, k, slot, now)
}

func (c *counting) View(ctx context.Context, fn func(context.Context, queue.Tx) error) error {
	c.views.Add(1)
	if c.hang.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	return c.Store.View(ctx, fn)
}

type env struct {
	t     *testing.T
	st    *counting
	eng   *queue.Engine
	front *booking.Front
	clock *storetest.Clock
	slots []queue.Slot // dr-li's of Tuesday
	n     atomic.Int64
}

func newEnv(t *testing.T) *env { return newEnvWith(t, booking.Opts{}) }

// newEnvWith is newEnv with the front's options o (its Engine set here).
func newEnvWith(t *testing.T, o booking.Opts) *env {
	st := &counting{Store: storetest.SQLite(t)}
	site := storetest.BookingSite()
	site.Appointments.PatientRate, site.Appointments.PatientWindow = 3, 10*time.Second
	clock := storetest.FixedClock(time.Date(2026, 11, 30, 9, 0, 0, 0, site.Location))
	eng := storetest.StartEngine(t, queue.Opts{Store: st, Sites: []queue.Site{site}, Clock: clock.Now})
	if _, err := eng.GenerateSlots(t.Context()); err != nil {
		t.Fatal(err)
	}
	o.Engine = eng
	f := booking.New(o)
	parttest.Until(t, context.Background(), f.Follow)
	e := &env{t: t, st: st, eng: eng, front: f, clock: clock}
	// Follow subscribes on its own goroutine: until then reads go to the
	// store, and nothing is known full.
	poll.Until(t, "a list read from memory", func() bool {
		e.slots = e.list()
		views := e.st.views.Load()
		e.list()
		return e.st.views.Load() == views
	})
	return e
}

func (e *env) list() []queue.Slot {
	e.t.Helper()
	l, err := e.front.Slots(e.t.Context(), "hq", "dr-li", "2026-12-01")
	if err != nil || len(l) != 12 {
		e.t.Fatalf("slots: %d, %v", len(l), err)
	}
	return l
}

func (e *env) book(slot int64, patient string) error {
	_, _, err := e.front.Book(e.t.Context(), queue.BookRequest{Request: queue.Request{Site: "hq", Device: "test"}, Slot: slot, Patient: patient})
	return err
}

// TestCachedLists: a list is read from the store once, then from memory
// until a booking event of its day makes it stale.
func TestCachedLists(t *testing.T) {
	e := newEnv(t)
	if err := e.book(e.slots[0].ID, "p1"); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the list shows the booking", func() bool { return e.list()[0].Booked == 1 })
}

// TestListBeforeOpening: a list read before its day's slots open (slot
// rows carry no event) is read again once a generation has run, so the
// patients polling before the opening see the slots it opens.
func TestListBeforeOpening(t *testing.T) {
	e := newEnv(t)
	const day = "2026-12-15" // opens 14 days ahead at 07:00: on 2026-12-01
	read := func() []queue.Slot {
		t.Helper()
		l, err := e.front.Slots(t.Context(), "hq", "dr-li", day)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if l := read(); len(l) != 0 {
		t.Fatalf("%d slots before the opening, want none", len(l))
	}
	views := e.st.views.Load()
	if read(); e.st.views.Load() != views {
		t.Error("the empty list was read from the store again before any generation")
	}
	e.clock.Fix(time.Date(2026, 12, 1, 7, 0, 0, 0, e.slots[0].Start.Location()))
	if _, err := e.eng.GenerateSlots(t.Context()); err != nil {
		t.Fatal(err)
	}
	if l := read(); len(l) != 12 {
		t.Errorf("%d slots after the opening, want dr-li's 12", len(l))
	}
}

// TestKnownFull: once the store refused a slot as full, the next request
// for it is refused without a transaction, until a cancel (here or in
// another daemon: the event) gives a place back.
func TestKnownFull(t *testing.T) {
	e := newEnv(t)
	sl := e.slots[3].ID
	if err := e.book(sl, "p1"); err != nil {
		t.Fatal(err)
	}
	if err := e.book(sl, "p2"); !errors.Is(err, queue.ErrSlotFull) {
		t.Fatalf("second patient: %v", err)
	}
	updates := e.st.updates.Load()
	if err := e.book(sl, "p3"); !errors.Is(err, queue.ErrSlotFull) {
		t.Fatalf("third patient: %v", err)
	}
	if n := e.st.updates.Load() - updates; n != 0 {
		t.Errorf("a slot known full cost %d transactions", n)
	}
	bs, err := e.eng.Bookings(t.Context(), queue.BookingFilter{Site: "hq", Slot: sl})
	if err != nil || len(bs) != 1 {
		t.Fatalf("bookings: %v, %v", bs, err)
	}
	// Cancelled behind the front's back, as another daemon would.
	if _, err := e.eng.CancelBooking(t.Context(), queue.BookingRequest{Request: queue.Request{Site: "hq"}, ID: bs[0].ID}); err != nil {
		t.Fatal(err)
	}
	// A patient per try: one patient's tries would meet its rate limit
	// (3 in 10 s) while a loaded machine delivers the event.
	tries := 0
	poll.Until(t, "the slot reopens on the cancel event", func() bool {
		tries++
		return e.book(sl, fmt.Sprintf("p4-%d", tries)) == nil
	})
	// Through the front, at once.
	b, err := e.eng.Bookings(t.Context(), queue.BookingFilter{Site: "hq", Slot: sl, Statuses: []queue.BookingStatus{queue.BookingBooked}})
	if err != nil || len(b) != 1 {
		t.Fatal(b, err)
	}
	if err := e.book(sl, "p5"); !errors.Is(err, queue.ErrSlotFull) {
		t.Fatal(err)
	}
	if _, err := e.front.Cancel(t.Context(), queue.BookingRequest{Request: queue.Request{Site: "hq"}, ID: b[0].ID}); err != nil {
		t.Fatal(err)
	}
	if err := e.book(sl, "p6"); err != nil {
		t.Errorf("book right after a cancel through the front: %v", err)
	}
}

// TestRate: past the patient's rate the front answers with a RateError
// before any transaction.
func TestRate(t *testing.T) {
	e := newEnv(t)
	for i := range 3 {
		if err := e.book(e.slots[5+i].ID, "p1"); err != nil && !errors.Is(err, queue.ErrOverlap) {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	updates := e.st.updates.Load()
	err := e.book(e.slots[9].ID, "p1")
	var re *booking.RateError
	if !errors.As(err, &re) || !errors.Is(err, queue.ErrRateLimited) || re.RetryAfter != 10*time.Second {
		t.Errorf("fourth request: %v", err)
	}
	if n := e.st.updates.Load() - updates; n != 0 {
		t.Errorf("a refused rate cost %d transactions", n)
	}
	// The message says the wait as Retry-After does, in whole seconds.
	e.clock.Add(1500 * time.Millisecond)
	if err := e.book(e.slots[9].ID, "p1"); err == nil || !strings.HasSuffix(err.Error(), "retry after 9s") {
		t.Errorf("fifth request, 1.5 s later: %v, want it to end with \"retry after 9s\"", err)
	}
	if err := e.book(e.slots[9].ID, "p2"); err != nil {
		t.Errorf("another patient: %v", err)
	}
}

// TestGate: fifty patients asking at once for a slot of one place (the
// opening rush) send two requests to the engine, not fifty: the first
// takes the place, the second learns the slot full, the others are refused
// from memory. The rest of the engine's queue is not filled by requests
// whose answer one of them will give.
func TestGate(t *testing.T) {
	e := newEnv(t)
	sl := e.slots[7].ID
	reads := e.st.slotReads.Load()
	errs := make([]error, 50)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = e.book(sl, fmt.Sprintf("rush-%d", i)) })
	}
	wg.Wait()
	booked := 0
	for i, err := range errs {
		if err == nil {
			booked++
		} else if !errors.Is(err, queue.ErrSlotFull) {
			t.Errorf("patient %d: %v", i, err)
		}
	}
	if booked != 1 {
		t.Errorf("%d booked, want 1 (the others refused as full)", booked)
	}
	if n := e.st.slotReads.Load() - reads; n != 2 {
		t.Errorf("the engine applied %d booking requests, want 2", n)
	}
}

// TestFullAfterEviction: a slot known full stays known full when the list
// that showed it is evicted from the cache: the rush on it after the
// eviction costs the engine nothing, as before.
func TestFullAfterEviction(t *testing.T) {
	e := newEnvWith(t, booking.Opts{CacheSlots: 12}) // one day of dr-li
	sl := e.slots[7].ID
	for i, want := range []error{nil, queue.ErrSlotFull} {
		if err := e.book(sl, fmt.Sprintf("first-%d", i)); !errors.Is(err, want) {
			t.Fatalf("request %d: %v, want %v", i, err, want)
		}
	}
	// Wednesday's list of dr-li takes the whole cache: Tuesday's goes.
	if l, err := e.front.Slots(t.Context(), "hq", "dr-li", "2026-12-02"); err != nil || len(l) != 12 {
		t.Fatalf("Wednesday: %d slots, %v", len(l), err)
	}
	reads := e.st.slotReads.Load()
	for i := range 20 {
		if err := e.book(sl, fmt.Sprintf("late-%d", i)); !errors.Is(err, queue.ErrSlotFull) {
			t.Fatalf("late patient %d: %v, want slot full", i, err)
		}
	}
	if n := e.st.slotReads.Load() - reads; n != 0 {
		t.Errorf("after the eviction the engine applied %d booking requests of the full slot, want 0", n)
	}
	// Tuesday's list, read again, is the store's.
	if l := e.list(); l[7].Booked != 1 {
		t.Errorf("slot 7 after the eviction: %+v", l[7])
	}
}

// TestReplayKnownFull: a retry of the request that took a slot's last
// place (same device and Idempotency-Key) gets its booking back once the
// slot is known full, not slot_full; new requests for the slot, with a
// key or not, are still refused without a write, and all of them together
// cost one read (who holds the slot); the first request's key for another
// patient is refused as key reuse.
func TestReplayKnownFull(t *testing.T) {
	e := newEnv(t)
	sl := e.slots[4].ID
	req := func(patient, key string) queue.BookRequest {
		return queue.BookRequest{Request: queue.Request{Site: "hq", Device: "api:his", Key: key}, Slot: sl, Patient: patient}
	}
	first, replayed, err := e.front.Book(t.Context(), req("p1", "his-1"))
	if err != nil || replayed {
		t.Fatalf("first booking: %v, replayed %v", err, replayed)
	}
	if _, _, err := e.front.Book(t.Context(), req("p2", "his-2")); !errors.Is(err, queue.ErrSlotFull) {
		t.Fatalf("second patient: %v", err)
	}
	updates, views := e.st.updates.Load(), e.st.views.Load()
	for _, r := range []queue.BookRequest{req("p3", "his-3"), req("p4", ""), req("p5", "his-5"), req("p6", "his-6")} {
		if _, _, err := e.front.Book(t.Context(), r); !errors.Is(err, queue.ErrSlotFull) {
			t.Fatalf("patient %s on a slot known full: %v", r.Patient, err)
		}
	}
	if n := e.st.updates.Load() - updates; n != 0 {
		t.Errorf("new requests on a slot known full cost %d transactions", n)
	}
	if n := e.st.views.Load() - views; n > 1 {
		t.Errorf("new requests on a slot known full cost %d reads, want at most one", n)
	}
	again, replayed, err := e.front.Book(t.Context(), req("p1", "his-1"))
	if err != nil || !replayed || again.ID != first.ID || again.Code != first.Code {
		t.Errorf("retry of the first request: booking %d, replayed %v, %v; want booking %d again", again.ID, replayed, err, first.ID)
	}
	// The key that took the place, sent again for another patient, is a
	// client's key-reuse bug: 422 idempotency_key_reused, not hidden
	// behind slot_full. Another device's same key is its own.
	if _, _, err := e.front.Book(t.Context(), req("p7", "his-1")); !errors.Is(err, queue.ErrKeyReused) {
		t.Errorf("the first request's key for another patient: %v, want idempotency key reused", err)
	}
	other := req("p8", "his-1")
	other.Device = "api:other"
	if _, _, err := e.front.Book(t.Context(), other); !errors.Is(err, queue.ErrSlotFull) {
		t.Errorf("another device's key his-1 on the full slot: %v, want slot full", err)
	}
}

// TestReadBudget: a slot list the store does not answer within the read
// budget is shed as ErrOverloaded (429), well before the store timeout
// (which would be ErrUnavailable, 503).
func TestReadBudget(t *testing.T) {
	e := newEnvWith(t, booking.Opts{ReadBudget: 100 * time.Millisecond})
	e.st.hang.Store(true)
	start := time.Now()
	_, err := e.front.Slots(t.Context(), "hq", "dr-li", "2026-12-02")
	var oe *booking.OverloadError
	if !errors.As(err, &oe) || !errors.Is(err, booking.ErrOverloaded) || errors.Is(err, queue.ErrUnavailable) || oe.What != "slot reads" {
		t.Fatalf("a read the store does not answer: %v, want ErrOverloaded of slot reads", err)
	}
	if d := time.Since(start); d >= queue.DefaultStoreTimeout {
		t.Errorf("shed after %s, want within the read budget, before the store timeout", d)
	}
	e.st.hang.Store(false)
	if l, err := e.front.Slots(t.Context(), "hq", "dr-li", "2026-12-02"); err != nil || len(l) == 0 {
		t.Errorf("once the store answers: %d slots, %v", len(l), err)
	}
}

// TestGenerationOfAnotherResource: a slot generation of one resource (a
// resource added by a reload) leaves the other resources' lists in memory,
// and makes the day's list of every resource, which lacks its slots, be
// read again.
func TestGenerationOfAnotherResource(t *testing.T) {
	e := newEnv(t)
	all := func() []queue.Slot {
		t.Helper()
		l, err := e.front.Slots(t.Context(), "hq", "", "2026-12-01")
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	before := len(all())
	site := storetest.BookingSite()
	site.Resources = append(site.Resources, queue.Resource{ID: "dr-new", Service: "A", Schedule: site.Resources[0].Schedule})
	if err := e.eng.SetSites([]queue.Site{site}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.eng.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	views := e.st.views.Load()
	e.list()
	if e.st.views.Load() != views {
		t.Error("dr-li's list was read from the store again after a generation of dr-new alone")
	}
	if got := len(all()); got != before+12 {
		t.Errorf("the day's list of every resource has %d slots after dr-new's generation, want %d", got, before+12)
	}
}

// TestHopelessNeedsNoPermit: a request memory refuses (a slot known full,
// its holders known and without the request's patient or key) is answered
// slot full while every permit is taken, without waiting for one; one
// that may be a retry of the booking there, or is for a slot not known
// full, still needs a permit (and is shed as overloaded without one).
func TestHopelessNeedsNoPermit(t *testing.T) {
	e := newEnvWith(t, booking.Opts{MaxRunning: 1, BookingWait: time.Nanosecond})
	sl := e.slots[6].ID
	req := func(patient, key string) queue.BookRequest {
		return queue.BookRequest{Request: queue.Request{Site: "hq", Device: "api:his", Key: key}, Slot: sl, Patient: patient}
	}
	if _, _, err := e.front.Book(t.Context(), req("p1", "his-1")); err != nil {
		t.Fatal(err)
	}
	// The slot learnt full, and its holders read, with the permit free.
	if _, _, err := e.front.Book(t.Context(), req("p2", "his-2")); !errors.Is(err, queue.ErrSlotFull) {
		t.Fatalf("second patient: %v", err)
	}
	if _, _, err := e.front.Book(t.Context(), req("p3", "his-3")); !errors.Is(err, queue.ErrSlotFull) {
		t.Fatalf("third patient: %v", err)
	}
	_, done, err := e.front.Admit(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	updates, views := e.st.updates.Load(), e.st.views.Load()
	for _, r := range []queue.BookRequest{req("p4", "his-4"), req("p5", "")} {
		if _, _, err := e.front.Book(t.Context(), r); !errors.Is(err, queue.ErrSlotFull) {
			t.Errorf("patient %s on a slot known full, every permit taken: %v, want slot full", r.Patient, err)
		}
	}
	if u, v := e.st.updates.Load()-updates, e.st.views.Load()-views; u != 0 || v != 0 {
		t.Errorf("refusals from memory cost %d transactions and %d reads", u, v)
	}
	if _, _, err := e.front.Book(t.Context(), req("p1", "his-1")); !errors.Is(err, booking.ErrOverloaded) {
		t.Errorf("a retry of the booking there, every permit taken: %v, want overloaded", err)
	}
	if err := e.book(e.slots[7].ID, "p6"); !errors.Is(err, booking.ErrOverloaded) {
		t.Errorf("a slot not known full, every permit taken: %v, want overloaded", err)
	}
}
