package mysql_test

import (
	"testing"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestEngineConcurrency: 50 goroutines issue 2,000 tickets over 3 services
// while 10 counters call, recall, no-show and complete; then the invariants.
// It runs beside the package's other parallel tests: bound by CPU under
// the race detector, it takes longer there, but what it checks is the
// invariants, not its time, and alone it held the package's other tests
// back while they mostly wait (servers, clusters).
func TestEngineConcurrency(t *testing.T) {
	t.Parallel()
	storetest.RunConcurrency(t, func(t *testing.T) queue.Store { return storetest.MySQL(t) }, 50, 2000, 10)
}

// TestTwoEngines: two daemons on one server, as TestGalera runs them on two
// nodes: deadlocks abort their batches mid-way.
func TestTwoEngines(t *testing.T) {
	t.Parallel() // as TestEngineConcurrency
	t.Run("concurrency", func(t *testing.T) {
		dsn := storetest.MySQLDSN(t)
		storetest.RunConcurrencyAcross(t, []func(*testing.T) queue.Store{openOn(dsn), openOn(dsn)}, 20, 1000, 10)
	})
	t.Run("counter race", func(t *testing.T) {
		dsn := storetest.MySQLDSN(t)
		storetest.RunCounterRace(t, []func(*testing.T) queue.Store{openOn(dsn), openOn(dsn)}, 100)
	})
}
