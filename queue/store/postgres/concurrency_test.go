package postgres_test

import (
	"testing"

	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestEngineConcurrency runs beside the package's other parallel tests
// (see storetest.RunEngineConcurrency).
func TestEngineConcurrency(t *testing.T) {
	t.Parallel()
	storetest.RunEngineConcurrency(t, "postgres")
}
