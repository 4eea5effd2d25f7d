package postgres_test

import (
	"testing"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestEngineConcurrency: 50 goroutines issue 2,000 tickets over 3 services
// while 10 counters call, recall, no-show and complete; then the invariants.
// Not parallel: a load bound by CPU under the race detector, it ran
// several times slower beside the other tests on a 2-core machine.
func TestEngineConcurrency(t *testing.T) {
	storetest.RunConcurrency(t, func(t *testing.T) queue.Store { return storetest.Postgres(t) }, 50, 2000, 10)
}
