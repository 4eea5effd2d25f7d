package booking

import "testing"

// TestMarks: the known-full set holds at most two generations; a mark
// asked about moves into the current one and so outlives those never
// asked about again; a mark given back goes at once.
func TestMarks(t *testing.T) {
	m := newMarks(3)
	for _, s := range []int64{1, 2, 3} {
		m.add(s)
	}
	m.add(4) // 1, 2, 3 are the old generation now
	if !m.has(1) {
		t.Fatal("slot 1 lost at the first turn")
	}
	m.add(5) // current: 4, 1, 5
	m.add(6) // turns: old 4, 1, 5; 2 and 3 go
	for s, want := range map[int64]bool{1: true, 2: false, 3: false, 4: true, 5: true, 6: true} {
		if m.has(s) != want {
			t.Errorf("slot %d known full %v, want %v", s, !want, want)
		}
	}
	if m.len() > 2*3 {
		t.Errorf("%d marks, want at most 6", m.len())
	}
	m.del(6)
	if m.has(6) {
		t.Error("slot 6 still full after a place was given back")
	}
}
