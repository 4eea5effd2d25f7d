package storetest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// faultBatch is the group-commit batch the abort cases fail: kiosks taking
// tickets, counters calling next (one ending the service it holds), and
// one request the rules refuse, so the batch has savepoints, a rollback to
// one, a claim, events and stored results.
var faultBatch = []struct {
	name    string
	service string // a kiosk's service; "" for a keypad
	counter string
	refused error // the rules refuse it
}{
	{name: "kiosk A", service: "A"},
	{name: "keypad 1", counter: "1"},
	{name: "kiosk E", service: "E"},
	{name: "keypad 7", counter: "7", refused: queue.ErrNoneWaiting},
	{name: "keypad 2", counter: "2"},
	{name: "kiosk A again", service: "A"},
}

// faultRun is one engine on a fresh site of a FaultStore.
type faultRun struct {
	t     *testing.T
	fs    *FaultStore
	site  string
	e     *queue.Engine
	clock *Clock
}

func newFaultRun(t *testing.T, fs *FaultStore, site string) *faultRun {
	t.Helper()
	s := TestSite()
	s.ID = site
	clock := NewClock(monday9)
	// The faults and server aborts end transactions on purpose; the retry
	// that follows (after the server's deadlock detection, a second of
	// PostgreSQL's) must not also race the default 3 s store deadline on
	// a loaded machine: these cases check retries, not time-outs
	// (testHungStore does, with its own engine).
	e := StartEngine(t, queue.Opts{Store: fs, Sites: []queue.Site{s}, Clock: clock.Now, Batch: 32, StoreTimeout: 15 * time.Second})
	return &faultRun{t: t, fs: fs, site: site, e: e, clock: clock}
}

func (r *faultRun) req(device, key string) queue.Request {
	return queue.Request{Site: r.site, Device: device, Key: key}
}

// do sends request i of faultBatch with its idempotency key.
func (r *faultRun) do(ctx context.Context, i int) (queue.Ticket, error) {
	b := faultBatch[i]
	rq := r.req(fmt.Sprintf("%s-dev%d", r.site, i), "press-1")
	if b.service != "" {
		return r.e.Issue(ctx, queue.IssueRequest{Request: rq, Service: b.service})
	}
	return r.e.CallNext(ctx, queue.CounterRequest{Request: rq, Counter: b.counter})
}

// setup leaves A001 served at counter 1 and A002..A004 waiting.
func (r *faultRun) setup(ctx context.Context) {
	r.t.Helper()
	for i := 1; i <= 4; i++ {
		if _, err := r.e.Issue(ctx, queue.IssueRequest{Request: r.req(r.site+"-setup", fmt.Sprintf("s%d", i)), Service: "A"}); err != nil {
			r.t.Fatalf("setup: issue: %v", err)
		}
	}
	for i, op := range []func(context.Context, queue.CounterRequest) (queue.Ticket, error){r.e.CallNext, r.e.Start} {
		if _, err := op(ctx, queue.CounterRequest{Request: r.req(r.site+"-setup", fmt.Sprintf("c%d", i)), Counter: "1"}); err != nil {
			r.t.Fatalf("setup: counter 1: %v", err)
		}
	}
}

// batch sends every request of faultBatch together, so they commit in one
// transaction (the one after a held transaction), with f armed for it.
func (r *faultRun) batch(ctx context.Context, f *Fault) ([]queue.Ticket, []error) {
	r.t.Helper()
	waiting, release := r.fs.Hold()
	defer release()
	go func() {
		_, _ = r.e.Pause(ctx, queue.CounterRequest{Request: r.req(r.site+"-blocker", "pause"), Counter: "6"})
	}()
	select {
	case <-waiting:
	case <-time.After(10 * time.Second):
		r.t.Fatal("the blocking transaction never started")
	}
	r.fs.Arm(f)
	out := make([]queue.Ticket, len(faultBatch))
	errs := make([]error, len(faultBatch))
	var wg sync.WaitGroup
	for i := range faultBatch {
		wg.Add(1)
		go func() { defer wg.Done(); out[i], errs[i] = r.do(ctx, i) }()
	}
	// The requests queue behind the held transaction; 100 ms is ample for
	// six goroutines to submit, and a request that misses the batch only
	// lands in the next one (the checks hold either way).
	time.Sleep(100 * time.Millisecond)
	release()
	wg.Wait()
	return out, errs
}

