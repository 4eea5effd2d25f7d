package booking

import (
	"hash/fnv"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// SlotEncoder appends one slot of a list as the API answers it, its times
// in loc (Opts.Encode).
type SlotEncoder func(dst []byte, s *queue.Slot, loc *time.Location) []byte

// EncodedPage is a page of a slot list as the API answers it.
type EncodedPage struct {
	// JSON is the page's slots, separated by commas, without brackets.
	// It is shared: the caller must not change it.
	JSON []byte
	// Slots is how many slots JSON holds, Total how many the whole list.
	Slots, Total int
	// Sum identifies JSON: pages with the same Sum have the same bytes.
	Sum uint64
	// list is the cached list's encoded form the page is of, nil when
	// it is not of one (EncodePage): nothing can be kept beside it.
	list *encoded
}

// EncodePage encodes a page of slots with enc, as EncodedPage has it.
func EncodePage(dst []byte, slots []queue.Slot, total int, loc *time.Location, enc SlotEncoder) EncodedPage {
	start := len(dst)
	for i := range slots {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = enc(dst, &slots[i], loc)
	}
	h := fnv.New64a()
	h.Write(dst[start:])
	return EncodedPage{JSON: dst[start:], Slots: len(slots), Total: total, Sum: h.Sum64()}
}

// EncodedPage is the page q selects of a list in memory, from the answer
// encoded (with Opts.Encode and the time zone loc) when the list was
// first read from memory and kept beside it until its slots change; false
// when the list is not in memory (SlotPage reads it from the store) or
// the front has no encoder. It counts a hit of the cache when it answers.
func (f *Front) EncodedPage(q SlotQuery, loc *time.Location) (EncodedPage, bool) {
	return f.encodedPage(q, loc, true)
}

// EncodedPageRead is EncodedPage right after SlotPage read the list from
// the store (and counted its miss): the page from the list's encoded
// form, so that its Sum (the API's ETag) is the one every later read of
// the unchanged list has. It does not count a hit.
func (f *Front) EncodedPageRead(q SlotQuery, loc *time.Location) (EncodedPage, bool) {
	return f.encodedPage(q, loc, false)
}

func (f *Front) encodedPage(q SlotQuery, loc *time.Location, hit bool) (EncodedPage, bool) {
	if f.encode == nil {
		return EncodedPage{}, false
	}
	k := listKey{q.Site, q.Resource, q.Date}
	f.mu.Lock()
	var e *cached
	if f.live[q.Site] {
		e = f.cache.lookup(k, f.eng.SlotRuns(q.Site, q.Resource))
	}
	if e == nil {
		f.mu.Unlock()
		return EncodedPage{}, false
	}
	if hit {
		f.cache.metrics.hits.Inc()
	}
	n := len(e.p.slots)
	from := min(max(q.Offset, 0), n)
	to := from + min(n-from, max(q.Limit, 1))
	if enc := e.enc; enc != nil && enc.loc == loc {
		f.mu.Unlock()
		pg := enc.page(from, to)
		pg.Total = n
		return pg, true
	}
	slots := e.p.unpack(0, n)
	f.mu.Unlock()
	// Encoded without the lock: a day of a large site is thousands of
	// slots.
	enc := encodeList(slots, loc, f.encode)
	f.mu.Lock()
	if f.cache.lookup(k, e.runs) == e {
		if e.enc != nil && e.enc.loc != loc {
			f.cache.strip(e) // of another time zone (a reload)
		}
		f.cache.attach(e, enc)
	}
	f.mu.Unlock()
	pg := enc.page(from, to)
	pg.Total = n
	return pg, true
}

// Compressed is the body KeepCompressed kept under key beside the list
// pg is a page of, nil when there is none; room then reports whether
// KeepCompressed may keep one: pg's list is in memory with its encoded
// form, a body found room beside it before, and it was asked for once
// already. A caller that compresses only with room compresses an answer
// at most once per change of its list, and only a list read again while
// its encoded form is kept: at 28,000 lists read at random (2,000 doctors
// over 14 days) an encoded form was mostly gone before its next read, and
// compressing at the first read compressed at nearly every read (70,729
// compressions in 84,000 reads, 20 us each), more than the write it saved.
func (f *Front) Compressed(pg EncodedPage, key uint64) (body []byte, room bool) {
	if pg.list == nil {
		return nil, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if b, ok := pg.list.gz[key]; ok {
		return b, true
	}
	if !pg.list.roomy() {
		return nil, false
	}
	if !pg.list.asked {
		pg.list.asked = true // answered plain this once
		return nil, false
	}
	return nil, true
}

// KeepCompressed keeps body, a compressed answer made of pg (the caller
// names it by key: what else than pg the answer holds), beside the list
// pg is a page of until the list changes, so that the API compresses an
// answer once per change of its list. It counts within the cache's bound
// with the encoded answers, and goes with its list's encoded form (first
// when the list changes, else least recently used first). It is not kept
// (false) when pg is not of a cached list, the list's encoded form is
// gone, or room cannot be made. body must not change once kept.
func (f *Front) KeepCompressed(pg EncodedPage, key uint64, body []byte) bool {
	if pg.list == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cache.keep(pg.list, key, body)
}

// encodeList is the encoded form of a list of slots.
func encodeList(slots []queue.Slot, loc *time.Location, enc SlotEncoder) *encoded {
	e := &encoded{loc: loc, ends: make([]uint32, len(slots))}
	var b []byte
	for i := range slots {
		b = enc(b, &slots[i], loc)
		b = append(b, ',')
		e.ends[i] = uint32(len(b))
	}
	e.json = b[:len(b):len(b)]
	h := fnv.New64a()
	h.Write(e.json)
	e.sum = h.Sum64()
	return e
}
