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
