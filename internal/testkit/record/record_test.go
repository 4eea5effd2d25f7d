package record

import (
	"slices"
	"sync"
	"testing"
)

// TestList: what goroutines add at once is all there, each in the order
// its goroutine added it; All leaves it, and its copy does not see later
// adds; Take empties the list.
func TestList(t *testing.T) {
	var l List[int]
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 100 {
				l.Add(g*1000 + i)
			}
		})
	}
	wg.Wait()
	all := l.All()
	if len(all) != 400 {
		t.Fatalf("All: %d items, want 400", len(all))
	}
	last := map[int]int{}
	for _, v := range all {
		if g, i := v/1000, v%1000; i < last[g] {
			t.Fatalf("goroutine %d: %d after %d", g, i, last[g])
		} else {
			last[g] = i
		}
	}
	l.Add(-1, -2)
	if len(all) != 400 || len(l.All()) != 402 {
		t.Errorf("after Add(-1, -2): copy %d, list %d items; want 400, 402", len(all), len(l.All()))
	}
	if got := l.Take(); len(got) != 402 || !slices.Equal(got[400:], []int{-1, -2}) {
		t.Errorf("Take: %d items ending %v, want 402 ending [-1 -2]", len(got), got[len(got)-2:])
	}
	if got := l.Take(); got != nil {
		t.Errorf("second Take = %v, want nothing", got)
	}
}
