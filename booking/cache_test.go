package booking

import (
	"bytes"
	"context"
	"fmt"
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
	eng := storetest.StartEngine(t, queue.Opts{Store: st, Sites: []queue.Site{site}, Clock: clock.Now})
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
# HELP nowserving_booking_slot_cache_encoded_bytes Bytes of the encoded answers the free-slot cache keeps beside its lists (within http.slot_cache, at most a quarter).
# TYPE nowserving_booking_slot_cache_encoded_bytes gauge
nowserving_booking_slot_cache_encoded_bytes 0
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

// TestCacheBoundEncoded: the answers encoded beside the lists count in
// the cache's bound, take at most a quarter of it (the least recently
// used go first), go before any list does when a list needs room, and
// are not kept when the lists fill the bound; every page answered is
// the bytes of a fresh encoding of the store's list.
func TestCacheBoundEncoded(t *testing.T) {
	f, eng, site := encodingFront(t)
	enc := f.encode
	const tue, wed = "2026-12-01", "2026-12-02"
	steps := []struct {
		encode         bool // EncodedPage, else Slots
		resource, date string
		used, encUsed  int
		evicted        bool // the list is not in memory
	}{
		{false, "dr-li", tue, 12, 0, false},
		{true, "dr-li", tue, 26, 14, false},
		{false, "dr-wu", tue, 35, 14, false},
		{true, "dr-wu", tue, 32, 11, false}, // 25 > 80/4: dr-li's answer goes
		{false, "vacc", tue, 48, 11, false},
		{true, "vacc", tue, 56, 19, false}, // dr-wu's goes
		{false, "dr-li", wed, 68, 19, false},
		{false, "", tue, 74, 0, false}, // 105 > 80: vacc's answer goes, then dr-li's Tuesday
		{true, "dr-li", tue, 74, 0, true},
		{true, "vacc", tue, 74, 0, false}, // answered, not kept: 93 > 80
		{true, "", tue, 74, 0, false},
	}
	for i, c := range steps {
		want, err := eng.Slots(t.Context(), "hq", c.resource, c.date)
		if err != nil {
			t.Fatal(err)
		}
		if !c.encode {
			if _, err := f.Slots(t.Context(), "hq", c.resource, c.date); err != nil {
				t.Fatal(err)
			}
		} else {
			pg, ok := f.EncodedPage(SlotQuery{Site: "hq", Resource: c.resource, Date: c.date, Offset: 3, Limit: 5}, site.Location)
			fresh := EncodePage(nil, want[3:8], len(want), site.Location, enc)
			if ok == c.evicted || (ok && (!bytes.Equal(pg.JSON, fresh.JSON) || pg.Total != len(want) || pg.Slots != 5)) {
				t.Errorf("step %d, %q on %s: %v, %d of %d slots %q, want %v, %q", i, c.resource, c.date, ok, pg.Slots, pg.Total, pg.JSON, !c.evicted, fresh.JSON)
			}
		}
		if f.cache.used != c.used || f.cache.encUsed != c.encUsed {
			t.Errorf("step %d, %q on %s: %d units held, %d encoded, want %d and %d", i, c.resource, c.date, f.cache.used, f.cache.encUsed, c.used, c.encUsed)
		}
	}
}

// encodingFront is a front of 80 slots following the booking site (as
// Follow has it), from Monday 2026-11-30 09:00, with its slots made, that
// encodes a slot in 32 bytes and a comma: an encoded list of n slots
// takes (37n + 31) / 32 units.
func encodingFront(t *testing.T) (*Front, *queue.Engine, queue.Site) {
	site := storetest.BookingSite()
	clock := storetest.FixedClock(time.Date(2026, 11, 30, 9, 0, 0, 0, site.Location))
	eng := storetest.StartEngine(t, queue.Opts{Store: storetest.SQLite(t), Sites: []queue.Site{site}, Clock: clock.Now})
	if _, err := eng.GenerateSlots(t.Context()); err != nil {
		t.Fatal(err)
	}
	enc := func(dst []byte, s *queue.Slot, loc *time.Location) []byte {
		return fmt.Appendf(dst, "%-16d%-16s", s.ID, s.Start.In(loc).Format("15:04"))
	}
	f := New(Opts{Engine: eng, CacheSlots: 80, Encode: enc})
	f.live["hq"] = true
	return f, eng, site
}

// TestCacheCompressed: a compressed answer kept beside a list's encoded
// form counts within the bound (and the encoded answers' quarter of it),
// goes with the encoded form when another needs room and when a booking
// changes the list; one that finds no room is not kept, and the list
// then says there is none.
func TestCacheCompressed(t *testing.T) {
	f, _, site := encodingFront(t)
	const tue = "2026-12-01"
	page := func(resource string) EncodedPage {
		t.Helper()
		if _, err := f.Slots(t.Context(), "hq", resource, tue); err != nil {
			t.Fatal(err)
		}
		pg, ok := f.EncodedPage(SlotQuery{Site: "hq", Resource: resource, Date: tue, Limit: 1000}, site.Location)
		if !ok {
			t.Fatalf("%s: not in memory", resource)
		}
		return pg
	}
	held := func(step string, used, encUsed int) {
		t.Helper()
		if f.cache.used != used || f.cache.encUsed != encUsed {
			t.Errorf("%s: %d units held, %d encoded, want %d and %d", step, f.cache.used, f.cache.encUsed, used, encUsed)
		}
	}
	has := func(step string, pg EncodedPage, key uint64, body []byte, room bool) {
		t.Helper()
		if got, r := f.Compressed(pg, key); !bytes.Equal(got, body) || r != room {
			t.Errorf("%s: Compressed %q, room %v, want %q, %v", step, got, r, body, room)
		}
	}
	body := bytes.Repeat([]byte("z"), 60) // 124 bytes with its overhead
	li := page("dr-li")                   // 12 slots, 14 units encoded
	held("dr-li encoded", 26, 14)
	has("dr-li asked once", li, 7, nil, false) // answered plain: read once, not compressed
	has("dr-li asked again", li, 7, nil, true)
	if !f.KeepCompressed(li, 7, body) {
		t.Fatal("dr-li: not kept")
	}
	held("dr-li compressed", 30, 18) // (444 + 124 + 31) / 32 = 18
	has("dr-li kept", li, 7, body, true)
	wu := page("dr-wu") // 9 slots, 11 units: 18 + 11 > 80/4, dr-li's go
	held("dr-wu encoded", 32, 11)
	has("dr-li stripped", li, 8, nil, false)
	if f.KeepCompressed(li, 8, body) {
		t.Error("dr-li stripped: kept")
	}
	if !f.KeepCompressed(wu, 1, body) {
		t.Fatal("dr-wu: not kept")
	}
	held("dr-wu compressed", 36, 15) // (333 + 124 + 31) / 32 = 15
	if f.KeepCompressed(wu, 2, bytes.Repeat(body, 3)) {
		t.Error("dr-wu: 23 units kept in 20")
	}
	held("dr-wu refused", 36, 15)
	has("dr-wu refused", wu, 2, nil, false)
	has("dr-wu kept", wu, 1, body, true)
	s, _ := f.eng.Site("hq")
	f.observe(s, &queue.Event{Type: queue.EventBookingBooked, Resource: "dr-wu", SlotAt: time.Date(2026, 12, 1, 9, 0, 0, 0, site.Location)})
	held("dr-wu booked", 12, 0)
	again := page("dr-wu")
	has("dr-wu read again", again, 1, nil, false)
	has("dr-wu read twice", again, 1, nil, true)
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
