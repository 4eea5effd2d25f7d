package booking

import (
	"container/list"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nowserving/nowserving/queue"
)

// DefaultCacheSlots is the slots the free-slot lists keep when Opts says
// none: 2.5 M slots of PackedSlotBytes each, about 80 MB, enough for a
// site of 1.1 M slots read both by resource and by day (every slot is in
// two lists).
const DefaultCacheSlots = 2_500_000

// PackedSlotBytes is what one slot of a cached list takes (a queue.Slot
// is about 110 bytes and two strings).
const PackedSlotBytes = 32

// packedSlot is one slot of a cached list: its times in milliseconds from
// the list's first start, its resource an index in the list's names.
type packedSlot struct {
	id       int64
	start    int32  // ms after packed.base
	length   uint32 // ms
	capacity uint32
	booked   uint32 // the top bit: Closed
	res      uint32 // index in packed.resources
}

const closedBit = 1 << 31

// packed is a slot list in its compact form.
type packed struct {
	site      string
	base      int64 // Unix ms of the first slot's start
	resources []string
	slots     []packedSlot
}

// pack is the compact form of slots, false when a value does not fit it
// (such a list is not cached).
func pack(slots []queue.Slot) (packed, bool) {
	p := packed{slots: make([]packedSlot, len(slots))}
	if len(slots) == 0 {
		return p, true
	}
	p.site, p.base = slots[0].Site, slots[0].Start.UnixMilli()
	idx := map[string]uint32{}
	for i := range slots {
		s := &slots[i]
		start, length := s.Start.UnixMilli()-p.base, s.End.Sub(s.Start).Milliseconds()
		if s.Site != p.site || start < math.MinInt32 || start > math.MaxInt32 || length < 0 || length > math.MaxUint32 ||
			s.Capacity < 0 || s.Capacity > math.MaxUint32 || s.Booked < 0 || s.Booked >= closedBit ||
			s.Start.Nanosecond()%int(time.Millisecond) != 0 || s.End.Nanosecond()%int(time.Millisecond) != 0 {
			return packed{}, false
		}
		r, ok := idx[s.Resource]
		if !ok {
			r = uint32(len(p.resources))
			idx[s.Resource] = r
			p.resources = append(p.resources, s.Resource)
		}
		ps := packedSlot{id: s.ID, start: int32(start), length: uint32(length), capacity: uint32(s.Capacity), booked: uint32(s.Booked), res: r}
		if s.Closed {
			ps.booked |= closedBit
		}
		p.slots[i] = ps
	}
	return p, true
}

// unpack returns the slots [from, to) of p.
func (p *packed) unpack(from, to int) []queue.Slot {
	out := make([]queue.Slot, 0, to-from)
	for _, ps := range p.slots[from:to] {
		start := time.UnixMilli(p.base + int64(ps.start)).UTC()
		out = append(out, queue.Slot{ID: ps.id, Site: p.site, Resource: p.resources[ps.res], Start: start,
			End: start.Add(time.Duration(ps.length) * time.Millisecond), Capacity: int(ps.capacity),
			Booked: int(ps.booked &^ closedBit), Closed: ps.booked&closedBit != 0})
	}
	return out
}

// slotCache holds slot lists in compact form, at most max slots in all,
// evicting the least recently used list. Its user guards it (Front.mu).
type slotCache struct {
	max, used int
	lru       *list.List // of *cached, most recently used first
	at        map[listKey]*list.Element
	metrics   *cacheMetrics
}

type cached struct {
	key  listKey
	runs uint64 // the engine's SlotRuns before the list was read
	p    packed
}

func newSlotCache(max int, m *cacheMetrics) *slotCache {
	return &slotCache{max: max, lru: list.New(), at: map[listKey]*list.Element{}, metrics: m}
}

// get returns the list of k read after runs slot runs, counting a hit or
// a miss.
func (c *slotCache) get(k listKey, runs uint64) (*packed, bool) {
	if e, ok := c.at[k]; ok && e.Value.(*cached).runs == runs {
		c.lru.MoveToFront(e)
		c.metrics.hits.Inc()
		return &e.Value.(*cached).p, true
	}
	c.metrics.misses.Inc()
	return nil, false
}

// put caches slots as the list of k, evicting the least recently used
// lists to stay within max, and returns the slots of the lists evicted.
// A list that does not pack, or is larger than max alone, is not kept.
func (c *slotCache) put(k listKey, runs uint64, slots []queue.Slot) (evicted []packedSlot) {
	c.drop(k)
	if len(slots) > c.max {
		return nil
	}
	p, ok := pack(slots)
	if !ok {
		return nil
	}
	for c.used+len(slots) > c.max {
		old := c.lru.Back().Value.(*cached)
		evicted = append(evicted, old.p.slots...)
		c.drop(old.key)
		c.metrics.evictions.Inc()
	}
	c.at[k] = c.lru.PushFront(&cached{key: k, runs: runs, p: p})
	c.used += len(slots)
	c.metrics.slots.Set(float64(c.used))
	return evicted
}

// drop forgets the list of k.
func (c *slotCache) drop(k listKey) {
	e, ok := c.at[k]
	if !ok {
		return
	}
	c.used -= len(e.Value.(*cached).p.slots)
	c.lru.Remove(e)
	delete(c.at, k)
	c.metrics.slots.Set(float64(c.used))
}

// cacheMetrics count the free-slot cache's use.
type cacheMetrics struct {
	hits, misses, evictions prometheus.Counter
	slots                   prometheus.Gauge
}

func newCacheMetrics() *cacheMetrics {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: "nowserving_booking_slot_cache_" + name, Help: help})
	}
	return &cacheMetrics{
		hits:      counter("hits_total", "Slot lists served from the free-slot cache."),
		misses:    counter("misses_total", "Slot lists read from the store: not cached, stale or evicted."),
		evictions: counter("evictions_total", "Slot lists evicted from the free-slot cache to stay within its bound."),
		slots: prometheus.NewGauge(prometheus.GaugeOpts{Name: "nowserving_booking_slot_cache_slots",
			Help: "Slots held by the free-slot cache (at most http.slot_cache)."}),
	}
}

// Register registers the free-slot cache's metrics on reg:
//
//	nowserving_booking_slot_cache_hits_total       lists served from memory
//	nowserving_booking_slot_cache_misses_total     lists read from the store
//	nowserving_booking_slot_cache_evictions_total  lists evicted to stay within the bound
//	nowserving_booking_slot_cache_slots            slots held now
func (f *Front) Register(reg prometheus.Registerer) error {
	m := f.cache.metrics
	for _, c := range []prometheus.Collector{m.hits, m.misses, m.evictions, m.slots} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("booking: register the slot cache metrics: %w", err)
		}
	}
	return nil
}
