package poll

import (
	"sync/atomic"
	"testing"
	"time"
)

// Until returns once a condition another goroutine makes true holds.
func TestUntilSeesConcurrentChange(t *testing.T) {
	var done atomic.Bool
	go func() {
		time.Sleep(20 * time.Millisecond)
		done.Store(true)
	}()
	Until(t, "the flag", done.Load)
	if !done.Load() {
		t.Fatal("Until returned before the condition held")
	}
}

// Recv returns what another goroutine sends, and ok false once the channel
// is closed.
func TestRecv(t *testing.T) {
	ch := make(chan int)
	go func() {
		time.Sleep(20 * time.Millisecond)
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
