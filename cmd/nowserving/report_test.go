package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/need"
	"github.com/nowserving/nowserving/queue"
)

// TestReportCmd issues and serves a ticket through an engine on the
// configured SQLite file, then runs `nowserving report` on it.
func TestReportCmd(t *testing.T) {
	cfgFile, cfg := migratedBranch(t, "UTC", "A", "Accounts")

	// Play a ticket on the same database.
	st, err := openStore(context.Background(), cfg.Store, newLogger(cfg.Log), false)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	eng, err := queue.New(queue.Opts{Store: st, Sites: sites(cfg), Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := queue.Request{Site: "branch", Device: "t"}
	if _, err := eng.Issue(ctx, queue.IssueRequest{Request: req, Service: "A"}); err != nil {
		t.Fatal(err)
	}
	for _, op := range []func(context.Context, queue.CounterRequest) (queue.Ticket, error){eng.CallNext, eng.Start, eng.Complete} {
		now = now.Add(6 * time.Minute)
		at := queue.Request{Site: "branch", Device: "user:li.na@counter-1"} // a person at the counter page
		if _, err := op(ctx, queue.CounterRequest{Request: at, Counter: "1"}); err != nil {
			t.Fatal(err)
		}
	}
	eng.Close(ctx)
	st.Close()

	out, err := runCmd(t, "report", "--config", cfgFile, "--day", "2026-03-02", "--format", "csv")
	if err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	if want := "branch,2026-03-02,2026-03-02,service,A,1,1,1,0,0,360,360,360,10,1,,,,,\n"; !strings.Contains(out, want) {
		t.Errorf("report csv:\n%s\nwant a line %q", out, want)
	}
	out, err = runCmd(t, "report", "--config", cfgFile, "--day", "2026-03-02", "--format", "html")
	if err != nil || !strings.HasPrefix(out, "<!doctype html>") || !strings.Contains(out, "var uPlot=") || !strings.Contains(out, `id="card-waits"`) {
		t.Errorf("report --format html: %v\n%.300s", err, out)
	}
	need.Program(t, "chromium", chromiums...)
	out, err = runCmd(t, "report", "--config", cfgFile, "--day", "2026-03-02", "--format", "pdf")
	if err != nil || !strings.HasPrefix(out, "%PDF") || !strings.Contains(out, "/Type /Page") {
		t.Errorf("report --format pdf: %v\n%.200q", err, out)
	}
	out, err = runCmd(t, "report", "--config", cfgFile, "--day", "2026-03-02", "--people", "--format", "csv")
	if want := "branch,2026-03-02,2026-03-02,li.na,1,1,0,1,0,0,0,360\n"; err != nil || !strings.Contains(out, want) {
		t.Errorf("report --people: %v\n%s\nwant a line %q", err, out, want)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "xml"}, "unknown format"},
		{[]string{"--day", "yesterday"}, "bad request"},
		{[]string{"--site", "nowhere", "--day", "2026-03-02"}, "unknown site"},
	} {
		out, err := runCmd(t, append([]string{"report", "--config", cfgFile}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("report %v: %v (%s), want an error with %q", tc.args, err, out, tc.want)
		}
	}
}
