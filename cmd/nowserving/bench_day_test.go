package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestBenchDay plays a short busy day on the daemon of
// testdata/busyday.yaml (the demo hospital with 10 counters): every ticket
// is issued and handled, some transferred and some no-show; both consoles,
// the one there from the start and the one joining halfway, end with the
// daemon's figures, never lost their connection, and the daemon closed no
// session as a slow consumer (from its /metrics); the hall display's
// stream, open all day, ends with the daemon's waiting counts and the
// log's last call; the goroutines stay bounded.
func TestBenchDay(t *testing.T) {
	const tickets = 1500
	file, err := filepath.Abs("../../testdata/busyday.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := loadTestConfig(t, file, nil)
	cfg.Store.DSN = filepath.Join(t.TempDir(), "q.db")
	cfg.Listen.Protocol, cfg.Listen.HTTP = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Log.Level = "warn"
	d := runDaemon(t, cfg)
	out, err := runCmd(t, "bench", "day", "--config", file, "--addr", d.protocolAddr.String(),
		"--tickets", strconv.Itoa(tickets), "--kiosks", "8", "--transfer", "0.1", "--no-show", "0.1",
		"--metrics", "http://"+d.httpAddr.String()+"/metrics", "--display", "http://"+d.httpAddr.String())
	if err != nil {
		t.Fatalf("bench day: %v\n%s", err, out)
	}
	t.Log(out)
	for _, re := range []string{
		`^day: 1500 tickets over services A,E,R, 8 kiosks, 10 counters \(1,2,3,4,5,6,7,8,9,10\), consoles console-1 from the start and halfway\n`,
		`\ndone: .* issued 1500  called [0-9]+  served [1-9][0-9]*  no-show [1-9][0-9]*  transferred [1-9][0-9]*  errors 0  waiting at the end 0\n`,
		`\ndaemon: 0 sessions closed as slow consumers during the day; at most [0-9]+ goroutines and [0-9]+ MiB RSS \(/metrics\)\n`,
		`\ndisplay: read [1-9][0-9]* states, lost the connection 0 times; its waiting counts and last call equal the daemon's\n`,
		`\nconsole 1: joined at 0s, .* lost the connection 0 times; figures equal the daemon's\n`,
		`\nconsole 2: joined at [0-9.]+m?s, figures and 50 last events in [0-9.]+m?s, .* lost the connection 0 times; figures equal the daemon's\n`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", re, out)
		}
	}
	// The daemon runs in this process, with the bench: its goroutines
	// count both, yet stay far below one per event (the day makes ~6,000).
	if m := regexp.MustCompile(`at most ([0-9]+) goroutines`).FindStringSubmatch(out); m != nil {
		if n, _ := strconv.Atoi(m[1]); n > 1000 {
			t.Errorf("%d goroutines during the day: they grow with the events", n)
		}
	}
}
