// Package gate is where a test holds other goroutines (a handler, a
// proxy's copier) until it lets them through: a Gate that Shut makes Wait
// block at, and Open lets through again, as often as the test likes. It
// imports only the standard library.
package gate

import "sync"

// A Gate is open until Shut; Wait returns at once while it is open and
// blocks while it is shut, until Open. The zero Gate is open. It is safe
// for use by several goroutines.
type Gate struct {
	mu sync.Mutex
	ch chan struct{} // nil or closed: open
}

// Shut makes Wait block from now on, until Open. A shut Gate stays shut.
func (g *Gate) Shut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.shut() {
		g.ch = make(chan struct{})
	}
}

// Open lets through every goroutine waiting and every Wait until the next
// Shut. An open Gate stays open.
func (g *Gate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut() {
		close(g.ch)
	}
}

// Wait returns once the Gate is open.
func (g *Gate) Wait() {
	g.mu.Lock()
	ch := g.ch
	g.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// shut reports whether the Gate is shut; g.mu is held.
func (g *Gate) shut() bool {
	if g.ch == nil {
		return false
	}
	select {
	case <-g.ch:
		return false
	default:
		return true
	}
}
