package voice

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/internal/testkit/need"
)

// soxMeasure writes wav to a file and asks sox for its duration in seconds
// and its RMS amplitude (0..1).
func soxMeasure(t *testing.T, wav []byte) (seconds, rms float64) {
	t.Helper()
	sox := need.Program(t, "sox", "sox")
	path := filepath.Join(t.TempDir(), "a.wav")
	if err := os.WriteFile(path, wav, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(sox, "--i", "-D", path).CombinedOutput()
	if err != nil {
		t.Fatalf("sox --i -D: %v: %s", err, out)
	}
	seconds, err = strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		t.Fatalf("sox --i -D: %q: %v", out, err)
	}
	// stat prints its table on standard error.
	out, err = exec.Command(sox, path, "-n", "stat").CombinedOutput()
	if err != nil {
		t.Fatalf("sox stat: %v: %s", err, out)
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "RMS     amplitude" {
			if rms, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
				t.Fatalf("sox stat RMS %q: %v", v, err)
			}
			return seconds, rms
		}
	}
	t.Fatalf("sox stat: no RMS amplitude in %s", out)
	return 0, 0
}
