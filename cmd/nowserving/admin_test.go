package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// runCmd runs the binary's root command with args and returns its output.
func runCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// TestCheckCatchesCorruption: migrate a database, issue tickets, check it
// (clean), delete an event behind the daemon's back, check again: the gap is
// reported and the command exits 1.
func TestCheckCatchesCorruption(t *testing.T) {
	db := filepath.Join(t.TempDir(), "check.db")
	if out, err := runCmd(t, "migrate", "--db", db); err != nil || !strings.Contains(out, "up to date") {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db, sqlite.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := queue.New(queue.Opts{Store: st, Sites: []queue.Site{storetest.TestSite()}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := eng.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: "hq"}, Service: "A"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := eng.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st.Close()

	out, err := runCmd(t, "check", "--db", db)
	if err != nil || !strings.Contains(out, "3 tickets, 3 events: all invariants hold") {
		t.Fatalf("clean database: err %v, output:\n%s", err, out)
	}

	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("DELETE FROM events WHERE version = 2"); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	out, err = runCmd(t, "check", "--db", db)
	var ex exitError
	if !errors.As(err, &ex) || ex != 1 {
		t.Fatalf("corrupted database: err %v, want exit status 1; output:\n%s", err, out)
	}
	if !strings.Contains(out, "version") || !strings.Contains(out, "hq") {
		t.Errorf("the report should name the site and the version gap:\n%s", out)
	}
}
