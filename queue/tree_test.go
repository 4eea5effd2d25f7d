package queue

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTree checks the order-statistic treap against a sorted slice over
// random inserts, deletes and counts.
func TestTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var tr tree
	var ref []spot
	cmp := func(a, b spot) int {
		switch {
		case a.less(b):
			return -1
		case b.less(a):
			return 1
		}
		return 0
	}
	for i := 0; i < 5000; i++ {
		s := spot{rank: rng.IntN(3), key: rng.Int64N(50), id: rng.Int64N(40)}
		j, found := slices.BinarySearchFunc(ref, s, cmp)
		switch {
		case found && rng.IntN(2) == 0:
			tr.delete(s)
			ref = slices.Delete(ref, j, j+1)
		case !found:
			tr.insert(s)
			ref = slices.Insert(ref, j, s)
		}
		if got := tr.before(s); got != j {
			t.Fatalf("step %d: %d before %+v, want %d", i, got, s, j)
		}
		if tr.len() != len(ref) {
			t.Fatalf("step %d: len %d, want %d", i, tr.len(), len(ref))
		}
	}
}
