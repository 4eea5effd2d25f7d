package booking

import (
	"container/list"
	"encoding/binary"
	"fmt"
	"hash/fnv"
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

// slotCache holds slot lists in compact form, and beside the lists read
// again their encoded answers, at most max units of PackedSlotBytes in
// all: a slot takes one, an encoded answer its length in units (about
// four a slot). The encoded answers take at most a quarter of max, and
// go first (least recently used first) when a list needs room: they are
// rebuilt from the list at its next read, where an evicted list costs a
// store read. Past that the least recently used lists go. Its user
// guards it (Front.mu).
type slotCache struct {
	max, used int
	lru       *list.List // of *cached, most recently used first
	at        map[listKey]*list.Element
	encUsed   int        // units of the encoded answers, within used
	encLRU    *list.List // of *cached with an encoded answer, most recently used first
	metrics   *cacheMetrics
}

type cached struct {
	key  listKey
	runs uint64 // the engine's SlotRuns before the list was read
	p    packed
	enc  *encoded // nil until the list is read from memory
}

// encoded is a cached list as the API answers it: every slot's encoding
// followed by a comma, encoded with the site's time zone loc. Its json is
// never changed once built: a page of it is handed out without a copy.
// Beside it, the API keeps the compressed answers of its pages
// (Front.KeepCompressed), which go with it.
type encoded struct {
	loc     *time.Location
	json    []byte
	ends    []uint32 // ends[i] is where slot i's comma ends in json
	sum     uint64   // FNV-64a of json
	at      *list.Element
	gz      map[uint64][]byte // compressed answers by the API's key; under Front.mu
	gzBytes int               // what gz takes, compressedOverhead a body included
	full    bool              // a compressed answer found no room beside it
	asked   bool              // a gzip client read it once (Front.Compressed)
}

// roomy reports whether a compressed answer may be kept beside e: e is
// still cached and one found room before.
func (e *encoded) roomy() bool { return e.at != nil && !e.full }

// compressedOverhead is what a compressed answer takes beside its bytes
// (its map entry and slice header), counted within the bound.
const compressedOverhead = 64

// units is what e takes of the cache's bound.
func (e *encoded) units() int {
	return (len(e.json) + 4*len(e.ends) + e.gzBytes + PackedSlotBytes - 1) / PackedSlotBytes
}

// page is slots [from, to) of e.
func (e *encoded) page(from, to int) EncodedPage {
	start := 0
	if from > 0 {
		start = int(e.ends[from-1])
	}
	end := start
	if to > from {
		end = int(e.ends[to-1]) - 1 // without the last comma
	}
	h := fnv.New64a()
	var b [24]byte
	binary.BigEndian.PutUint64(b[:], e.sum)
	binary.BigEndian.PutUint64(b[8:], uint64(from))
	binary.BigEndian.PutUint64(b[16:], uint64(to))
	h.Write(b[:])
	return EncodedPage{JSON: e.json[start:end:end], Slots: to - from, Sum: h.Sum64(), list: e}
}

func newSlotCache(max int, m *cacheMetrics) *slotCache {
	return &slotCache{max: max, lru: list.New(), at: map[listKey]*list.Element{}, encLRU: list.New(), metrics: m}
}

// lookup returns the entry of k read after runs slot runs, as the most
// recently used.
func (c *slotCache) lookup(k listKey, runs uint64) *cached {
	if e, ok := c.at[k]; ok && e.Value.(*cached).runs == runs {
		c.lru.MoveToFront(e)
		return e.Value.(*cached)
	}
	return nil
}

// get returns the list of k read after runs slot runs, counting a hit or
// a miss.
func (c *slotCache) get(k listKey, runs uint64) (*packed, bool) {
	if e := c.lookup(k, runs); e != nil {
		c.metrics.hits.Inc()
		return &e.p, true
	}
	c.metrics.misses.Inc()
	return nil, false
}

// attach keeps enc as the encoded answer of e, still cached, making room
// among the other encoded answers; an answer that does not fit is not
// kept.
func (c *slotCache) attach(e *cached, enc *encoded) {
	if el, ok := c.at[e.key]; !ok || el.Value.(*cached) != e || e.enc != nil {
		return // dropped or read again meanwhile, or encoded by another read
	}
	n := enc.units()
	for c.encUsed+n > c.max/4 || c.used+n > c.max {
		if c.encLRU.Len() == 0 {
			return
		}
		c.strip(c.encLRU.Back().Value.(*cached))
	}
	e.enc, enc.at = enc, c.encLRU.PushFront(e)
	c.used += n
	c.encUsed += n
	c.metrics.encoded.Set(float64(c.encUsed * PackedSlotBytes))
}

// strip forgets the encoded answer of e.
func (c *slotCache) strip(e *cached) {
	if e.enc == nil {
		return
	}
	n := e.enc.units()
	c.encLRU.Remove(e.enc.at)
	e.enc.at = nil // tells keep the answer is gone
	e.enc = nil
	c.used -= n
	c.encUsed -= n
	c.metrics.encoded.Set(float64(c.encUsed * PackedSlotBytes))
}

// keep keeps body under key beside enc, an encoded answer still cached,
// making room among the other encoded answers (never enc itself); false
// when enc is gone or there is no room, which enc then remembers.
func (c *slotCache) keep(enc *encoded, key uint64, body []byte) bool {
	if !enc.roomy() {
		return false
	}
	if _, ok := enc.gz[key]; ok {
		return true // kept by another read meanwhile
	}
	before := enc.units()
	enc.gzBytes += len(body) + compressedOverhead
	n := enc.units() - before
	enc.gzBytes -= len(body) + compressedOverhead
	c.encLRU.MoveToFront(enc.at)
	for c.encUsed+n > c.max/4 || c.used+n > c.max {
		back := c.encLRU.Back()
		if back == enc.at {
			enc.full = true
			return false
		}
		c.strip(back.Value.(*cached))
	}
	if enc.gz == nil {
		enc.gz = map[uint64][]byte{}
	}
	enc.gz[key] = body
	enc.gzBytes += len(body) + compressedOverhead
	c.used += n
	c.encUsed += n
	c.metrics.encoded.Set(float64(c.encUsed * PackedSlotBytes))
	return true
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
	for c.used+len(slots) > c.max && c.encLRU.Len() > 0 {
		c.strip(c.encLRU.Back().Value.(*cached))
	}
	for c.used+len(slots) > c.max {
		old := c.lru.Back().Value.(*cached)
		evicted = append(evicted, old.p.slots...)
		c.drop(old.key)
		c.metrics.evictions.Inc()
	}
	c.at[k] = c.lru.PushFront(&cached{key: k, runs: runs, p: p})
	c.used += len(slots)
	c.metrics.slots.Set(float64(c.used - c.encUsed))
	return evicted
}

// drop forgets the list of k.
func (c *slotCache) drop(k listKey) {
	e, ok := c.at[k]
	if !ok {
		return
	}
	c.strip(e.Value.(*cached))
	c.used -= len(e.Value.(*cached).p.slots)
	c.lru.Remove(e)
	delete(c.at, k)
	c.metrics.slots.Set(float64(c.used - c.encUsed))
}

// cacheMetrics count the free-slot cache's use.
type cacheMetrics struct {
	hits, misses, evictions prometheus.Counter
	slots, encoded          prometheus.Gauge
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
		encoded: prometheus.NewGauge(prometheus.GaugeOpts{Name: "nowserving_booking_slot_cache_encoded_bytes",
			Help: "Bytes of the encoded answers the free-slot cache keeps beside its lists (within http.slot_cache, at most a quarter)."}),
	}
}

// Register registers the free-slot cache's metrics on reg:
//
//	nowserving_booking_slot_cache_hits_total       lists served from memory
//	nowserving_booking_slot_cache_misses_total     lists read from the store
//	nowserving_booking_slot_cache_evictions_total  lists evicted to stay within the bound
//	nowserving_booking_slot_cache_slots            slots held now
//	nowserving_booking_slot_cache_encoded_bytes    bytes of encoded answers held now
func (f *Front) Register(reg prometheus.Registerer) error {
	m := f.cache.metrics
	for _, c := range []prometheus.Collector{m.hits, m.misses, m.evictions, m.slots, m.encoded} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("booking: register the slot cache metrics: %w", err)
		}
	}
	return nil
}
