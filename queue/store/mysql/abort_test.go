package mysql_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// querier is what *sql.DB and *sql.Tx both offer.
type querier interface {
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error)
}

// kill runs KILL what (QUERY or CONNECTION) through q on each of the
// engine's threads that threadsOf lists.
func kill(ctx context.Context, q querier, what string, waiting bool) error {
	// information_schema.innodb_trx is a cache refreshed at most every
	// 0.1 s, and a parallel test's read may have refreshed it just before
	// the engine's transaction began: ask again until it shows.
	var ids []int64
	var err error
	poll.Within(2*time.Second, 20*time.Millisecond, func() bool {
		ids, err = threadsOf(ctx, q, waiting)
		return len(ids) > 0 || ctx.Err() != nil
	})
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := q.ExecContext(ctx, fmt.Sprintf("KILL %s %d", what, id)); err != nil {
			return err
		}
	}
	return nil
}

// threadsOf lists the connection ids of this test database's open
// transactions, other than the asking connection's; waiting keeps only
// those waiting for a row lock.
func threadsOf(ctx context.Context, q querier, waiting bool) ([]int64, error) {
	query := "SELECT t.trx_mysql_thread_id FROM information_schema.innodb_trx t " +
		"JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id " +
		"WHERE p.db = DATABASE() AND t.trx_mysql_thread_id <> CONNECTION_ID()"
	if waiting {
		query += " AND t.trx_state = 'LOCK WAIT'"
	}
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 && rows.Err() == nil {
		return nil, fmt.Errorf("no transaction of the engine found (waiting=%v)", waiting)
	}
	return ids, rows.Err()
}

// TestAbortDeadlockInClaim: InnoDB resolves a real deadlock by rolling the
// engine's whole transaction back (1213) while call-next's claim waits; the
// connection then runs in autocommit, so the claim must not retry inside it.
func TestAbortDeadlockInClaim(t *testing.T) {
	s := storetest.MySQL(t)
	var before int64
	deadlocks := func() int64 {
		var name string
		var n int64
		if err := s.DB().QueryRowContext(t.Context(), "SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'").Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before = deadlocks()
	storetest.ClaimDeadlock(t, s)
	if after := deadlocks(); after <= before {
		t.Errorf("Innodb_deadlocks %d -> %d: no deadlock happened, the case proved nothing", before, after)
	}
}

// TestAbortKillQuery: KILL QUERY on the claim while it waits for a lock
// (1317, query interrupted) ends the attempt; the whole transaction is
// retried.
func TestAbortKillQuery(t *testing.T) {
	t.Parallel()
	storetest.ClaimBlocked(t, storetest.MySQL(t), func(ctx context.Context, x *sql.Tx) error {
		return kill(ctx, x, "QUERY", true)
	})
}

// TestAbortKillConnection: the engine's connection is killed between two
// statements of a batch (tickets inserted, events not yet); the batch runs
// again on a new connection.
func TestAbortKillConnection(t *testing.T) {
	t.Parallel()
	s := storetest.MySQL(t)
	storetest.KillBetweenStatements(t, s, "AppendEvents", func(ctx context.Context, db *sql.DB) error {
		return kill(ctx, db, "CONNECTION", false)
	})
}
