package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// Shared is one database that several daemons share.
type Shared struct {
	// Open opens daemon i's store on the database (on a cluster, on node
	// i modulo the nodes); closed when the test ends.
	Open func(tb testing.TB, i int) queue.Store
	// Notifier, when set, returns daemon i's notifier on the database
	// (PostgreSQL LISTEN/NOTIFY); without one the engines poll.
	Notifier func(tb testing.TB, i int) queue.Notifier
}

// FollowPoll is the fast poll of the engines of the follow suite, the
// daemon's default.
const FollowPoll = queue.DefaultPollInterval

// daemons tunes the engines of a multi-daemon suite: tune before New,
// started after.
type daemons struct {
	tune    func(t *testing.T, i int, o *queue.Opts)
	started func(t *testing.T, i int, e *queue.Engine)
}

// following returns the engine tuning of daemons that follow each other
// through sh: the fast poll and sh's notifier.
func following(sh Shared) func(t *testing.T, i int, o *queue.Opts) {
	return func(t *testing.T, i int, o *queue.Opts) {
		o.Follow, o.PollInterval = true, FollowPoll
		if sh.Notifier != nil {
			o.Notifier = sh.Notifier(t, i)
		}
	}
}

// RunFollow runs two daemons (engines, each on its own store) on one
// database that fresh makes for each case: a call on one reaches a
// subscriber of the other, quiet, in under a second; then kiosks and
// keypads on both, and both racing at one counter, while a subscriber on
// each daemon must see every event of the site, in version order, each
// within a second of the run's end; the invariants are checked on what was
// committed.
func RunFollow(t *testing.T, fresh func(tb testing.TB) Shared) {
	t.Run("delay", func(t *testing.T) {
		d := FollowDelays(t, fresh(t), 60)
		slices.Sort(d)
		t.Logf("call on daemon 0 to event on daemon 1, %d calls: p50 %s, p99 %s, max %s", len(d), Quantile(d, 0.5), Quantile(d, 0.99), d[len(d)-1])
		if d[len(d)-1] > time.Second {
			t.Errorf("slowest call took %s to reach the other daemon, want under 1s", d[len(d)-1])
		}
	})
	t.Run("concurrency", func(t *testing.T) {
		sh := fresh(t)
		w := &watchers{}
		runConcurrencyAcross(t, sh.opens(2), w.daemons(sh), 8, 300, 6)
		w.check(t)
	})
	t.Run("counter race", func(t *testing.T) {
		sh := fresh(t)
		w := &watchers{}
		runCounterRace(t, sh.opens(2), w.daemons(sh), 30)
		w.check(t)
	})
}

// opens are n daemons' opens for the suites of several engines.
func (sh Shared) opens(n int) []func(t *testing.T) queue.Store {
	out := make([]func(t *testing.T) queue.Store, n)
	for i := range out {
		out[i] = func(t *testing.T) queue.Store { return sh.Open(t, i) }
	}
	return out
}

