package booking

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// hanging is a store whose reads wait until their context ends while hang
// is set.
type hanging struct {
	queue.Store
	hang atomic.Bool
}

func (h *hanging) View(ctx context.Context, fn func(context.Context, queue.Tx) error) error {
	if h.hang.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	return h.Store.View(ctx, fn)
}

// TestAdmit: the front lets MaxRunning appointment requests work at once
// and RunQueue more wait to begin, and refuses the next at once with
// ErrOverloaded (429); a request waiting for the store gives its permit
// back, so the queued one begins while the store holds the first; the
// first, its context ended, returns without waiting for a permit again;
// and a kiosk's ticket at another site, which never passes the front, is
// issued meanwhile.
func TestAdmit(t *testing.T) {
	ctx := t.Context()
	st := &hanging{Store: storetest.SQLite(t)}
	site, other := storetest.BookingSite(), storetest.TestSite()
	other.ID = "branch"
	eng := admitEngine(t, st, other)
	if _, err := eng.GenerateSlots(ctx); err != nil {
		t.Fatal(err)
	}
	f := New(Opts{Engine: eng, MaxRunning: 1, RunQueue: 1, ReadBudget: time.Hour, BookingWait: time.Hour})

	ctxA, doneA, err := f.Admit(ctx)
	if err != nil {
		t.Fatalf("the first request: %v", err)
	}
	admittedB := make(chan error, 1)
	endB := make(chan struct{})
	go func() {
		_, doneB, err := f.Admit(ctx)
		admittedB <- err
		if err == nil {
			<-endB
			doneB()
		}
	}()
	poll.Until(t, "the second request waits to begin", func() bool { return f.running.waiting.Load() == 1 })
	_, _, err = f.Admit(ctx)
	var oe *OverloadError
	if !errors.As(err, &oe) || oe.What != "appointment requests" || oe.RetryAfter != time.Second {
		t.Fatalf("a third request past the permit and the queue: %v, want ErrOverloaded of appointment requests, retry after 1s", err)
	}

	st.hang.Store(true)
	readA, cancelA := context.WithCancel(ctxA)
	listA := make(chan error, 1)
	go func() {
		_, err := f.Slots(readA, site.ID, "dr-li", "2026-12-01")
		listA <- err
	}()
	var errB error
	poll.Until(t, "the queued request begins while the first waits for the store", func() bool {
		select {
		case errB = <-admittedB:
			return true
		default:
			return false
		}
	})
	if errB != nil {
		t.Fatalf("the queued request: %v, want it admitted", errB)
	}
	if _, err := eng.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: other.ID, Device: "kiosk-1"}, Service: "A"}); err != nil {
		t.Errorf("a ticket at %s while the store holds a slot read and the front is full: %v", other.ID, err)
	}
	cancelA()
	if err := <-listA; !errors.Is(err, context.Canceled) {
		t.Errorf("the first request, its context ended at the store: %v, want context.Canceled", err)
	}
	doneA()
	close(endB)
	st.hang.Store(false)
	poll.Until(t, "a request begins once both are done", func() bool {
		_, done, err := f.Admit(ctx)
		if err == nil {
			done()
		}
		return err == nil && f.running.waiting.Load() == 0
	})
}

