package storetest

import (
	"testing"

	"github.com/nowserving/nowserving/queue"
)

// RunDialect runs, as subtests, what every dialect's store must pass: the
// Store/Tx conformance suite (Conformance), the engine's days on it
// (Engine) and four daemons migrating one empty database at once
// (Migrate). open gives each test its own store; dsn names a new, empty
// database for driver (as store.Open names it).
func RunDialect(t *testing.T, driver string, open func(t *testing.T) queue.Store, dsn func(t testing.TB) string) {
	t.Run("Conformance", func(t *testing.T) { Run(t, open) })
	t.Run("Engine", func(t *testing.T) { RunEngine(t, open) })
	t.Run("Migrate", func(t *testing.T) { MigrateConcurrently(t, driver, dsn(t)) })
}
