package queue

import (
	"math"
	"testing"
)

func TestCounterNumber(t *testing.T) {
	for _, tt := range []struct {
		id string
		n  uint32
	}{
		{"1", 1}, {"5", 5}, {"12", 12}, {"9999", 9999}, {"4294967295", math.MaxUint32},
		// Not counter numbers: 0 numbers no counter.
		{"", 0}, {"0", 0}, {"05", 0}, {"+5", 0}, {"-1", 0}, {"5 ", 0}, {"A", 0}, {"4294967296", 0},
	} {
		if got := CounterNumber(tt.id); got != tt.n {
			t.Errorf("CounterNumber(%q) = %d, want %d", tt.id, got, tt.n)
		}
		// The pair round-trips: every counter number names its id back.
		if tt.n != 0 && CounterID(tt.n) != tt.id {
			t.Errorf("CounterID(%d) = %q, want %q", tt.n, CounterID(tt.n), tt.id)
		}
	}
	if got := CounterID(0); got != "" {
		t.Errorf("CounterID(0) = %q, want empty", got)
	}
	for _, n := range []uint32{1, 7, 10, 100, 65535, math.MaxUint32} {
		if got := CounterNumber(CounterID(n)); got != n {
			t.Errorf("CounterNumber(CounterID(%d)) = %d", n, got)
		}
	}
}

func TestHasCounter(t *testing.T) {
	s := &Site{Counters: []Counter{{ID: "1"}, {ID: "5"}}}
	for id, want := range map[string]bool{"1": true, "5": true, "2": false, "": false} {
		if got := s.HasCounter(id); got != want {
			t.Errorf("HasCounter(%q) = %v, want %v", id, got, want)
		}
	}
}
