package mysql_test

import (
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

func TestStore(t *testing.T) {
	t.Parallel()
	storetest.RunDialect(t, "mysql")
}

// TestSession checks what Open sets on every connection.
func TestSession(t *testing.T) {
	t.Parallel()
	s := storetest.MySQL(t)
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
	t.Parallel()
	storetest.RunPlans(t, storetest.MySQL(t), "ANALYZE TABLE tickets", "EXPLAIN ", readPlan)
}

// readPlan reads a row of MySQL's tabular EXPLAIN: a table read, its key
// ("" for a full scan) and, in Extra, whether it sorts.
func readPlan(row map[string]string, p *storetest.Plan) {
	p.Indexes = append(p.Indexes, row["key"])
	p.Sorts = p.Sorts || strings.Contains(row["Extra"], "filesort")
}

func TestUnreachable(t *testing.T) {
	storetest.Unreachable(t, mysql.Open, "nobody@tcp(127.0.0.1:1)/none?timeout=2s")
}

func TestErrorsHideDriver(t *testing.T) {
	t.Parallel()
	storetest.ErrorsHideDriver(t, storetest.MySQL(t), (*gomysql.MySQLError)(nil))
}
