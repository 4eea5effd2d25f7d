package booking

// bounded is a map of at most about 2*max keys: it keeps two generations
// of at most max keys each. A key put or found goes into the current one;
// when that holds max, it becomes the old one and the one before is
// dropped. What the front keeps per slot lives in one (the slots known
// full, their places, their holders): slots come every day and never come
// back, so a plain map of them grew by every day's slots for as long as
// the daemon ran; here a slot nobody asked about for max others goes, and
// is learnt again when it is asked about (one request at the engine, or
// one read of the store).
type bounded[K comparable, V any] struct {
	max      int
	cur, old map[K]V
}

func newBounded[K comparable, V any](max int) *bounded[K, V] {
	return &bounded[K, V]{max: max, cur: map[K]V{}}
}

// get is k's value, keeping k for one more generation when it is there.
func (m *bounded[K, V]) get(k K) (V, bool) {
	if v, ok := m.cur[k]; ok {
		return v, true
	}
	v, ok := m.old[k]
	if ok {
		m.put(k, v)
	}
	return v, ok
}

// has reports whether k is there, keeping it as get does.
func (m *bounded[K, V]) has(k K) bool {
	_, ok := m.get(k)
	return ok
}

// put sets k's value.
func (m *bounded[K, V]) put(k K, v V) {
	if _, ok := m.cur[k]; !ok && len(m.cur) >= m.max {
		m.old, m.cur = m.cur, make(map[K]V, len(m.cur))
	}
	m.cur[k] = v
	delete(m.old, k)
}

// del drops k.
func (m *bounded[K, V]) del(k K) {
	delete(m.cur, k)
	delete(m.old, k)
}

// deleteFunc drops the keys for which drop is true.
func (m *bounded[K, V]) deleteFunc(drop func(K, V) bool) {
	for _, g := range []map[K]V{m.cur, m.old} {
		for k, v := range g {
			if drop(k, v) {
				delete(g, k)
			}
		}
	}
}

// len is the keys kept.
func (m *bounded[K, V]) len() int { return len(m.cur) + len(m.old) }

// marks is a site's set of slots known full. A site's marks are not tied
// to the slot lists cached (an evicted list's slots stay known full: they
// are not re-learnt from the engine, one request each), so a mark goes
// only when a place is given back, when the site's follower takes a fresh
// snapshot, or when max other slots were marked or asked about since it
// was last asked about: a slot nobody asks for during that long costs one
// request at the engine to be learnt again. A slot takes about 10 to 20
// bytes.
type marks struct{ *bounded[int64, struct{}] }

func newMarks(max int) *marks { return &marks{newBounded[int64, struct{}](max)} }

// add marks slot full.
func (m *marks) add(slot int64) { m.put(slot, struct{}{}) }
