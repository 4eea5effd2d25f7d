package sqlite_test

import (
	"testing"

	"github.com/nowserving/nowserving/queue/store/storetest"
)

// Not parallel: a load bound by CPU under the race detector, it ran
// several times slower beside the other tests on a 2-core machine.
func TestEngineConcurrency(t *testing.T) {
	storetest.RunEngineConcurrency(t, "sqlite")
}
