package mysql_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
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

// TestPlans: the statements the store sends (taken from the dialect's
// catalog, not copied here) read the indexes made for them on tables
// holding a busy week; call-next's Heads read theirs in order (no
// filesort), the condition for InnoDB to lock only the row it returns.
func TestPlans(t *testing.T) {
	s := open(t)
	storetest.FillForPlans(t, s)
	rows, err := s.DB().QueryContext(t.Context(), "ANALYZE TABLE tickets")
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
	storetest.CheckPlans(t, s.DB(), "EXPLAIN ", s.Dialect().Catalog(), readPlan)
}

// readPlan reads a row of MySQL's tabular EXPLAIN: a table read, its key
// ("" for a full scan) and, in Extra, whether it sorts.
func readPlan(row map[string]string, p *storetest.Plan) {
	p.Indexes = append(p.Indexes, row["key"])
	p.Sorts = p.Sorts || strings.Contains(row["Extra"], "filesort")
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