// TestAdmitReadsShedFirst: reads and bookings wait for the same permits,
// but a slot list waits only behind fewer than ReadQueue others: with the
// permit taken and a read waiting, the next read is refused at once as
// ErrOverloaded while a booking still waits its turn behind both; past
// RunQueue a booking is refused too. Once the permit is back, the waiting
// ones begin in turn.
func TestAdmitReadsShedFirst(t *testing.T) {
	ctx := t.Context()
	f := New(Opts{Engine: admitEngine(t, storetest.SQLite(t)), MaxRunning: 1, RunQueue: 2, ReadQueue: 1, ReadWait: time.Hour, BookingWait: time.Hour})
	_, doneA, err := f.Admit(ctx)
	if err != nil {
		t.Fatalf("the first request: %v", err)
	}
	admitted := make(chan error, 2)
	wait := func(admit func(context.Context) (context.Context, func(), error)) {
		go func() {
			_, done, err := admit(ctx)
			if err == nil {
				done()
			}
			admitted <- err
		}()
	}
	wait(f.AdmitRead)
	poll.Until(t, "a read waits to begin", func() bool { return f.running.waiting.Load() == 1 })
	var oe *OverloadError
	if _, _, err := f.AdmitRead(ctx); !errors.As(err, &oe) || oe.What != "slot list requests" {
		t.Fatalf("a second read while one waits: %v, want ErrOverloaded of slot list requests", err)
	}
	wait(f.Admit)
	poll.Until(t, "a booking waits behind the read", func() bool { return f.running.waiting.Load() == 2 })
	if _, _, err := f.Admit(ctx); !errors.As(err, &oe) || oe.What != "appointment requests" {
		t.Fatalf("a booking past the run queue: %v, want ErrOverloaded of appointment requests", err)
	}
	doneA()
	for range 2 {
		if err := <-admitted; err != nil {
			t.Errorf("a waiting request once the permit is back: %v", err)
		}
	}
}

// admitEngine is an engine on st of the booking site, and of others, for
// the admission tests: its clock stands at 09:00 on Monday 30 November
// 2026 of the booking site.
func admitEngine(t *testing.T, st queue.Store, others ...queue.Site) *queue.Engine {
	t.Helper()
	site := storetest.BookingSite()
	return storetest.StartEngine(t, queue.Opts{Store: st, Sites: append([]queue.Site{site}, others...),
		Clock: storetest.FixedClock(time.Date(2026, 11, 30, 9, 0, 0, 0, site.Location)).Now})
}

// TestAdmitReadsBoundedByWait: the read queue is bounded by its wait, not
// its length: with the permit taken, 40 reads (more than the 16 a queue
// of length once held) wait, and once the permit is back every one of
// them begins in turn.
func TestAdmitReadsBoundedByWait(t *testing.T) {
	ctx := t.Context()
	f := New(Opts{Engine: admitEngine(t, storetest.SQLite(t)), MaxRunning: 1, ReadWait: time.Hour})
	_, doneA, err := f.Admit(ctx)
	if err != nil {
		t.Fatalf("the first request: %v", err)
	}
	const reads = 40
	admitted := make(chan error, reads)
	for range reads {
		go func() {
			_, done, err := f.AdmitRead(ctx)
			if err == nil {
				done()
			}
			admitted <- err
		}()
	}
	poll.Until(t, "the reads wait, none refused", func() bool { return f.running.waiting.Load() == reads || len(admitted) > 0 })
	doneA()
	for range reads {
		if err := <-admitted; err != nil {
			t.Errorf("a read that waited its turn: %v, want it admitted", err)
		}
	}
}

