package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// RunCounterRace has one engine per store of opens press call-next at the
// same counter at the same instant, rounds times, while kiosks on every
// engine keep issuing (so requests share group-commit batches): exactly one
// engine must call a ticket each round, the others must be told the counter
// is busy (or that none is waiting; "try again" is resent), and the event
// log must hold one CALLED event per round, each of a ticket that exists.
func RunCounterRace(t *testing.T, opens []func(t *testing.T) queue.Store, rounds int) {
	runCounterRace(t, opens, nil, rounds)
}

func runCounterRace(t *testing.T, opens []func(t *testing.T) queue.Store, d *daemons, rounds int) {
	site := loadSite()
	engines, stores := startEngines(t, opens, d, site, NewClock(monday9))
	first := stores[0]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const counter = "1"
	var resends atomic.Int64
	stop := make(chan struct{})
	var kiosks sync.WaitGroup
	for k := 0; k < 4*len(engines); k++ {
		Until(&kiosks, stop, func(n int) bool {
			r := queue.IssueRequest{Request: queue.Request{Site: "load", Device: fmt.Sprintf("kiosk-%d", k), Key: fmt.Sprint(n)}, Service: site.Services[n%3].Code}
			if _, err := resend(&resends, func() (queue.Ticket, error) { return engines[k%len(engines)].Issue(ctx, r) }); err != nil {
				t.Errorf("kiosk %d: issue: %v", k, err)
				return false
			}
			return true
		})
	}
	defer kiosks.Wait()
	defer close(stop)
	for r := 1; r <= rounds; r++ {
		issue := queue.IssueRequest{Request: queue.Request{Site: "load", Device: "kiosk", Key: fmt.Sprint(r)}, Service: "A"}
		// Resent on "try again" with the same key, as a kiosk does: on
		// Galera the kiosks of the other node may win the certification of
		// the site's rows more times in a row than the store retries.
		if _, err := resend(&resends, func() (queue.Ticket, error) { return engines[r%len(engines)].Issue(ctx, issue) }); err != nil {
			t.Fatalf("round %d: issue: %v", r, err)
		}
		results := make([]error, len(engines))
		tickets := make([]queue.Ticket, len(engines))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, e := range engines {
			wg.Go(func() {
				req := queue.CounterRequest{Request: queue.Request{Site: "load", Device: fmt.Sprintf("keypad-%d", i), Key: fmt.Sprint(r)}, Counter: counter}
				<-start
				tickets[i], results[i] = resend(&resends, func() (queue.Ticket, error) { return e.CallNext(ctx, req) })
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range results {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: engines %d and %d both called at counter %s: %s and %s",
					r, winner, i, counter, tickets[winner].Number, tickets[i].Number)
			case err == nil:
				winner = i
			case errors.Is(err, queue.ErrCounterBusy), errors.Is(err, queue.ErrNoneWaiting):
			default:
				t.Fatalf("round %d: engine %d: call next: %v", r, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no engine called the waiting ticket: %v", r, results)
		}
		// Free the counter from the other engine, so it must see the call.
		free := queue.CounterRequest{Request: queue.Request{Site: "load", Device: "closer", Key: fmt.Sprint(r)}, Counter: counter}
		if _, err := resend(&resends, func() (queue.Ticket, error) { return engines[(winner+1)%len(engines)].NoShow(ctx, free) }); err != nil {
			t.Fatalf("round %d: no-show of %s: %v", r, tickets[winner].Number, err)
		}
	}
	t.Logf("%d requests resent after the store gave up on a conflict or an aborted transaction", resends.Load())
	var evs []queue.Event
	err := first.View(ctx, func(ctx context.Context, tx queue.Tx) error {
		var err error
		evs, err = tx.Events(ctx, queue.EventsQuery{Site: "load", Limit: 1 << 30})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	checkTickets(t, first, evs)
	called := map[int64]int{}
	for _, ev := range evs {
		if ev.Type == queue.EventCalled {
			called[ev.TicketID]++
		}
	}
	if len(called) != rounds {
		t.Errorf("%d tickets called, want %d", len(called), rounds)
	}
	for id, n := range called {
		if n != 1 {
			t.Errorf("ticket %d called %d times", id, n)
		}
	}
}

// RunReadAfterWrite has a kiosk take a ticket through the first engine and
// a display ask its position through each of the others right after, n
// times: an engine on another node of a cluster must see what the cluster
// committed before it was asked.
func RunReadAfterWrite(t *testing.T, opens []func(t *testing.T) queue.Store, n int) {
	clock := NewClock(monday9)
	engines := make([]*queue.Engine, len(opens))
	for i, open := range opens {
		en := &env{t: t, ctx: context.Background(), clock: clock, store: open(t)}
		en.start([]queue.Site{loadSite()})
		engines[i] = en.e
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	missed := 0
	for k := 0; k < n; k++ {
		r := queue.IssueRequest{Request: queue.Request{Site: "load", Device: "kiosk", Key: fmt.Sprint(k)}, Service: "A"}
		tk, err := engines[0].Issue(ctx, r)
		if err != nil {
			t.Fatalf("issue %d: %v", k, err)
		}
		for i, e := range engines[1:] {
			_, err := e.Position(ctx, "load", tk.Number)
			switch {
			case errors.Is(err, queue.ErrNotFound):
				missed++
			case err != nil:
				t.Fatalf("engine %d: position of %s: %v", i+1, tk.Number, err)
			}
		}
	}
	if missed > 0 {
		t.Errorf("%d of %d tickets not found by another engine right after they were issued", missed, n*(len(engines)-1))
	}
}
