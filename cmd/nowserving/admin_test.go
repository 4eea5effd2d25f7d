package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// runCmd runs the binary's root command with args, and nothing on its
// standard input, and returns its output.
func runCmd(t testing.TB, args ...string) (string, error) {
	t.Helper()
	return runWithInput(t, "", args...)
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

// TestCheckNumberAnnouncedTwice replays what a server abort did on Galera:
// the third ticket's insert and its day counter roll back while its ISSUED
// event commits, so the next kiosk is told the same number. check reports
// the number announced twice and an event whose ticket is gone, with the
// configuration (days from the site's zone) and without it.
func TestCheckNumberAnnouncedTwice(t *testing.T) {
	cfgFile, cfg := migratedBranch(t, "Asia/Shanghai", "R", "Registration")
	db := cfg.Store.DSN
	ctx := context.Background()
	issue := func(n int) []queue.Ticket {
		t.Helper()
		st, err := openStore(ctx, cfg.Store, newLogger(cfg.Log), false)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		eng, err := queue.New(queue.Opts{Store: st, Sites: sites(cfg)})
		if err != nil {
			t.Fatal(err)
		}
		defer eng.Close(ctx)
		var ts []queue.Ticket
		for range n {
			tk, err := eng.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: "branch", Device: "kiosk"}, Service: "R"})
			if err != nil {
				t.Fatal(err)
			}
			ts = append(ts, tk)
		}
		return ts
	}
	first := issue(3)
	if out, err := runCmd(t, "check", "--config", cfgFile); err != nil || !strings.Contains(out, "all invariants hold") {
		t.Fatalf("clean database: err %v, output:\n%s", err, out)
	}

	raw, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	lost := first[2]
	for _, q := range []string{"DELETE FROM tickets WHERE id = ?", "UPDATE day_counters SET last = last - 1 WHERE site = 'branch'"} {
		args := []any{lost.ID}
		if !strings.Contains(q, "?") {
			args = nil
		}
		if _, err := raw.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	raw.Close()
	again := issue(1)[0]
	if again.Number != lost.Number {
		t.Fatalf("after the rollback the next ticket is %s, want %s again", again.Number, lost.Number)
	}

	// SQLite gives the rolled-back row's id to the next ticket (a rowid is
	// the largest plus one), so the old event names the new ticket: it has
	// two ISSUED events. A server that does not reuse ids (InnoDB's
	// auto-increment) leaves the old event without a ticket instead.
	want := []string{
		fmt.Sprintf("invariant 3: site branch day %s: ticket %s (id %d) has 2 ISSUED events (versions 3 to 4)", again.Day, again.Number, again.ID),
		fmt.Sprintf("invariant 1: site branch service R day %s: number %s announced 2 times (ISSUED events versions 3 to 4)", again.Day, again.Number),
	}
	if again.ID != lost.ID {
		want = []string{
			fmt.Sprintf("invariant 3: site branch: ISSUED event version 3 of %s names ticket id %d, which does not exist", lost.Number, lost.ID),
			fmt.Sprintf("invariant 1: site branch service R day %s: number %s announced twice: ISSUED event version 3 (ticket id %d, missing) and ticket id %d", again.Day, lost.Number, lost.ID, again.ID),
		}
	}
	// And the first ticket is lost under its event, which stays alone.
	raw, err = sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("DELETE FROM tickets WHERE id = ?", first[0].ID); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	want = append(want, fmt.Sprintf("invariant 3: site branch: ISSUED event version 1 of %s names ticket id %d, which does not exist", first[0].Number, first[0].ID))
	for _, args := range [][]string{{"--config", cfgFile}, {"--db", db}} {
		out, err := runCmd(t, append([]string{"check"}, args...)...)
		var ex exitError
		if !errors.As(err, &ex) || ex != 1 {
			t.Fatalf("check %v: err %v, want exit status 1; output:\n%s", args, err, out)
		}
		for _, want := range want {
			if !strings.Contains(out, want) {
				t.Errorf("check %v: output lacks %q:\n%s", args, want, out)
			}
		}
	}
}

// BenchmarkCheck times `nowserving check` on a SQLite day of 99,980 events
// (25,000 tickets at 20 counters, storetest.FillCheckDay).
func BenchmarkCheck(b *testing.B) {
	db := filepath.Join(b.TempDir(), "big.db")
	st, err := sqlite.Open(b.Context(), db, sqlite.Opts{})
	if err != nil {
		b.Fatal(err)
	}
	storetest.FillCheckDay(b, st, 25000, 20)
	st.Close()
	for b.Loop() {
		if out, err := runCmd(b, "check", "--db", db); err != nil || !strings.Contains(out, "25000 tickets, 99980 events: all invariants hold") {
			b.Fatalf("check: %v\n%s", err, out)
		}
	}
}
