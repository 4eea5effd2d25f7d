package need

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// recorder keeps what the helpers report instead of stopping the test.
type recorder struct {
	testing.TB
	skips, fatals []string
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, a ...any) {
	r.skips = append(r.skips, fmt.Sprintf(format, a...))
}
func (r *recorder) Fatalf(format string, a ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, a...))
}

func TestStop(t *testing.T) {
	for _, tc := range []struct {
		name, skip, ci string
		skips, fatals  int
	}{
		{name: "fails by default", fatals: 1},
		{name: "skips when asked", skip: "1", skips: 1},
		{name: "only 1 asks", skip: "yes", fatals: 1},
		{name: "CI fails anyway", skip: "1", ci: "true", fatals: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(SkipDB, tc.skip)
			t.Setenv("CI", tc.ci)
			r := &recorder{TB: t}
			DB(r, "PostgreSQL at 127.0.0.1:5432: connection refused")
			// A real Skipf stops here; the recorder lets Fatalf follow.
			if len(r.skips) != tc.skips || len(r.fatals) != tc.fatals+tc.skips {
				t.Fatalf("skips %q, fatals %q", r.skips, r.fatals)
			}
			msg := strings.Join(append(r.skips, r.fatals...), "\n")
			if !strings.Contains(msg, "connection refused") || !strings.Contains(msg, SkipDB+"=1") {
				t.Errorf("message %q does not say why and how to skip", msg)
			}
		})
	}
}

func TestProgram(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("sh: %v", err)
	}
	r := &recorder{TB: t}
	if got := Program(r, "dash", "nowserving-no-such-program", "sh"); got != sh || len(r.fatals) != 0 {
		t.Errorf("Program = %q (fatals %q), want %q", got, r.fatals, sh)
	}
	t.Setenv(SkipMissing, "")
	if got := Program(r, "nope-pkg", "nowserving-no-such-program"); got != "" || len(r.fatals) != 1 {
		t.Fatalf("Program of a missing program = %q, fatals %q", got, r.fatals)
	}
	if want := "nowserving-no-such-program not installed (apt-get install nope-pkg)"; !strings.Contains(r.fatals[0], want) {
		t.Errorf("fatal %q does not contain %q", r.fatals[0], want)
	}
}
