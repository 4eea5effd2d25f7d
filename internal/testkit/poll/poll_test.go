package poll

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Until returns once a condition another goroutine makes true holds: the
// goroutine sets it only after Until has found it false.
func TestUntilSeesConcurrentChange(t *testing.T) {
	var done atomic.Bool
	checked := make(chan struct{})
	var once atomic.Bool
	go func() {
		<-checked
		done.Store(true)
	}()
	Until(t, "the flag", func() bool {
		if once.CompareAndSwap(false, true) {
			close(checked)
		}
		return done.Load()
	})
	if !done.Load() {
		t.Fatal("Until returned before the condition held")
	}
}

// Within reports false once its time is up on a condition that never
// holds, having checked it every interval, and true at once on one that
// holds (on synctest's clock: the durations are exact).
func TestWithin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n int
		start := time.Now()
		if Within(30*time.Millisecond, 5*time.Millisecond, func() bool { n++; return false }) {
			t.Fatal("Within = true on a condition that never holds")
		}
		if took := time.Since(start); took < 30*time.Millisecond || took > 35*time.Millisecond || n < 7 {
			t.Errorf("Within gave up after %s and %d checks, want 30 ms and a check every 5 ms", took, n)
		}
		start = time.Now()
		if !Within(time.Hour, time.Hour, func() bool { return true }) || time.Since(start) != 0 {
			t.Errorf("Within on a condition that holds: false or after %s", time.Since(start))
		}
	})
}

// Recv returns what another goroutine sends, and ok false once the channel
// is closed.
func TestRecv(t *testing.T) {
	ch := make(chan int)
	go func() {
		ch <- 7
		close(ch)
	}()
	if v, ok := Recv(t, ch, "the value"); v != 7 || !ok {
		t.Errorf("Recv = %d, %v, want 7, true", v, ok)
	}
	if v, ok := Recv(t, ch, "the close"); v != 0 || ok {
		t.Errorf("Recv after close = %d, %v, want 0, false", v, ok)
	}
}