// FollowDelays starts two following engines on sh; daemon 1 stays quiet
// with one subscriber while daemon 0 calls calls tickets at a counter, one
// at a time, at random moments. It returns, per call, the time from the
// call's answer on daemon 0 to its CALLED event reaching the subscriber on
// daemon 1 (0 when the event came first).
func FollowDelays(tb testing.TB, sh Shared, calls int) []time.Duration {
	site := TestSite()
	eng := make([]*queue.Engine, 2)
	for i := range eng {
		o := queue.Opts{Store: sh.Open(tb, i), Sites: []queue.Site{site}, Follow: true, PollInterval: FollowPoll}
		if sh.Notifier != nil {
			o.Notifier = sh.Notifier(tb, i)
		}
		e := StartEngine(tb, o)
		eng[i] = e
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	svc, counter := site.Services[0].Code, site.Counters[0].ID
	for n := 0; n < calls; n++ {
		r := queue.IssueRequest{Request: queue.Request{Site: site.ID, Device: "kiosk", Key: fmt.Sprint(n)}, Service: svc}
		if _, err := eng[0].Issue(ctx, r); err != nil {
			tb.Fatalf("issue: %v", err)
		}
	}
	sub, err := eng[1].Subscribe(site.ID, 0)
	if err != nil {
		tb.Fatal(err)
	}
	seen := Arrivals(ctx, sub)
	arrived := map[int64]time.Time{}
	wait := func(id int64) time.Time {
		for {
			if at, ok := arrived[id]; ok {
				return at
			}
			select {
			case a := <-seen:
				arrived[a.TicketID] = a.At
			case <-time.After(5 * time.Second):
				tb.Fatalf("the CALLED event of ticket %d never reached daemon 1", id)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]time.Duration, 0, calls)
	for n := 0; n < calls; n++ {
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond) // not in step with a poll
		r := queue.CounterRequest{Request: queue.Request{Site: site.ID, Device: "keypad", Key: fmt.Sprint(n)}, Counter: counter}
		tk, err := eng[0].CallNext(ctx, r)
		if err != nil {
			tb.Fatalf("call %d: %v", n, err)
		}
		answered := time.Now()
		out = append(out, max(wait(tk.ID).Sub(answered), 0))
		r.Key += "s"
		if _, err := eng[0].Start(ctx, r); err != nil {
			tb.Fatalf("start %d: %v", n, err)
		}
	}
	return out
}

// Arrival is a CALLED event's ticket and when a subscriber got it.
type Arrival struct {
	TicketID int64
	At       time.Time
}

// Arrivals delivers, for each CALLED event sub delivers, its ticket and
// when it arrived, until ctx ends.
func Arrivals(ctx context.Context, sub *queue.Subscription) <-chan Arrival {
	out := make(chan Arrival, 16)
	go func() {
		for {
			evs, err := sub.Next(ctx)
			if err != nil {
				return
			}
			for _, ev := range evs {
				if ev.Type == queue.EventCalled {
					select {
					case out <- Arrival{ev.TicketID, time.Now()}:
					case <-ctx.Done():
						return
					}
				}
			}
		}
	}()
	return out
}

// Quantile is the q-quantile of sorted durations (nearest rank).
func Quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// watchers subscribe to the site on every engine of a suite and record the
// versions each one delivers.
type watchers struct {
	mu   sync.Mutex
	subs []*watcher
}

type watcher struct {
	e        *queue.Engine
	mu       sync.Mutex
	versions []int64
}

// daemons tunes a suite's engines to follow sh, each watched.
func (w *watchers) daemons(sh Shared) *daemons {
	return &daemons{tune: following(sh), started: func(t *testing.T, i int, e *queue.Engine) {
		x := &watcher{e: e}
		Watch(t, e, "load", func(evs []queue.Event) {
			x.mu.Lock()
			for _, ev := range evs {
				x.versions = append(x.versions, ev.Version)
			}
			x.mu.Unlock()
		})
		w.mu.Lock()
		w.subs = append(w.subs, x)
		w.mu.Unlock()
	}}
}

// Watch subscribes to e's events of site from the first and hands fn each
// batch the subscription delivers, on a goroutine of its own, until the
// test ends.
func Watch(tb testing.TB, e *queue.Engine, site string, fn func(evs []queue.Event)) {
	tb.Helper()
	sub, err := e.Subscribe(site, 0)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	go func() {
		for {
			evs, err := sub.Next(ctx)
			if err != nil {
				return
			}
			fn(evs)
		}
	}()
}

// check waits up to a second for every watcher to reach the site's last
// version and checks that each saw versions 1..last in order.
func (w *watchers) check(t *testing.T) {
	t.Helper()
	if t.Failed() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	last, err := w.subs[0].e.LastVersion(context.Background(), "load")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Second)
	for i, x := range w.subs {
		for {
			x.mu.Lock()
			n := len(x.versions)
			x.mu.Unlock()
			if int64(n) >= last {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("daemon %d delivered %d of %d events within 1s of the end", i, n, last)
			}
			time.Sleep(5 * time.Millisecond)
		}
		x.mu.Lock()
		for k, v := range x.versions {
			if v != int64(k+1) {
				t.Fatalf("daemon %d delivered version %d as its event %d", i, v, k+1)
			}
		}
		x.mu.Unlock()
	}
}

// BenchFollowDelay reports the delay of FollowDelays over 200 calls per
// iteration: p50, p99 and the slowest, in milliseconds.
func BenchFollowDelay(b *testing.B, fresh func(tb testing.TB) Shared) {
	var all []time.Duration
	for range b.N {
		all = append(all, FollowDelays(b, fresh(b), 200)...)
	}
	slices.Sort(all)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(Quantile(all, 0.5)), "p50_ms")
	b.ReportMetric(ms(Quantile(all, 0.99)), "p99_ms")
	b.ReportMetric(ms(all[len(all)-1]), "max_ms")
}
