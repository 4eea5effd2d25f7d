package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// loadSite has three services and ten counters serving all of them.
func loadSite() queue.Site {
	s := queue.Site{ID: "load", Location: shanghai, Rollover: 4 * time.Hour}
	for _, c := range []string{"A", "B", "C"} {
		s.Services = append(s.Services, queue.Service{Code: c, Prefix: c, Width: 4, MaxReentries: 1})
	}
	for i := 1; i <= 10; i++ {
		c := queue.Counter{ID: fmt.Sprint(i), Policy: queue.PolicyStrict}
		for k := 0; k < 3; k++ {
			c.Services = append(c.Services, queue.CounterService{Service: s.Services[(i+k)%3].Code, Weight: 1})
		}
		s.Counters = append(s.Counters, c)
	}
	return s
}

// RunConcurrency issues tickets from many goroutines while counters call,
// recall, no-show and complete, then checks the invariants of DESIGN §6 on
// what was committed. Scale it down with short tests only by the caller.
func RunConcurrency(t *testing.T, open func(t *testing.T) queue.Store, issuers, tickets, counters int) {
	RunConcurrencyAcross(t, []func(t *testing.T) queue.Store{open}, issuers, tickets, counters)
}

// RunConcurrencyAcross is RunConcurrency with one engine per store of
// opens, as daemons sharing one database or each on its own node of a
// cluster: issuer g and counter c go through engine g and c modulo the
// number of engines. Afterwards every engine must read the same valid event
// log, and every event's ticket must exist.
func RunConcurrencyAcross(t *testing.T, opens []func(t *testing.T) queue.Store, issuers, tickets, counters int) {
	runConcurrencyAcross(t, opens, nil, issuers, tickets, counters)
}

// startEngines opens one store and starts one engine per open, tuned by d
// (nil: plain engines), all on one clock.
func startEngines(t *testing.T, opens []func(t *testing.T) queue.Store, d *daemons, site queue.Site, clock *Clock) ([]*queue.Engine, []queue.Store) {
	engines := make([]*queue.Engine, len(opens))
	stores := make([]queue.Store, len(opens))
	for i, open := range opens {
		stores[i] = open(t)
		en := &env{t: t, ctx: context.Background(), clock: clock, store: stores[i], d: d, i: i}
		en.start([]queue.Site{site})
		engines[i] = en.e
	}
	return engines, stores
}

// keypad plays counter id on e until its calls find no ticket after done
// is set: call next, sometimes recall, sometimes mark a no-show, else
// start and, half the time, complete (else the next call completes it).
// Every request is resent as is while the store gives up on it.
func keypad(ctx context.Context, e *queue.Engine, id string, seed uint64, done *atomic.Bool, resends *atomic.Int64) error {
	rng := rand.New(rand.NewPCG(seed, 7))
	k := 0
	// press sends one keypad request with a new key.
	press := func(name string, op func(context.Context, queue.CounterRequest) (queue.Ticket, error)) error {
		k++
		r := queue.CounterRequest{Request: queue.Request{Site: "load", Device: "keypad-" + id, Key: fmt.Sprint(k)}, Counter: id}
		if _, err := resend(resends, func() (queue.Ticket, error) { return op(ctx, r) }); err != nil {
			return fmt.Errorf("counter %s %s: %w", id, name, err)
		}
		return nil
	}
	for {
		err := press("next", e.CallNext)
		if errors.Is(err, queue.ErrNoneWaiting) {
			if done.Load() {
				return nil
			}
			time.Sleep(5 * time.Millisecond)
			continue
		}
		if err != nil {
			return err
		}
		if rng.IntN(5) == 0 {
			if err := press("recall", e.Recall); err != nil {
				return err
			}
		}
		if rng.IntN(8) == 0 {
			if err := press("no-show", e.NoShow); err != nil {
				return err
			}
			continue
		}
		if err := press("start", e.Start); err != nil {
			return err
		}
		if rng.IntN(2) == 0 {
			if err := press("done", e.Complete); err != nil {
				return err
			}
		}
	}
}

