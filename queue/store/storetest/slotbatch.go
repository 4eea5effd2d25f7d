package storetest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/logtest"
	"github.com/nowserving/nowserving/queue"
)

// testSweepBatches: a resource of about 2,000 slots is generated
// queue.SlotBatch slots a transaction at most; a sweep whose time runs
// out mid-way (here: its context ends in the second batch) returns what
// it did without an error and says in the log that it resumes; the next
// sweep creates the rest, once, and logs that it is done.
func testSweepBatches(t *testing.T, open func(t *testing.T) queue.Store) {
	site := TestSite()
	every := []time.Weekday{time.Sunday, time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday}
	site.Resources = []queue.Resource{
		{ID: "dense", Service: "A", Schedule: queue.Schedule{Days: every, Open: 8 * time.Hour, Close: 20 * time.Hour, Slot: 5 * time.Minute, Capacity: 1, DaysAhead: 14}},
		{ID: "dr", Service: "A", Schedule: queue.Schedule{Days: every, Open: 10 * time.Hour, Close: 11 * time.Hour, Slot: 15 * time.Minute, Capacity: 1, DaysAhead: 1}},
	}
	var want int
	for i := range site.Resources {
		r := &site.Resources[i]
		want += len(r.SlotsBetween(site.ID, monday9, r.Schedule.Horizon(monday9, site.Location), site.Location))
	}
	if want < 2*queue.SlotBatch {
		t.Fatalf("%d slots: want more than two batches", want)
	}
	st := &insertCounting{Store: open(t)}
	var logs logtest.Buffer
	clock := NewClock(monday9)
	e := StartEngine(t, queue.Opts{Store: st, Sites: []queue.Site{site}, Clock: clock.Now, Logger: logs.Logger()})

	ctx, cancel := context.WithCancel(context.Background())
	st.arm(2, cancel)
	first, err := e.Sweep(ctx)
	if err != nil || first != queue.SlotBatch {
		t.Fatalf("sweep cut short: %d, %v; want the first batch (%d) and no error", first, err, queue.SlotBatch)
	}
	if l := logs.String(); !strings.Contains(l, `msg="slot generation: resuming at the next sweep" resources_done=0 resources_left=2 slots=1000`) {
		t.Errorf("log of the sweep cut short:\n%s", l)
	}
	rest, err := e.Sweep(context.Background())
	if err != nil || first+rest != want {
		t.Errorf("next sweep: %d, %v; want the %d left", rest, err, want-first)
	}
	if l := logs.String(); !strings.Contains(l, `msg="slot generation: done" resources=2 slots=`) {
		t.Errorf("log of the sweep that finished:\n%s", l)
	}
	if again, err := e.Sweep(context.Background()); err != nil || again != 0 {
		t.Errorf("sweep again: %d, %v; want 0", again, err)
	}
	all, err := e.Slots(context.Background(), "hq", "dense", "2026-12-05")
	if err != nil || len(all) != 144 {
		t.Errorf("dense on Saturday: %d slots, %v; want 144", len(all), err)
	}
	if most := st.largest(); most > queue.SlotBatch || most == 0 {
		t.Errorf("largest InsertSlots: %d slots, want 1 to %d", most, queue.SlotBatch)
	}
}

// insertCounting records the size of every InsertSlots; once armed, its
// n-th InsertSlots ends the sweep's context instead (as the sweep's
// deadline would during that transaction).
type insertCounting struct {
	queue.Store
	mu     sync.Mutex
	sizes  []int
	cutAt  int
	cancel context.CancelFunc
}

func (s *insertCounting) arm(n int, cancel context.CancelFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cutAt, s.cancel = n, cancel
}

func (s *insertCounting) largest() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	most := 0
	for _, n := range s.sizes {
		most = max(most, n)
	}
	return most
}

func (s *insertCounting) Update(ctx context.Context, fn func(context.Context, queue.Tx) error) error {
	return s.Store.Update(ctx, func(ctx context.Context, tx queue.Tx) error {
		return fn(ctx, insertTx{tx, s})
	})
}

type insertTx struct {
	queue.Tx
	s *insertCounting
}

func (t insertTx) InsertSlots(ctx context.Context, slots []queue.Slot) (int, error) {
	t.s.mu.Lock()
	t.s.sizes = append(t.s.sizes, len(slots))
	cut := len(t.s.sizes) == t.s.cutAt
	t.s.mu.Unlock()
	if cut {
		t.s.cancel()
		return 0, errors.Join(context.Canceled, errors.New("storetest: the sweep's time ran out"))
	}
	return t.Tx.InsertSlots(ctx, slots)
}
