package conform

import (
	"os"
	"testing"

	"github.com/nowserving/nowserving/internal/testkit/waiting"
)

// TestMain runs up to 8 of the tests side by side (-parallel 8 unless the
// command line says): they wait on heartbeats, time-outs and retries, not
// on the CPU (the package's tests took 55 s of wall time and 2.3 s of CPU
// at go test's default of 2), so more of them at once cost the machine
// nothing, and the waits overlap.
func TestMain(m *testing.M) {
	waiting.Parallel(8)
	os.Exit(m.Run())
}
