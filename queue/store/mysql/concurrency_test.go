package mysql_test

import (
	"testing"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestEngineConcurrency runs beside the package's other parallel tests
// (see storetest.RunEngineConcurrency).
func TestEngineConcurrency(t *testing.T) {
	t.Parallel()
	storetest.RunEngineConcurrency(t, "mysql")
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