// retryable reports whether a device is told to try again.
func retryable(err error) bool {
	return errors.Is(err, queue.ErrAborted) || errors.Is(err, queue.ErrUnavailable) || errors.Is(err, queue.ErrConflict)
}

// testAbortEveryStatement fails the batch at each of its statements in
// turn, and at COMMIT, as aborted (deadlock, certification conflict, killed
// query) and as unavailable (lost connection), plus a commit that landed
// while its answer was lost. Each time: no statement runs after the
// failure, every request either succeeds or is told to retry, a retry with
// the same key succeeds and a second retry returns the same ticket, and the
// events, tickets and counters agree (no orphan event, no number given
// twice, no ticket called twice).
func testAbortEveryStatement(t *testing.T, open func(t *testing.T) queue.Store) {
	ctx := t.Context()
	base := open(t)
	count := &Fault{Count: true, At: AtCommit}
	r := newFaultRun(t, NewFaultStore(base), "count")
	r.setup(ctx)
	r.batch(ctx, count)
	if count.Calls < 10 {
		t.Fatalf("the batch made %d store calls; want it whole in one transaction (10 or more)", count.Calls)
	}
	t.Logf("the batch makes %d store calls before COMMIT", count.Calls)
	type kind struct {
		name string
		err  error
	}
	kinds := []kind{
		{name: "aborted", err: fmt.Errorf("deadlock found when trying to get lock: %w", queue.ErrAborted)},
		{name: "unavailable", err: fmt.Errorf("connection lost: %w", queue.ErrUnavailable)},
	}
	// Each case is a site of its own with its own engine and FaultStore
	// (the plan, the hold and the violations are the FaultStore's), over
	// the one database: the cases run side by side.
	run := 0
	fault := func(name string, f *Fault) {
		run++
		site := fmt.Sprintf("f%d", run)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkFaultRun(t, NewFaultStore(base), site, name, f)
		})
	}
	for _, k := range kinds {
		for at := 0; at <= count.Calls; at++ {
			f := &Fault{At: at, Err: k.err}
			if at == count.Calls {
				f.At = AtCommit
			}
			fault(fmt.Sprintf("%s at %d", k.name, at), f)
		}
	}
	fault("commit landed, answer lost", &Fault{At: AtCommit, Landed: true, Err: kinds[1].err})
}

func checkFaultRun(t *testing.T, fs *FaultStore, site, name string, f *Fault) {
	t.Helper()
	ctx := t.Context()
	r := newFaultRun(t, fs, site)
	r.setup(ctx)
	got, errs := r.batch(ctx, f)
	if !f.Fired {
		t.Errorf("%s: the fault never fired (%d calls)", name, f.Calls)
	}
	for _, v := range fs.Violations() {
		t.Errorf("%s: %s", name, v)
	}
	for i, err := range errs {
		b := faultBatch[i]
		switch {
		case b.refused != nil && errors.Is(err, b.refused), err == nil && b.refused == nil:
		case retryable(err):
			// The device retries with the same key.
			got[i], errs[i] = r.do(ctx, i)
			if b.refused != nil && errors.Is(errs[i], b.refused) || errs[i] == nil && b.refused == nil {
				continue
			}
			t.Errorf("%s: %s: retry after %v: %v", name, b.name, err, errs[i])
		default:
			t.Errorf("%s: %s: %v; want success%s or a retryable error", name, b.name, err, map[bool]string{true: ", its refusal"}[b.refused != nil])
		}
	}
	for i, b := range faultBatch {
		if b.refused != nil || errs[i] != nil {
			continue
		}
		again, err := r.do(ctx, i)
		if err != nil || again.ID != got[i].ID || again.Number != got[i].Number {
			t.Errorf("%s: %s: second retry got %s (id %d), %v; want %s (id %d)", name, b.name, again.Number, again.ID, err, got[i].Number, got[i].ID)
		}
	}
	checkSiteAgrees(t, name, fs, site, got, errs)
}

