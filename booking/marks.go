package booking

// marks is a site's set of slots known full, bounded: it keeps two
// generations of at most max slots each. A slot marked or asked about
// goes into the current one; when that holds max, it becomes the old one
// and the one before is dropped. A site's marks are not tied to the slot
// lists cached (an evicted list's slots stay known full: they are not
// re-learnt from the engine, one request each), so a mark goes only when
// a place is given back, when the site's follower takes a fresh snapshot,
// or when max other slots were marked or asked about since it was last
// asked about: a slot nobody asks for during that long costs one request
// at the engine to be learnt again. A slot takes about 10 to 20 bytes.
type marks struct {
	max      int
	cur, old map[int64]struct{}
}

func newMarks(max int) *marks {
	return &marks{max: max, cur: map[int64]struct{}{}}
}

// has reports whether slot is known full, keeping it for one more
// generation when it is.
func (m *marks) has(slot int64) bool {
	if _, ok := m.cur[slot]; ok {
		return true
	}
	if _, ok := m.old[slot]; ok {
		m.add(slot)
		return true
	}
	return false
}

// add marks slot full.
func (m *marks) add(slot int64) {
	if _, ok := m.cur[slot]; ok {
		return
	}
	if len(m.cur) >= m.max {
		m.old, m.cur = m.cur, make(map[int64]struct{}, len(m.cur))
	}
	m.cur[slot] = struct{}{}
	delete(m.old, slot)
}

// del unmarks slot (a place was given back).
func (m *marks) del(slot int64) {
	delete(m.cur, slot)
	delete(m.old, slot)
}

// len is the slots marked.
func (m *marks) len() int { return len(m.cur) + len(m.old) }
