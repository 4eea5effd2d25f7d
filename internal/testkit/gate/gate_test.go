package gate

import (
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
)

// A zero Gate lets Wait through; shut, it holds every waiter until Open,
// and it may be shut and opened again.
func TestGate(t *testing.T) {
	var g Gate
	g.Wait() // open: returns at once
	for range 2 {
		g.Shut()
		g.Shut() // still shut, not a second channel
		passed := make(chan struct{}, 2)
		for range 2 {
			go func() { g.Wait(); passed <- struct{}{} }()
		}
		select {
		case <-passed:
			t.Fatal("a waiter passed a shut gate")
		case <-time.After(50 * time.Millisecond):
		}
		g.Open()
		g.Open() // still open, no second close
		for range 2 {
			poll.Recv(t, passed, "a waiter through the opened gate")
		}
		g.Wait()
	}
}
