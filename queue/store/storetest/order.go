package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// testOrder checks the engines' waiting order in memory against the
// store: after every step of a random run of operations (issues of every
// class, calls, no-shows and re-entries, transfers, cancels, pauses, and a
// burst of revisits that makes place renumber a band), every waiting
// ticket's people ahead and wait estimate from OrderPosition equal the
// store's COUNT (tx.Ahead) and counters. With two engines over one store
// (two daemons on one database), the operations go through either and the
// first follows the second's commits from the event log.
func testOrder(t *testing.T, open func(t *testing.T) queue.Store, engines int) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	en := newEnv(t, open)
	es := []*queue.Engine{en.e}
	if engines > 1 {
		es = nil // engines that poll the log for each other's commits
	}
	for len(es) < engines {
		e := StartEngine(t, queue.Opts{Store: en.store, Sites: []queue.Site{TestSite()}, Clock: en.clock.Now, Batch: 32,
			Follow: true, PollInterval: 2 * time.Millisecond, PollIdle: 2 * time.Millisecond})
		es = append(es, e)
	}
	subs := make([]*queue.Subscription, len(es))
	for i, e := range es {
		s, err := e.Subscribe("hq", 0)
		if err != nil {
			t.Fatal(err)
		}
		subs[i] = s
	}
	var numbers []string // every number issued, for re-entries and cancels
	step := func(i int, op string, args ...string) {
		t.Helper()
		e := es[rng.IntN(len(es))]
		tk, err := Do(en.ctx, e, en.req(), op, args...)
		if err == nil && op == "issue" {
			numbers = append(numbers, tk.Number)
		}
		if err != nil && !queue.IsRefusal(err) {
			t.Fatalf("step %d: %s %v: %v", i, op, args, err)
		}
		checkOrder(t, en, es, subs, fmt.Sprintf("step %d (%s %v)", i, op, args))
	}
	counters := []string{"1", "2", "3", "4", "5", "8"}
	classes := []string{"normal", "normal", "revisit", "vip", "emergency"}
	for i := 0; i < 120; i++ {
		c := counters[rng.IntN(len(counters))]
		switch r := rng.IntN(20); {
		case r < 8:
			step(i, "issue", []string{"A", "A", "P", "V", "E"}[rng.IntN(5)], classes[rng.IntN(len(classes))])
		case r < 10:
			step(i, "next", c)
		case r < 11:
			step(i, "start", c)
		case r < 12:
			step(i, "done", c)
		case r < 13:
			step(i, "noshow", c)
		case r < 14 && len(numbers) > 0:
			step(i, "reenter", numbers[rng.IntN(len(numbers))])
		case r < 15 && len(numbers) > 0:
			step(i, "cancel", numbers[rng.IntN(len(numbers))])
		case r < 16:
			step(i, "transfer-service", c, []string{"A", "P", "V"}[rng.IntN(3)])
		case r < 17:
			step(i, "transfer-counter", c, counters[rng.IntN(len(counters))])
		case r < 18:
			step(i, "pause", c)
		default:
			step(i, "resume", c)
		}
	}
	// Revisits go 3 after the head, each between the last one and the
	// ticket after it: the gap halves until place renumbers the band.
	for i := 0; i < 25; i++ {
		step(120+i, "issue", "A", "revisit")
	}
}

// checkOrder waits until every engine's feed has the store's last version
// and compares each engine's positions with the store's.
func checkOrder(t *testing.T, en *env, es []*queue.Engine, subs []*queue.Subscription, when string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(en.ctx, 10*time.Second)
	defer cancel()
	var last int64
	var waiting []queue.Ticket
	paused := map[string]bool{}
	want := map[int64]int{}
	err := en.store.View(ctx, func(ctx context.Context, tx queue.Tx) error {
		var err error
		if last, err = tx.LastVersion(ctx, "hq"); err != nil {
			return err
		}
		if waiting, err = tx.Find(ctx, queue.Filter{Site: "hq", Statuses: []queue.Status{queue.StatusWaiting}}); err != nil {
			return err
		}
		for i := range waiting {
			if want[waiting[i].ID], err = tx.Ahead(ctx, &waiting[i]); err != nil {
				return err
			}
		}
		cs, err := tx.Counters(ctx, "hq")
		for _, c := range cs {
			paused[c.ID] = c.Mode != queue.CounterOpen
		}
		return err
	})
	if err != nil {
		t.Fatalf("%s: read the store: %v", when, err)
	}
	site := TestSite()
	for i, e := range es {
		for subs[i].Version() < last {
			// Its own commits are in its feed; another engine's come
			// with its next poll of the log (or its next commit).
			if _, err := subs[i].Next(ctx); err != nil {
				t.Fatalf("%s: engine %d follows the log: %v", when, i, err)
			}
		}
		for _, w := range waiting {
			p, ok := e.OrderPosition(w)
			if !ok {
				t.Fatalf("%s: engine %d has no waiting order", when, i)
			}
			if p.Ahead != want[w.ID] {
				t.Errorf("%s: engine %d: %s (%s, target %q): %d ahead in memory, the store counts %d", when, i, w.Number, w.Queue, w.TargetCounter, p.Ahead, want[w.ID])
			}
			if wait := wantWait(&site, w.Queue, want[w.ID], paused); p.Wait != wait {
				t.Errorf("%s: engine %d: %s waits %s by memory, %s by the store", when, i, w.Number, p.Wait, wait)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// wantWait is the estimate the engine gives, from the store's figures: n
// ahead times the average service time, over the counters serving the
// queue that are not paused (at least one).
func wantWait(s *queue.Site, code string, n int, paused map[string]bool) time.Duration {
	var avg time.Duration
	for _, sv := range s.Services {
		if sv.Code == code {
			avg = sv.AvgService
		}
	}
	if n == 0 || avg == 0 {
		return 0
	}
	open := 0
	for _, c := range s.Counters {
		for _, cs := range c.Services {
			if cs.Service == code && !paused[c.ID] {
				open++
				break
			}
		}
	}
	return time.Duration(n) * avg / time.Duration(max(open, 1))
}
