package main

import "testing"

// TestPurgedLine: bench history says what its purge removed in words, by
// table in name order, not as a Go map ("purged map[]").
func TestPurgedLine(t *testing.T) {
	for _, c := range []struct {
		n    map[string]int
		want string
	}{
		{nil, "nothing"},
		{map[string]int{}, "nothing"},
		{map[string]int{"tickets": 10, "events": 3670000, "requests": 0}, "events 3670000, requests 0, tickets 10"},
	} {
		if got := purgedLine(c.n); got != c.want {
			t.Errorf("purgedLine(%v) = %q, want %q", c.n, got, c.want)
		}
	}
}