// TestAdmitShedByWait: a request that waited its wait for a permit is
// refused as ErrOverloaded (429, retry after 1 s): a slot list after
// ReadWait, while a booking, whose BookingWait is longer, still waits and
// begins once the permit is back; a booking refused after its own wait.
func TestAdmitShedByWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	const readWait = 5 * time.Millisecond
	f := New(Opts{Engine: admitEngine(t, storetest.SQLite(t)), MaxRunning: 1, ReadWait: readWait, BookingWait: time.Hour})
	_, doneA, err := f.Admit(ctx)
	if err != nil {
		t.Fatalf("the first request: %v", err)
	}
	booked := make(chan error, 1)
	go func() {
		_, done, err := f.Admit(ctx)
		if err == nil {
			done()
		}
		booked <- err
	}()
	poll.Until(t, "a booking waits", func() bool { return f.running.waiting.Load() == 1 })
	start := time.Now()
	_, _, err = f.AdmitRead(ctx)
	var oe *OverloadError
	if !errors.As(err, &oe) || oe.What != "slot list requests" || oe.RetryAfter != time.Second {
		t.Fatalf("a read while the permit is taken: %v, want ErrOverloaded of slot list requests, retry after 1s", err)
	}
	if waited := time.Since(start); waited < readWait {
		t.Errorf("the read was refused after %s, want after its wait of %s", waited, readWait)
	}
	if len(booked) > 0 {
		t.Fatalf("the booking ended (%v) before the permit was back", <-booked)
	}
	doneA()
	if err := <-booked; err != nil {
		t.Fatalf("the waiting booking once the permit is back: %v", err)
	}

	g := New(Opts{Engine: admitEngine(t, storetest.SQLite(t)), MaxRunning: 1, BookingWait: readWait})
	_, doneB, err := g.Admit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer doneB()
	if _, _, err := g.Admit(ctx); !errors.As(err, &oe) || oe.What != "appointment requests" {
		t.Fatalf("a booking past its wait: %v, want ErrOverloaded of appointment requests", err)
	}
}

// TestDefaultMaxRunning: appointments work on every CPU Go uses but one,
// which stays for the engine, the kiosks and the counters; at least one.
func TestDefaultMaxRunning(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for procs, want := range map[int]int{1: 1, 2: 1, 4: 3} {
		runtime.GOMAXPROCS(procs)
		if got := DefaultMaxRunning(); got != want {
			t.Errorf("GOMAXPROCS %d: DefaultMaxRunning() = %d, want %d", procs, got, want)
		}
	}
}

// holding is a store whose transactions wait, while hold is set, until
// release is closed.
type holding struct {
	queue.Store
	hold    atomic.Bool
	release chan struct{}
}

func (h *holding) Update(ctx context.Context, fn func(context.Context, queue.Tx) error) error {
	if h.hold.Load() {
		<-h.release
	}
	return h.Store.Update(ctx, fn)
}

// TestBookingAnswersWithPermit: a booking gives its permit back while its
// commit waits, and takes one again before it returns: a batch's bookings
// end together, and would otherwise all be runnable at once, which the
// permits are there to prevent.
func TestBookingAnswersWithPermit(t *testing.T) {
	ctx := t.Context()
	site := storetest.BookingSite()
	st := &holding{Store: storetest.SQLite(t), release: make(chan struct{})}
	eng := admitEngine(t, st)
	if _, err := eng.GenerateSlots(ctx); err != nil {
		t.Fatal(err)
	}
	slots, err := eng.Slots(ctx, site.ID, "dr-li", "2026-12-01")
	if err != nil || len(slots) == 0 {
		t.Fatalf("slots: %v, %d", err, len(slots))
	}
	f := New(Opts{Engine: eng, MaxRunning: 1, BookingWait: time.Hour})
	st.hold.Store(true)
	booked := make(chan error, 1)
	go func() {
		_, _, err := f.Book(ctx, queue.BookRequest{Request: queue.Request{Site: site.ID, Device: "api:his"}, Slot: slots[0].ID, Patient: "p1"})
		booked <- err
	}()
	poll.Until(t, "the booking at the engine", func() bool { return len(f.books.permits) == 1 })
	_, doneA, err := f.Admit(ctx)
	if err != nil {
		t.Fatalf("a request while the booking's commit waits: %v, want its permit", err)
	}
	st.hold.Store(false)
	close(st.release)
	poll.Until(t, "the booking committed", func() bool {
		list, err := eng.Slots(ctx, site.ID, "dr-li", "2026-12-01")
		return err == nil && list[0].Booked == 1
	})
	select {
	case err := <-booked:
		t.Fatalf("the booking returned (%v) while another request held the only permit", err)
	case <-time.After(100 * time.Millisecond):
	}
	doneA()
	if err := <-booked; err != nil {
		t.Fatalf("the booking once the permit is back: %v", err)
	}
}