// checkSiteAgrees holds a site's events against its tickets and counters:
// versions gapless from 1; every event's ticket exists with the event's
// number; one ISSUED event per ticket and per number; no ticket called
// again without a recall or re-entry between; every ticket a device was
// told about exists as it was told; and each counter holds the ticket its
// last event left it with.
func checkSiteAgrees(t *testing.T, name string, s queue.Store, site string, told []queue.Ticket, errs []error) {
	t.Helper()
	var evs []queue.Event
	tickets := map[int64]*queue.Ticket{}
	var counters []queue.CounterState
	err := s.View(t.Context(), func(ctx context.Context, tx queue.Tx) error {
		var err error
		if evs, err = tx.Events(ctx, queue.EventsQuery{Site: site}); err != nil {
			return err
		}
		all, err := tx.Find(ctx, queue.Filter{Site: site})
		if err != nil {
			return err
		}
		for i := range all {
			tickets[all[i].ID] = &all[i]
		}
		counters, err = tx.Counters(ctx, site)
		return err
	})
	if err != nil {
		t.Fatalf("%s: read site %s: %v", name, site, err)
	}
	issued := map[int64]int{}
	numbers := map[string]int{}
	called := map[int64]bool{}
	holds := map[string]int64{} // counter -> ticket, by the events
	for i, ev := range evs {
		if ev.Version != int64(i+1) {
			t.Errorf("%s: event %d has version %d: want gapless from 1", name, i, ev.Version)
		}
		if ev.TicketID == 0 {
			continue
		}
		tk, ok := tickets[ev.TicketID]
		if !ok {
			t.Errorf("%s: v%d %s %s: ticket %d does not exist", name, ev.Version, ev.Type, ev.Number, ev.TicketID)
			continue
		}
		if tk.Number != ev.Number {
			t.Errorf("%s: v%d %s names %s, ticket %d is %s", name, ev.Version, ev.Type, ev.Number, tk.ID, tk.Number)
		}
		switch ev.Type {
		case queue.EventIssued:
			issued[ev.TicketID]++
			numbers[tk.Service+"/"+ev.Number]++
		case queue.EventCalled:
			if called[ev.TicketID] {
				t.Errorf("%s: v%d: %s called again without a recall or re-entry", name, ev.Version, ev.Number)
			}
			called[ev.TicketID] = true
			holds[ev.Counter] = ev.TicketID
		case queue.EventReentered, queue.EventTransferred:
			called[ev.TicketID] = false
		}
		switch ev.Type {
		case queue.EventDone, queue.EventNoShow, queue.EventCancelled, queue.EventExpired, queue.EventTransferred:
			for c, id := range holds {
				if id == ev.TicketID {
					delete(holds, c)
				}
			}
		}
	}
	for id, tk := range tickets {
		if issued[id] != 1 {
			t.Errorf("%s: ticket %s (id %d) has %d ISSUED events, want 1", name, tk.Number, id, issued[id])
		}
	}
	var twice []string
	for n, c := range numbers {
		if c > 1 {
			twice = append(twice, n)
		}
	}
	sort.Strings(twice)
	if len(twice) > 0 {
		t.Errorf("%s: numbers issued more than once: %v", name, twice)
	}
	for i, tk := range told {
		if errs[i] != nil || tk.ID == 0 {
			continue
		}
		if got, ok := tickets[tk.ID]; !ok || got.Number != tk.Number {
			t.Errorf("%s: %s was told %s (id %d), which the store does not hold", name, faultBatch[i].name, tk.Number, tk.ID)
		}
	}
	for _, c := range counters {
		if c.TicketID != holds[c.ID] {
			t.Errorf("%s: counter %s holds ticket %d, its events leave it with %d", name, c.ID, c.TicketID, holds[c.ID])
		}
	}
}

