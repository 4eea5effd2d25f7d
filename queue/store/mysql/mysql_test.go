package mysql_test

import (
	"context"
	"errors"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

func open(t testing.TB) *mysql.Store {
	t.Helper()
	s, err := mysql.Open(t.Context(), storetest.MySQLDSN(t), mysql.Opts{MaxConns: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) queue.Store { return open(t) })
}

func TestEngine(t *testing.T) {
	storetest.RunEngine(t, func(t *testing.T) queue.Store { return open(t) })
}

// TestMigrateConcurrent: four daemons starting together on an empty
// database; the schema ends at 0005_event_context.
func TestMigrateConcurrent(t *testing.T) {
	storetest.MigrateConcurrently(t, storetest.MySQLDSN(t), func(ctx context.Context, dsn string, n int) (*sqlstore.Store, error) {
		s, err := mysql.Open(ctx, dsn, mysql.Opts{MaxConns: n})
		if err != nil {
			return nil, err
		}
		return s.Store, nil
	}, 5)
}

// TestSession checks what Open sets on every connection.
func TestSession(t *testing.T) {
	s := open(t)
	var level string
	if err := s.DB().QueryRowContext(t.Context(), "SELECT @@tx_isolation").Scan(&level); err != nil {
		if err := s.DB().QueryRowContext(t.Context(), "SELECT @@transaction_isolation").Scan(&level); err != nil {
			t.Fatal(err)
		}
	}
	if level != "READ-COMMITTED" {
		t.Errorf("session isolation %s, want READ-COMMITTED", level)
	}
}

// TestHeadUsesIndex: call-next's query reads the waiting-ticket index in
// order (no filesort), the condition for InnoDB to lock only the row it
// returns.
func TestHeadUsesIndex(t *testing.T) {
	s := open(t)
	rows, err := s.DB().QueryContext(t.Context(), "EXPLAIN SELECT id FROM tickets WHERE site = 's' AND day = 'd' AND queue = 'A' "+
		"AND status = 'WAITING' AND target_counter = '' ORDER BY rnk, sort_key, id LIMIT 1 FOR UPDATE SKIP LOCKED")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	n := 0
	for rows.Next() {
		n++
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := map[string]string{}
		for i, c := range cols {
			if b, ok := vals[i].([]byte); ok {
				row[c] = string(b)
			}
		}
		if row["key"] != "tickets_head" {
			t.Errorf("Head uses key %q, want tickets_head: %v", row["key"], row)
		}
		if extra := row["Extra"]; strings.Contains(extra, "filesort") {
			t.Errorf("Head sorts rows: %v", row)
		}
	}
	if n == 0 {
		t.Error("EXPLAIN returned no plan")
	}
}

func TestUnreachable(t *testing.T) {
	_, err := mysql.Open(t.Context(), "nobody@tcp(127.0.0.1:1)/none?timeout=2s", mysql.Opts{})
	if err == nil {
		t.Fatal("Open of a closed port succeeded")
	}
	if !errors.Is(err, queue.ErrUnavailable) {
		t.Errorf("Open of a closed port: %v, want ErrUnavailable", err)
	}
}

func TestErrorsHideDriver(t *testing.T) {
	storetest.ErrorsHideDriver(t, open(t), (*gomysql.MySQLError)(nil))
}
