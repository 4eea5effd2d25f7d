package view

import (
	"container/heap"
	"time"
)

// waitSet is the waiting tickets of one queue and since when, with the
// earliest of those times in O(log n) amortised: a min-heap of (time, id)
// whose entries are dropped lazily once their ticket left or waits since
// another time. A picture of a long queue must not cost a scan per event.
type waitSet struct {
	at map[int64]time.Time
	h  sinceHeap
}

type sinceEntry struct {
	t  time.Time
	id int64
}

type sinceHeap []sinceEntry

func (h sinceHeap) Len() int           { return len(h) }
func (h sinceHeap) Less(i, j int) bool { return h[i].t.Before(h[j].t) }
func (h sinceHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *sinceHeap) Push(x any)        { *h = append(*h, x.(sinceEntry)) }
func (h *sinceHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func newWaitSet() *waitSet { return &waitSet{at: map[int64]time.Time{}} }

// add records ticket id waiting since t.
func (w *waitSet) add(id int64, t time.Time) {
	w.at[id] = t
	heap.Push(&w.h, sinceEntry{t, id})
	w.bound()
}

// bound compacts the heap once stale entries outnumber the live ones (and
// a few): amortised O(1) per change.
func (w *waitSet) bound() {
	if len(w.h) > 2*len(w.at)+64 {
		w.compact()
	}
}

// remove takes ticket id out and reports whether it was in; nil-safe.
func (w *waitSet) remove(id int64) bool {
	if w == nil {
		return false
	}
	if _, ok := w.at[id]; !ok {
		return false
	}
	delete(w.at, id)
	w.bound()
	return true
}

// oldest is the earliest time a ticket of the set waits since, zero when
// none waits; nil-safe.
func (w *waitSet) oldest() time.Time {
	if w == nil {
		return time.Time{}
	}
	for len(w.h) > 0 {
		top := w.h[0]
		if t, ok := w.at[top.id]; ok && t.Equal(top.t) {
			return top.t
		}
		heap.Pop(&w.h)
	}
	return time.Time{}
}

// compact rebuilds the heap from the live entries, so stale ones never
// outnumber them.
func (w *waitSet) compact() {
	w.h = w.h[:0]
	for id, t := range w.at {
		w.h = append(w.h, sinceEntry{t, id})
	}
	heap.Init(&w.h)
}

func (w *waitSet) clone() *waitSet {
	c := &waitSet{at: make(map[int64]time.Time, len(w.at))}
	for k, v := range w.at {
		c.at[k] = v
	}
	c.compact()
	return c
}
