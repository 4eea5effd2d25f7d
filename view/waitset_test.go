package view

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestWaitSet checks the oldest time against a scan of the set over random
// adds (new tickets and the same ticket again since another time) and
// removes.
func TestWaitSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	w := newWaitSet()
	base := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	for i := 0; i < 20000; i++ {
		id := rng.Int64N(300)
		if rng.IntN(3) == 0 {
			w.remove(id)
		} else {
			w.add(id, base.Add(time.Duration(rng.IntN(100000))*time.Millisecond))
		}
		var want time.Time
		for _, at := range w.at {
			if want.IsZero() || at.Before(want) {
				want = at
			}
		}
		if got := w.oldest(); !got.Equal(want) {
			t.Fatalf("step %d: oldest %v, want %v", i, got, want)
		}
		if len(w.h) > 2*len(w.at)+65 {
			t.Fatalf("step %d: %d heap entries for %d tickets", i, len(w.h), len(w.at))
		}
	}
	var none *waitSet
	if !none.oldest().IsZero() || none.remove(1) {
		t.Error("a nil set should be empty")
	}
}