// testCancelDuringCommit: with the store slowed to 50 ms a transaction,
// kiosks that give up after 10 ms share batches with kiosks that wait, so
// the batches commit after some callers left: those get their context's
// error, never a half-written result (the race detector watches the
// result the committer writes), and a retry with the same key returns the
// ticket that committed.
func testCancelDuringCommit(t *testing.T, open func(t *testing.T) queue.Store) {
	fs := NewFaultStore(open(t))
	fs.Slow(50 * time.Millisecond)
	r := newFaultRun(t, fs, "hq")
	ctx := t.Context()
	const rounds, kiosks = 4, 8
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make([]error, kiosks)
		for i := range errs {
			wg.Go(func() {
				cctx := ctx
				if i%2 == 0 {
					var cancel context.CancelFunc
					cctx, cancel = context.WithTimeout(ctx, 10*time.Millisecond)
					defer cancel()
				}
				_, errs[i] = r.e.Issue(cctx, queue.IssueRequest{Request: r.req(fmt.Sprintf("k%d", i), fmt.Sprintf("r%d", round)), Service: "A"})
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil && !(i%2 == 0 && errors.Is(err, context.DeadlineExceeded)) {
				t.Errorf("round %d: kiosk %d: %v; want success or its own deadline", round, i, err)
			}
		}
	}
	fs.Slow(0)
	seen := map[string]bool{}
	for round := range rounds {
		for i := range kiosks {
			tk, err := r.e.Issue(ctx, queue.IssueRequest{Request: r.req(fmt.Sprintf("k%d", i), fmt.Sprintf("r%d", round)), Service: "A"})
			if err != nil || tk.Number == "" || seen[tk.Number] {
				t.Errorf("round %d: kiosk %d retry: %q, %v (want its own ticket)", round, i, tk.Number, err)
			}
			seen[tk.Number] = true
		}
	}
	checkSiteAgrees(t, "cancel during commit", fs, "hq", nil, nil)
}

// testHungStore: a store that stops answering (every transaction waits
// until its deadline) fails requests with ErrUnavailable within the
// engine's StoreTimeout, reads too, and once it answers again a retry with
// the same key gets one ticket.
func testHungStore(t *testing.T, open func(t *testing.T) queue.Store) {
	fs := NewFaultStore(open(t))
	s := TestSite()
	const timeout = 300 * time.Millisecond
	e := StartEngine(t, queue.Opts{Store: fs, Sites: []queue.Site{s}, Clock: NewClock(monday9).Now, StoreTimeout: timeout})
	ctx := t.Context()
	req := queue.IssueRequest{Request: queue.Request{Site: "hq", Device: "kiosk", Key: "p1"}, Service: "A"}
	fs.Slow(time.Hour)
	var wg sync.WaitGroup
	errs := make([]error, 5)
	took := make([]time.Duration, 5)
	for i := range errs {
		wg.Go(func() {
			start := time.Now()
			r := req
			r.Device = fmt.Sprintf("kiosk%d", i)
			_, errs[i] = e.Issue(ctx, r)
			took[i] = time.Since(start)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, queue.ErrUnavailable) || took[i] > 3*timeout {
			t.Errorf("kiosk %d on a hung store: %v after %s; want ErrUnavailable within about %s", i, err, took[i], timeout)
		}
	}
	fs.Slow(0)
	first, err := e.Issue(ctx, req)
	if err != nil {
		t.Fatalf("issue once the store answers: %v", err)
	}
	again, err := e.Issue(ctx, req)
	if err != nil || again.ID != first.ID {
		t.Errorf("retry: %s, %v; want %s", again.Number, err, first.Number)
	}
}
