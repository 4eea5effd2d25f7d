package load_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/load"
	"github.com/nowserving/nowserving/sim"
	"github.com/nowserving/nowserving/sim/simtest"
)

func env(t *testing.T, d *simtest.Daemon) *sim.Env {
	t.Helper()
	e, err := sim.New(sim.Opts{Config: d.Config, Timeout: 5 * time.Second, Retries: 3})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestRun: kiosks take, keypads call and serve; a service that refuses
// tickets is named and, when it was the only one, fails the run.
func TestRun(t *testing.T) {
	e := env(t, simtest.Start(t))
	var out, errw bytes.Buffer
	o := load.Opts{Kiosks: 3, Keypads: 2, Rate: 40, Duration: 1500 * time.Millisecond, Every: time.Second,
		ServiceTime: 20 * time.Millisecond, CallGap: 10 * time.Millisecond}
	if err := load.Run(t.Context(), e, o, &out, &errw); err != nil {
		t.Fatalf("run: %v\n%s%s", err, out.String(), errw.String())
	}
	for _, re := range []string{
		`^load: 3 kiosks \(2 devices\) at 40 tickets/s over services A,F, 2 keypads, for 1.5s\n`,
		`\n +1s  issued [1-9][0-9]*  called [0-9]+`,
		`\ndone: +[12]s  issued [1-9][0-9]*  called [1-9][0-9]*  served [1-9][0-9]*  no-show 0  errors 0\n`,
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("output lacks %s:\n%s", re, out.String())
		}
	}
	// Kiosks in flight together may each hear the refusal.
	if !strings.Contains(errw.String(), "service F: refused: ") || strings.Contains(errw.String(), "error:") {
		t.Errorf("stderr %q, want the full service F named and no other error", errw.String())
	}

	out.Reset()
	errw.Reset()
	o.Services, o.Keypads = []string{"Z"}, 0
	err := load.Run(t.Context(), e, o, &out, &errw)
	if err == nil || err.Error() != "sim: load: every service refused tickets (see above)" || !strings.Contains(errw.String(), "service Z: refused: unknown service") {
		t.Errorf("unknown service: %v, stderr %q", err, errw.String())
	}
}

func TestIssue(t *testing.T) {
	e := env(t, simtest.Start(t))
	var out bytes.Buffer
	if err := load.Issue(t.Context(), e, load.IssueOpts{Kiosks: 4, Duration: 500 * time.Millisecond}, &out); err != nil {
		t.Fatalf("issue: %v\n%s", err, out.String())
	}
	for _, re := range []string{
		`^issue: 4 kiosks over 2 device ids, service A, for 500ms\n`,
		`\ntickets: [1-9][0-9]* in [0-9.]+m?s = [0-9]+/s, errors 0\n`,
		`\nlatency: p50 \S+  p90 \S+  p99 \S+  max \S+\n`,
	} {
		if !regexp.MustCompile(re).MatchString(out.String()) {
			t.Errorf("output lacks %s:\n%s", re, out.String())
		}
	}
	out.Reset()
	err := load.Issue(t.Context(), e, load.IssueOpts{Kiosks: 1, Duration: 500 * time.Millisecond, Service: "F"}, &out)
	if err != nil || !strings.Contains(out.String(), "tickets: 1 in ") || !strings.Contains(out.String(), "first error: refused: ") {
		t.Errorf("a service full after one ticket: %v\n%s", err, out.String())
	}
}

func TestConns(t *testing.T) {
	e := env(t, simtest.Start(t))
	var out bytes.Buffer
	if err := load.Conns(t.Context(), e, load.ConnsOpts{N: 10, Parallel: 4, Hold: 100 * time.Millisecond}, &out); err != nil {
		t.Fatalf("conns: %v\n%s", err, out.String())
	}
	for _, want := range []string{"connections: 10 of 10 authenticated in ", " over 1 device ids\n", "still connected after 100ms: 10\n", "daemon side: give --pid"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
