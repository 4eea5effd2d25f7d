package postgres_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/nowserving/nowserving/queue/store/postgres"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

func TestStore(t *testing.T) {
	t.Parallel()
	storetest.RunDialect(t, "postgres")
}

// TestPlans: the statements the store sends (taken from the dialect's
// catalog, not copied here) read the partial indexes made for them on
// tables holding a busy week, call-next's Heads in index order (no Sort
// node: LIMIT 1 stops at the first row, and FOR UPDATE SKIP LOCKED locks
// only it).
func TestPlans(t *testing.T) {
	t.Parallel()
	storetest.RunPlans(t, storetest.Postgres(t), "ANALYZE tickets", "EXPLAIN ", readPlan)
}

// planScan matches the plan nodes that read a table: the index they read,
// none for a sequential scan.
var planScan = regexp.MustCompile(`(?:Index Scan using|Index Only Scan using|Bitmap Index Scan on) (\w+)|Seq Scan on`)

// readPlan reads a line of PostgreSQL's text EXPLAIN: the index a scan
// node reads, or a Sort node ordering rows.
func readPlan(row map[string]string, p *storetest.Plan) {
	node := strings.TrimPrefix(strings.TrimSpace(row["QUERY PLAN"]), "->  ")
	if strings.HasPrefix(node, "Sort") || strings.HasPrefix(node, "Incremental Sort") {
		p.Sorts = true
	}
	if m := planScan.FindStringSubmatch(node); m != nil {
		p.Indexes = append(p.Indexes, m[1])
	}
}

func TestUnreachable(t *testing.T) {
	storetest.Unreachable(t, postgres.Open, "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
}

func TestErrorsHideDriver(t *testing.T) {
	t.Parallel()
	storetest.ErrorsHideDriver(t, storetest.Postgres(t), (*pgconn.PgError)(nil))
}
