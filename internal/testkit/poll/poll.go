// Package poll holds the helpers tests use to wait for something another
// goroutine does: Until checks a condition every few milliseconds, Recv
// takes a value from a channel, and both fail the test if what they wait
// for does not come within ten seconds.
package poll

import (
	"testing"
	"time"
)

// Timeout is how long Until waits before failing the test.
const Timeout = 10 * time.Second

// Until polls cond every 5 ms until it holds, failing t with "timed out
// waiting for <what>" if it does not within Timeout.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Recv receives from ch as <-ch does (ok false: ch is closed), failing t
// with "timed out waiting for <what>" if nothing comes within Timeout: for
// the result of a goroutine a test started, or an event it expects.
func Recv[T any](t testing.TB, ch <-chan T, what string) (v T, ok bool) {
	t.Helper()
	timer := time.NewTimer(Timeout)
	defer timer.Stop()
	select {
	case v, ok = <-ch:
		return v, ok
	case <-timer.C:
		t.Fatalf("timed out waiting for %s", what)
		return v, false
	}
}
