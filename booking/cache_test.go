package booking

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestCacheBound: a cache of 40 slots filled past its bound evicts the
// lists read least recently, counts hits, misses and evictions, and
// answers every list as the store has it, evicted or not (the compact
// form gives the same slots back). The front is in the state Follow puts
// it in, without its follower: no event drops a list meanwhile.
func TestCacheBound(t *testing.T) {
	st := &viewCounting{Store: storetest.SQLite(t)}
	site := storetest.BookingSite()
	clock := storetest.FixedClock(time.Date(2026, 11, 30, 9, 0, 0, 0, site.Location))
	eng, err := queue.New(queue.Opts{Store: st, Sites: []queue.Site{site}, Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close(context.Background()) })
	if _, err := eng.GenerateSlots(t.Context()); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	f := New(Opts{Engine: eng, CacheSlots: 40})
	if err := f.Register(reg); err != nil {
		t.Fatal(err)
	}
	f.live["hq"] = true
	const tue, wed = "2026-12-01", "2026-12-02"
	steps := []struct {
		resource, date string
		n              int
		hit            bool
	}{
		{"dr-li", tue, 12, false},
		{"dr-wu", tue, 9, false},
		{"vacc", tue, 16, false},  // 37 slots held
		{"dr-li", tue, 12, true},  // now the most recent
		{"dr-li", wed, 12, false}, // 49 > 40: dr-wu's Tuesday goes
		{"", tue, 37, false},      // vacc, dr-li Tuesday and Wednesday go
		{"dr-wu", tue, 9, false},  // read again; the day's list goes
		{"dr-wu", tue, 9, true},
	}
	for i, c := range steps {
		views := st.views.Load()
		got, err := f.Slots(t.Context(), "hq", c.resource, c.date)
		if err != nil {
			t.Fatal(err)
		}
		read := st.views.Load() - views
		want, err := eng.Slots(t.Context(), "hq", c.resource, c.date)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != c.n || !sameSlots(got, want) {
			t.Errorf("step %d, %q on %s: %d slots %+v, want the store's %d", i, c.resource, c.date, len(got), got, len(want))
		}
		if hit := read == 0; hit != c.hit {
			t.Errorf("step %d, %q on %s: %d store reads, want hit %v", i, c.resource, c.date, read, c.hit)
		}
	}
	// A page of a list in memory is the same page of the store's list.
	page, total, err := f.SlotPage(t.Context(), SlotQuery{Site: "hq", Resource: "dr-wu", Date: tue, Offset: 7, Limit: 5})
	all, _ := eng.Slots(t.Context(), "hq", "dr-wu", tue)
	if err != nil || total != 9 || !sameSlots(page, all[7:]) {
		t.Errorf("page from 7: %+v of %d, %v", page, total, err)
	}
	want := `# HELP nowserving_booking_slot_cache_evictions_total Slot lists evicted from the free-slot cache to stay within its bound.
# TYPE nowserving_booking_slot_cache_evictions_total counter
nowserving_booking_slot_cache_evictions_total 5
# HELP nowserving_booking_slot_cache_hits_total Slot lists served from the free-slot cache.
# TYPE nowserving_booking_slot_cache_hits_total counter
nowserving_booking_slot_cache_hits_total 3
# HELP nowserving_booking_slot_cache_misses_total Slot lists read from the store: not cached, stale or evicted.
# TYPE nowserving_booking_slot_cache_misses_total counter
nowserving_booking_slot_cache_misses_total 6
# HELP nowserving_booking_slot_cache_slots Slots held by the free-slot cache (at most http.slot_cache).
# TYPE nowserving_booking_slot_cache_slots gauge
nowserving_booking_slot_cache_slots 9
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

// viewCounting counts the read transactions that reach the store.
type viewCounting struct {
	queue.Store
	views atomic.Int64
}

func (c *viewCounting) View(ctx context.Context, fn func(context.Context, queue.Tx) error) error {
	c.views.Add(1)
	return c.Store.View(ctx, fn)
}

// sameSlots compares slot lists, times by instant.
func sameSlots(a, b []queue.Slot) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.ID != y.ID || x.Site != y.Site || x.Resource != y.Resource || !x.Start.Equal(y.Start) || !x.End.Equal(y.End) ||
			x.Capacity != y.Capacity || x.Booked != y.Booked || x.Closed != y.Closed {
			return false
		}
	}
	return true
}
