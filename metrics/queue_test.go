package metrics

import (
	"context"
	"fmt"
	"github.com/nowserving/nowserving/follow"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nowserving/nowserving/internal/testkit/parttest"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestQueue runs a morning at one site and compares every queue metric with
// testdata/queue.golden: A001 is issued before the collector starts (its
// wait is read back from the engine), both A tickets wait 25 minutes against
// a 20 minute target, A002 is a no-show, B001 is served in 10 minutes.
func TestQueue(t *testing.T) {
	c := storetest.FixedClock(at("09:00"))
	eng := newEngine(t, storetest.SQLite(t), c)
	ctx := context.Background()
	req := func(dev string) queue.Request { return queue.Request{Site: "main", Device: dev} }
	issue := func(hhmm, svc string) {
		t.Helper()
		c.Fix(at(hhmm))
		if _, err := eng.Issue(ctx, queue.IssueRequest{Request: req("kiosk"), Service: svc}); err != nil {
			t.Fatalf("issue %s at %s: %v", svc, hhmm, err)
		}
	}
	counter := func(hhmm, counter, op string) {
		t.Helper()
		c.Fix(at(hhmm))
		if _, err := storetest.Do(ctx, eng, req("keypad"+counter), op, counter); err != nil {
			t.Fatalf("%s counter %s at %s: %v", op, counter, hhmm, err)
		}
	}

	issue("09:00", "A") // before the collector starts

	q, reg := onRegistry(t, func(reg prometheus.Registerer) (*Queue, error) {
		return NewQueue(QueueOpts{Engine: eng, Registry: reg})
	})
	defer parttest.Stop(t, q, parttest.Go(ctx, q)) // Go runs now, Stop at return
	// Run subscribes from the version it finds; wait for it.
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := q.waitVersion(wctx, "main", 1); err != nil {
		t.Fatalf("collector did not start: %v", err)
	}

	issue("09:05", "A")
	issue("09:05", "B")
	counter("09:25", "1", "next") // A001, waited 25m: breach
	counter("09:26", "1", "start")
	counter("09:30", "1", "done") // served in 4m
	counter("09:30", "1", "next") // A002, waited 25m: breach
	counter("09:31", "1", "noshow")
	counter("09:32", "2", "next") // B001, waited 27m, B has no target
	counter("09:33", "2", "start")
	counter("09:43", "2", "done") // served in 10m
	issue("09:40", "A")
	counter("09:44", "2", "pause")
	c.Fix(at("09:45"))

	snap, err := eng.Snapshot(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	if err := q.waitVersion(wctx, "main", snap.Version); err != nil {
		t.Fatalf("collector stuck before version %d: %v", snap.Version, err)
	}
	compareGolden(t, reg, "queue.golden")
}

// TestQueueGap: a collector that falls too far behind takes a snapshot and
// goes on from its version instead of stopping.
func TestQueueGap(t *testing.T) {
	c := storetest.FixedClock(at("09:00"))
	st := storetest.SQLite(t)
	eng := storetest.StartEngine(t, queue.Opts{Store: st, Sites: []queue.Site{testSite()}, Clock: c.Now, FeedSize: 2, MaxReplay: 2})
	reg := prometheus.NewRegistry()
	q, err := NewQueue(QueueOpts{Engine: eng, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f := follow.New(eng, "main", follow.Opts{Resume: true})
	for i := 0; i < 5; i++ {
		if _, err := eng.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: "main", Device: "k"}, Service: "A"}); err != nil {
			t.Fatal(err)
		}
	}
	// The follower starts at 0 and is 5 events behind a replay limit of 2.
	rctx, rcancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { q.follow(rctx, testSite(), f); done <- nil }()
	if err := q.waitVersion(ctx, "main", 5); err != nil {
		t.Fatalf("follower did not recover from the gap: %v", err)
	}
	rcancel()
	if err := <-done; err != nil {
		t.Errorf("follow: %v", err)
	}
	if got := testutilValue(t, q.issued, "main", "A"); got != 0 {
		t.Errorf("issued after a skipped gap = %v, want 0 (skipped events are not counted)", got)
	}
}

func testutilValue(t *testing.T, v *prometheus.CounterVec, labels ...string) float64 {
	t.Helper()
	m, err := v.GetMetricWithLabelValues(labels...)
	if err != nil {
		t.Fatal(err)
	}
	return testutilToFloat(m)
}

// flaky fails its first n Views, as a store that is not up yet.
type flaky struct {
	queue.Store
	mu sync.Mutex
	n  int
}

func (f *flaky) View(ctx context.Context, fn func(context.Context, queue.Tx) error) error {
	f.mu.Lock()
	fail := f.n > 0
	f.n--
	f.mu.Unlock()
	if fail {
		return fmt.Errorf("test: %w", queue.ErrUnavailable)
	}
	return f.Store.View(ctx, fn)
}

// TestQueueStoreDown: Run does not fail when the store does not answer at
// first; it retries and then counts.
func TestQueueStoreDown(t *testing.T) {
	c := storetest.FixedClock(at("09:00"))
	st := &flaky{Store: storetest.SQLite(t)}
	eng := newEngine(t, st, c)
	reg := prometheus.NewRegistry()
	q, err := NewQueue(QueueOpts{Engine: eng, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	st.n = 1
	st.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx) }()
	poll.Until(t, "Run's snapshot, a second after the failed one", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		_, started := q.versions["main"]
		return started
	})
	if _, err := eng.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: "main", Device: "k"}, Service: "B"}); err != nil {
		t.Fatal(err)
	}
	if err := q.waitVersion(ctx, "main", 1); err != nil {
		t.Fatal(err)
	}
	if got := testutilValue(t, q.issued, "main", "B"); got != 1 {
		t.Errorf("issued = %v after the store came back, want 1", got)
	}
	if err := q.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