func runConcurrencyAcross(t *testing.T, opens []func(t *testing.T) queue.Store, d *daemons, issuers, tickets, counters int) {
	site := loadSite()
	clock := NewClock(monday9)
	engines, stores := startEngines(t, opens, d, site, clock)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	var issued, resends atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, issuers+counters)
	next := atomic.Int64{}
	for g := 0; g < issuers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for {
				n := next.Add(1)
				if n > int64(tickets) {
					return
				}
				svc := site.Services[n%3].Code
				r := queue.IssueRequest{Request: queue.Request{Site: "load", Device: fmt.Sprintf("kiosk-%d", g), Key: fmt.Sprint(n)}, Service: svc}
				if _, err := resend(&resends, func() (queue.Ticket, error) { return engines[g%len(engines)].Issue(ctx, r) }); err != nil {
					errc <- fmt.Errorf("issue %d: %w", n, err)
					return
				}
				issued.Add(1)
			}
		}(g)
	}
	var done atomic.Bool
	var cw sync.WaitGroup
	for c := 1; c <= counters; c++ {
		cw.Add(1)
		go func(id string, seed uint64, e *queue.Engine) {
			defer cw.Done()
			if err := keypad(ctx, e, id, seed, &done, &resends); err != nil {
				errc <- err
			}
		}(fmt.Sprint(c), uint64(c), engines[c%len(engines)])
	}
	wg.Wait()
	done.Store(true)
	cw.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if n := resends.Load(); n > 0 {
		t.Logf("%d requests resent after the store gave up on a conflict or an aborted transaction", n)
	}
	if t.Failed() {
		return
	}
	if got := issued.Load(); got != int64(tickets) {
		t.Fatalf("issued %d, want %d", got, tickets)
	}
	// Close every counter's last ticket, then end the day.
	e := engines[0]
	for _, c := range site.Counters {
		k := queue.CounterRequest{Request: queue.Request{Site: "load", Device: "closer"}, Counter: c.ID}
		if _, err := e.Complete(ctx, k); err != nil && !errors.Is(err, queue.ErrCounterIdle) {
			t.Fatalf("close counter %s: %v", c.ID, err)
		}
	}
	var first []queue.Event
	for i, e := range engines {
		evs, err := allEvents(ctx, e, "load")
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			checkTickets(t, stores[0], evs)
			checkEvents(t, evs, tickets)
			first = evs
		} else if len(evs) != len(first) {
			t.Fatalf("engine %d reads %d events, engine 0 %d", i, len(evs), len(first))
		}
	}
	clock.Add(24 * time.Hour)
	if _, err := e.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err := e.Snapshot(ctx, "load")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range snap.Counters {
		if c.Ticket != nil {
			t.Errorf("counter %s still holds %s after the day ended", c.ID, c.Ticket.Number)
		}
	}
}

// maxResends is how many times the suites send a request again when the
// store answers "try again".
const maxResends = 10

// Until runs work(1), work(2), ... on a goroutine of wg until stop is
// closed or work returns false: a test's load in the background.
func Until(wg *sync.WaitGroup, stop <-chan struct{}, work func(n int) bool) {
	wg.Go(func() {
		for n := 1; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			if !work(n) {
				return
			}
		}
	})
}

// resend runs op, and runs it again (the same request, with the same key)
// while it fails with an error devices are told to retry: the store gave up
// on conflicting or aborted transactions. It counts the resends in n.
func resend[T any](n *atomic.Int64, op func() (T, error)) (T, error) {
	for try := 0; ; try++ {
		v, err := op()
		if try == maxResends || !(errors.Is(err, queue.ErrConflict) || errors.Is(err, queue.ErrAborted)) {
			return v, err
		}
		n.Add(1)
	}
}

