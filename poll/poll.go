// Package poll holds the polling helper tests use to wait for something
// another goroutine does: Until checks a condition every few milliseconds
// and fails the test if it does not hold within ten seconds.
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
