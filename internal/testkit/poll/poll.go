// Package poll holds the helpers tests use to wait for something another
// goroutine does: Until checks a condition every few milliseconds, Recv
// takes a value from a channel, and both fail the test if what they wait
// for does not come within ten seconds; Within checks a condition for as
// long and as often as the test says and reports whether it came to hold.
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
	if !Within(Timeout, 5*time.Millisecond, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// Within checks cond every interval until it holds, for at most d, and
// reports whether it came to hold: for a test that waits with a time-out
// or a failure message of its own, or on a condition too dear to check
// every 5 ms (a query, a request).
func Within(d, every time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(every)
	}
	return true
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
