package booking

import "testing"

// TestStamps: a key's stamp moves at each change and only then; at most
// max keys are kept; and a stamp taken before the keys are dropped
// matches nothing after, whether its key was kept or not, changed or not.
func TestStamps(t *testing.T) {
	s := newStamps[int](3)
	before := s.get(1)
	if s.get(1) != before {
		t.Fatal("a stamp moved without a change")
	}
	s.bump(1)
	if s.get(1) == before {
		t.Fatal("a change left the stamp where it was")
	}
	one, two := s.get(1), s.get(2) // 2 was never changed
	s.bump(3)
	s.bump(1)
	s.bump(4)
	s.bump(5) // one more than max: all go
	if len(s.at) > 3 {
		t.Fatalf("%d keys kept, want at most 3", len(s.at))
	}
	for k, old := range map[int]uint64{1: one, 2: two} {
		if s.get(k) == old {
			t.Errorf("key %d: its stamp from before the drop still matches", k)
		}
	}
	for k := range 1000 {
		s.bump(k)
		if len(s.at) > 3 {
			t.Fatalf("%d keys kept after %d changes, want at most 3", len(s.at), k+1)
		}
	}
}

// TestBounded: a key found or put stays; at most two generations of max
// keys are kept; deleteFunc and del drop keys.
func TestBounded(t *testing.T) {
	m := newBounded[int64, int](2)
	m.put(1, 10)
	m.put(2, 20)
	m.put(3, 30) // 1, 2 are the old generation
	if v, ok := m.get(1); !ok || v != 10 {
		t.Fatalf("get(1) = %d, %v; want 10, true", v, ok)
	}
	m.put(4, 40) // turns: old 3, 1; 2 goes
	if m.has(2) {
		t.Error("key 2 kept past two generations")
	}
	for i := range int64(100) {
		m.put(100+i, 0)
	}
	if m.len() > 4 {
		t.Errorf("%d keys kept, want at most 4", m.len())
	}
	m.put(7, 70)
	m.put(8, 80)
	m.deleteFunc(func(k int64, _ int) bool { return k == 7 })
	m.del(8)
	if m.has(7) || m.has(8) {
		t.Error("a deleted key is still there")
	}
}
