package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue/store/postgres"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestCheckPlans: no query of check is planned as a subplan run per row
// (a NOT IN over a subquery becomes one once the subquery outgrows
// work_mem: quadratic), whatever work_mem is; "every ticket was issued"
// is an anti-join. So are the queries of a chunk of days (the window of
// check's default and a chunk of --all), and those with no LEFT JOIN of
// tickets read the tickets of their days only: joined by id to the whole
// table, a hash join reads every ticket of the history.
func TestCheckPlans(t *testing.T) {
	t.Parallel()
	st := storetest.Postgres(t)
	db, err := st.DB().Conn(t.Context()) // one session: SET holds for it
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	window := map[string]bool{}
	for _, q := range postgres.Dialect().CheckWindowQueries() {
		window[q.SQL] = true
	}
	for _, wm := range []string{"64kB", "128MB"} {
		if _, err := db.ExecContext(t.Context(), "SET work_mem = '"+wm+"'"); err != nil {
			t.Fatal(err)
		}
		for _, q := range append(postgres.Dialect().CheckQueries(), postgres.Dialect().CheckWindowQueries()...) {
			plan := storetest.Strings(t, db, "EXPLAIN "+q.SQL)
			text := strings.Join(plan, "\n")
			if strings.Contains(text, "SubPlan") {
				t.Errorf("work_mem %s: %s runs a subplan per row:\n%s", wm, q.Name, text)
			}
			if q.Name == "every ticket was issued" && !strings.Contains(text, "Anti Join") {
				t.Errorf("work_mem %s: %s is no anti-join:\n%s", wm, q.Name, text)
			}
			if window[q.SQL] && !strings.Contains(q.SQL, "LEFT JOIN tickets") && !ticketsByDay(plan) {
				t.Errorf("work_mem %s: window's %s reads tickets of every day:\n%s", wm, q.Name, text)
			}
		}
	}
}

// ticketsByDay: every scan of tickets in plan (EXPLAIN's lines) has a
// condition on the day (a filter, an index's or a bitmap's condition).
func ticketsByDay(plan []string) bool {
	for i, line := range plan {
		if !strings.Contains(line, " on tickets") {
			continue
		}
		day := false
		for _, c := range plan[i+1:] {
			if strings.Contains(c, "->") {
				break
			}
			day = day || strings.Contains(c, "Cond:") && strings.Contains(c, "day") || strings.Contains(c, "Filter:") && strings.Contains(c, "day")
		}
		if !day {
			return false
		}
	}
	return true
}

// TestCancelOnServer: with Opts.CancelOnServer, a statement whose context
// ends has stopped on the server by the time the call returns (a cancel
// request, answered): a command that exits right after being stopped, as
// check does on Ctrl-C, leaves nothing running. (pgx's default drops the
// connection and sends the cancel from a goroutine of its close; the
// handler makes the cancel part of the call itself.)
func TestCancelOnServer(t *testing.T) {
	t.Parallel()
	st := storetest.Postgres(t, sqlstore.Opts{CancelOnServer: true})
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	const marker = "SELECT pg_sleep(60) /* cancel on server */"
	if _, err := st.DB().ExecContext(ctx, marker); err == nil {
		t.Fatal("a 60 s sleep ended within its 300 ms context")
	}
	var n int
	if err := st.DB().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM pg_stat_activity WHERE query = $1 AND state = 'active'", marker).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the statement still runs on the server after its call returned")
	}
}
