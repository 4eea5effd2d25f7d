package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/postgres"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// dialects are the stores the suites know, by driver (as the
// configuration names it): open gives each test its own store, dsn names a
// new, empty database, at opens a store on a given one (as each of several
// daemons does).
var dialects = map[string]dialect{
	"sqlite":   {func(t *testing.T) queue.Store { return SQLite(t) }, func(t testing.TB) string { return filepath.Join(t.TempDir(), "m.db") }, migratingBy(sqlite.Open)},
	"postgres": {func(t *testing.T) queue.Store { return Postgres(t) }, PostgresDSN, migratingBy(postgres.Open)},
	"mysql":    {func(t *testing.T) queue.Store { return MySQL(t) }, MySQLDSN, migratingBy(mysql.Open)},
}

// A dialect is how the suites open the stores of one driver.
type dialect struct {
	open func(t *testing.T) queue.Store
	dsn  func(t testing.TB) string
	at   openAt
}

// migratingBy is open (sqlite.Open, postgres.Open or mysql.Open) as an
// openAt.
func migratingBy[S migrating](open func(context.Context, string, sqlstore.Opts) (S, error)) openAt {
	return func(ctx context.Context, dsn string, o sqlstore.Opts) (migrating, error) {
		s, err := open(ctx, dsn, o)
		return s, err
	}
}

// RunDialect runs, as subtests, what the store of driver ("sqlite",
// "postgres", "mysql") must pass: the Store/Tx conformance suite
// (Conformance), the engine's days on it (Engine), four daemons
// migrating one empty database at once (Migrate) and the checksums of the
// applied migrations (MigrateChecksums).
func RunDialect(t *testing.T, driver string) {
	d := dialectOf(t, driver)
	// Each part opens its own databases, so they run side by side.
	t.Run("Conformance", func(t *testing.T) { t.Parallel(); Run(t, d.open) })
	t.Run("Engine", func(t *testing.T) { t.Parallel(); RunEngine(t, d.open) })
	t.Run("Migrate", func(t *testing.T) { t.Parallel(); migrateConcurrently(t, d.at, d.dsn(t)) })
	t.Run("MigrateChecksums", func(t *testing.T) { t.Parallel(); migrateChecksums(t, d.at, d.dsn(t)) })
}

// RunEngineConcurrency is RunConcurrency on fresh stores of driver
// ("sqlite", "postgres", "mysql") at the scale of every store's
// TestEngineConcurrency: 50 goroutines issue 2,000 tickets over 3 services
// while 10 counters call, recall, no-show and complete; then the
// invariants. Whether it runs beside the package's other tests is the
// caller's choice (t.Parallel): the servers' packages run it beside theirs,
// which mostly wait on servers and clusters (bound by CPU under the race
// detector it takes longer there, but what it checks is the invariants,
// not its time); SQLite's runs alone.
func RunEngineConcurrency(t *testing.T, driver string) {
	RunConcurrency(t, dialectOf(t, driver).open, 50, 2000, 10)
}

// dialectOf is the entry of dialects for driver, failing t when there is
// none.
func dialectOf(t *testing.T, driver string) dialect {
	t.Helper()
	d, ok := dialects[driver]
	if !ok {
		t.Fatalf("storetest: no dialect %q", driver)
	}
	return d
}

// openFunc gives each test of a suite its own new, empty store.
type openFunc = func(t *testing.T) queue.Store

// subtest is one test of a suite, on stores of open.
type subtest struct {
	name string
	run  func(t *testing.T, open openFunc)
}

// timed are the tests of the suites that hold the time a call takes
// against a bound (a hung store answers within its deadline; kiosks
// without a deadline of their own finish within the store's): they run
// one at a time, before the rest of their suite starts, so that the
// suite's own load does not decide them.
var timed = map[string]bool{"HungStore": true, "CancelDuringCommit": true}

// runSuite runs each of tests as a subtest of t: the timed ones first, one
// at a time, then the others side by side, each on the stores it opens.
func runSuite(t *testing.T, open openFunc, tests []subtest) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !timed[tc.name] {
				t.Parallel()
			}
			tc.run(t, open)
		})
	}
}
