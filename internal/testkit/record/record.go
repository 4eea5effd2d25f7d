// Package record holds List, what a test's fake keeps of the calls it is
// handed (announcements played, transactions run, rules broken) while
// other goroutines make them: they add, the test reads a copy or takes
// what came since it last looked.
package record

import (
	"slices"
	"sync"
)

// A List is a list that goroutines add to and a test reads. The zero List
// is empty and ready to use; a List must not be copied after first use.
type List[T any] struct {
	mu    sync.Mutex
	items []T
}

// Add appends vs.
func (l *List[T]) Add(vs ...T) {
	l.mu.Lock()
	l.items = append(l.items, vs...)
	l.mu.Unlock()
}

// All returns a copy of everything added, in order.
func (l *List[T]) All() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.items)
}

// Take returns what was added since the last Take, in order, and empties
// the list.
func (l *List[T]) Take() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.items
	l.items = nil
	return out
}
