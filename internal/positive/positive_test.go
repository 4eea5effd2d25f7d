package positive

import (
	"testing"
	"time"
)

func TestOr(t *testing.T) {
	for _, c := range []struct{ v, d, want time.Duration }{
		{0, time.Second, time.Second},
		{-time.Millisecond, time.Second, time.Second},
		{time.Millisecond, time.Second, time.Millisecond},
	} {
		if got := Or(c.v, c.d); got != c.want {
			t.Errorf("Or(%v, %v) = %v, want %v", c.v, c.d, got, c.want)
		}
	}
	if got := Or(-1.5, 10); got != 10 {
		t.Errorf("Or(-1.5, 10) = %v, want 10", got)
	}
	if got := Or(3, 10); got != 3 {
		t.Errorf("Or(3, 10) = %v, want 3", got)
	}
}
