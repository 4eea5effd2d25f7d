package led

import "sync"

// Hall keeps the last calls for a hall board and renders them as Content
// lines, most recent first ("A023 -> 5"). It is safe for concurrent use.
type Hall struct {
	mu    sync.Mutex
	n     int
	calls []hallCall
}

type hallCall struct{ number, counter string }

// NewHall returns a Hall keeping the last n calls (n < 1 means 1).
func NewHall(n int) *Hall {
	if n < 1 {
		n = 1
	}
	return &Hall{n: n}
}

// Call records that number was called to counter. A number already listed
// (a recall, or a transfer to another counter) moves to the top.
func (h *Hall) Call(number, counter string) Content {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.drop(number)
	h.calls = append([]hallCall{{number, counter}}, h.calls...)
	if len(h.calls) > h.n {
		h.calls = h.calls[:h.n]
	}
	return h.content()
}

// Remove drops number from the list (e.g. cancelled) and returns the new
// content.
func (h *Hall) Remove(number string) Content {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.drop(number)
	return h.content()
}

// drop takes number off the list, if it is there; h.mu is held.
func (h *Hall) drop(number string) {
	for i, c := range h.calls {
		if c.number == number {
			h.calls = append(h.calls[:i], h.calls[i+1:]...)
			return
		}
	}
}

// Content returns what the hall board shows now: Lines, with Number and
// Counter set to the latest call.
func (h *Hall) Content() Content {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.content()
}

func (h *Hall) content() Content {
	var c Content
	for i, k := range h.calls {
		if i == 0 {
			c.Number, c.Counter = k.number, k.counter
		}
		c.Lines = append(c.Lines, k.number+" -> "+k.counter)
	}
	return c
}