// checkTickets reads the ticket of every event: an event whose ticket does
// not exist (its insert rolled back while the event committed) announced a
// number nobody holds.
func checkTickets(t *testing.T, s queue.Store, evs []queue.Event) {
	t.Helper()
	var tickets []queue.Ticket
	err := s.View(context.Background(), func(ctx context.Context, tx queue.Tx) error {
		var err error
		tickets, err = tx.Find(ctx, queue.Filter{Site: "load"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	byID := make(map[int64]queue.Ticket, len(tickets))
	for _, tk := range tickets {
		byID[tk.ID] = tk
	}
	orphans := 0
	for _, ev := range evs {
		tk, ok := byID[ev.TicketID]
		switch {
		case ev.TicketID == 0: // a counter's event
		case !ok:
			if orphans++; orphans <= 10 {
				t.Errorf("v%d: %s of %s: ticket %d does not exist", ev.Version, ev.Type, ev.Number, ev.TicketID)
			}
		case tk.Number != ev.Number:
			t.Errorf("v%d: %s of %s: ticket %d is %s", ev.Version, ev.Type, ev.Number, ev.TicketID, tk.Number)
		}
	}
	if orphans > 0 {
		t.Errorf("%d events of tickets that do not exist", orphans)
	}
}

// checkEvents replays the event log: versions gapless from 1, every number
// issued once, no ticket called while another counter holds it, no counter
// holding two tickets, and every ticket ending in a terminal state.
func checkEvents(t *testing.T, evs []queue.Event, tickets int) {
	t.Helper()
	type tstate struct {
		number, service string
		status          queue.Status
		counter         string
	}
	byID := map[int64]*tstate{}
	numbers := map[string]bool{}
	holding := map[string]int64{} // counter -> ticket
	for i, ev := range evs {
		if ev.Version != int64(i+1) {
			t.Fatalf("event %d has version %d: versions must be gapless from 1", i, ev.Version)
		}
		st := byID[ev.TicketID]
		switch ev.Type {
		case queue.EventIssued:
			if st != nil || numbers[ev.Service+"/"+ev.Number] {
				t.Fatalf("v%d: %s issued twice", ev.Version, ev.Number)
			}
			numbers[ev.Service+"/"+ev.Number] = true
			byID[ev.TicketID] = &tstate{number: ev.Number, service: ev.Service, status: queue.StatusWaiting}
			continue
		}
		if st == nil {
			t.Fatalf("v%d: %s for unknown ticket %d", ev.Version, ev.Type, ev.TicketID)
		}
		switch ev.Type {
		case queue.EventCalled:
			if st.status != queue.StatusWaiting {
				t.Fatalf("v%d: %s called at %s while %s at %s", ev.Version, st.number, ev.Counter, st.status, st.counter)
			}
			if other, busy := holding[ev.Counter]; busy {
				t.Fatalf("v%d: counter %s calls %s while holding ticket %d", ev.Version, ev.Counter, st.number, other)
			}
			holding[ev.Counter] = ev.TicketID
			st.counter = ev.Counter
		case queue.EventDone, queue.EventNoShow, queue.EventCancelled, queue.EventExpired:
			if st.counter != "" && holding[st.counter] == ev.TicketID {
				delete(holding, st.counter)
			}
			st.counter = ""
		case queue.EventRecalled, queue.EventServing:
			if holding[ev.Counter] != ev.TicketID {
				t.Fatalf("v%d: %s %s at %s which does not hold it", ev.Version, ev.Type, st.number, ev.Counter)
			}
		}
		st.status = ev.Status
	}
	if len(byID) != tickets {
		t.Errorf("%d tickets issued in the log, want %d", len(byID), tickets)
	}
	for id, st := range byID {
		if !st.status.Terminal() {
			t.Errorf("ticket %d (%s) ends the day %s", id, st.number, st.status)
		}
	}
}

// allEvents reads a site's events in pages, each within the engine's
// store timeout: one read of all of them (some thousands, under -race on a
// loaded machine) can outlast it, and the test is not about that.
func allEvents(ctx context.Context, e *queue.Engine, site string) ([]queue.Event, error) {
	var all []queue.Event
	for evs, err := range e.EventPages(ctx, site, 0, 2000) {
		if err != nil {
			return nil, err
		}
		all = append(all, evs...)
	}
	return all, nil
}
