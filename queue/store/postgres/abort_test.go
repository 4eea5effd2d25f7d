package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue/store/postgres"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// openNamed opens a store whose connections carry a unique
// application_name, so a test can find (and kill) the engine's backends
// among those of every other test on the server.
func openNamed(t *testing.T) (*postgres.Store, string) {
	t.Helper()
	u, err := url.Parse(storetest.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	name := q.Get("search_path")
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	s, err := postgres.Open(t.Context(), u.String(), postgres.Opts{MaxConns: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, name
}

// signal runs fn (pg_cancel_backend or pg_terminate_backend) on the
// engine's backends in the given state and wait event type ("" for any).
func signal(ctx context.Context, q interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}, fn, app, state, wait string) error {
	rows, err := q.QueryContext(ctx, "SELECT "+fn+"(pid) FROM pg_stat_activity WHERE application_name = $1 "+
		"AND pid <> pg_backend_pid() AND ($2 = '' OR state = $2) AND ($3 = '' OR wait_event_type = $3)", app, state, wait)
	if err != nil {
		return err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("no backend of the engine is %q waiting on %q", state, wait)
	}
	return nil
}

// TestAbortDeadlockInClaim: PostgreSQL resolves a real deadlock by failing
// the engine's claim with 40P01; the whole transaction is retried.
func TestAbortDeadlockInClaim(t *testing.T) {
	s, _ := openNamed(t)
	deadlocks := func() int64 {
		var n int64
		if err := s.DB().QueryRowContext(t.Context(), "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := deadlocks()
	storetest.ClaimDeadlock(t, s)
	// Backends report their statistics within about a second.
	if !poll.Within(5*time.Second, 100*time.Millisecond, func() bool { return deadlocks() > before }) {
		t.Fatalf("pg_stat_database.deadlocks stayed at %d: no deadlock happened, the case proved nothing", before)
	}
}

// TestAbortCancelQuery: pg_cancel_backend on the claim while it waits for a
// lock (57014) aborts the transaction; it is retried whole.
func TestAbortCancelQuery(t *testing.T) {
	t.Parallel()
	s, app := openNamed(t)
	storetest.ClaimBlocked(t, s, func(ctx context.Context, x *sql.Tx) error {
		return signal(ctx, x, "pg_cancel_backend", app, "active", "Lock")
	})
}

// TestAbortTerminateBackend: pg_terminate_backend between two statements of
// a batch (tickets inserted, events not yet); the batch runs again on a
// new connection.
func TestAbortTerminateBackend(t *testing.T) {
	t.Parallel()
	s, app := openNamed(t)
	storetest.KillBetweenStatements(t, s, "AppendEvents", func(ctx context.Context, db *sql.DB) error {
		return signal(ctx, db, "pg_terminate_backend", app, "idle in transaction", "")
	})
}
