package storetest

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/postgres"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// SQLite opens a SQLite store on a new file in the test's temporary
// directory and closes it when the test ends; opts, when given, configure
// it (the first counts).
func SQLite(t testing.TB, opts ...sqlstore.Opts) *sqlite.Store {
	t.Helper()
	return At(t, sqlite.Open, filepath.Join(t.TempDir(), "test.db"), pick(opts, 0))
}

// Postgres opens a PostgreSQL store (a pool of 20 unless opts say) on a
// fresh schema of the test server (see PostgresDSN) and closes it when the
// test ends.
func Postgres(t testing.TB, opts ...sqlstore.Opts) *postgres.Store {
	t.Helper()
	return At(t, postgres.Open, PostgresDSN(t), pick(opts, 20))
}

// MySQL opens a MySQL/MariaDB store (a pool of 20 unless opts say) on a
// fresh database of the test server (see MySQLDSN) and closes it when the
// test ends.
func MySQL(t testing.TB, opts ...sqlstore.Opts) *mysql.Store {
	t.Helper()
	return At(t, mysql.Open, MySQLDSN(t), pick(opts, 20))
}

// At opens a store with open (sqlite.Open, postgres.Open or mysql.Open) on
// the database dsn names, failing the test if it cannot, and closes it
// when the test ends: one of several on one database, as daemons have.
func At[S interface{ Close() error }](t testing.TB, open func(context.Context, string, sqlstore.Opts) (S, error), dsn string, o sqlstore.Opts) S {
	t.Helper()
	s, err := open(t.Context(), dsn, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Unreachable checks that open (postgres.Open or mysql.Open) of dsn, a
// server on a closed port, fails with queue.ErrUnavailable.
func Unreachable[S interface{ Close() error }](t *testing.T, open func(context.Context, string, sqlstore.Opts) (S, error), dsn string) {
	t.Helper()
	s, err := open(t.Context(), dsn, sqlstore.Opts{})
	if err == nil {
		s.Close()
		t.Fatal("Open of a closed port succeeded")
	}
	if !errors.Is(err, queue.ErrUnavailable) {
		t.Errorf("Open of a closed port: %v, want ErrUnavailable", err)
	}
}

// An Engine is one of the three stores, by the name the configuration
// gives its driver, with an opener of a fresh store of it (SQLite, Postgres
// or MySQL) that gives the store both as a queue.Store and as its shared
// SQL part.
type Engine struct {
	Name string
	Open func(t testing.TB) (queue.Store, *sqlstore.Store)
}

// Engines are the three stores, SQLite first: a test that runs on every
// store ranges over them, a subtest per Name.
var Engines = []Engine{
	{"sqlite", func(t testing.TB) (queue.Store, *sqlstore.Store) { s := SQLite(t); return s, s.Store }},
	{"postgres", func(t testing.TB) (queue.Store, *sqlstore.Store) { s := Postgres(t); return s, s.Store }},
	{"mysql", func(t testing.TB) (queue.Store, *sqlstore.Store) { s := MySQL(t); return s, s.Store }},
}

// EachStore runs f as a subtest on a fresh store of each of Engines: qs as
// the engine sees it, st the SQL store under it. The subtests run side by
// side, each on its own database.
func EachStore(t *testing.T, f func(t *testing.T, qs queue.Store, st *sqlstore.Store)) {
	for _, e := range Engines {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			qs, st := e.Open(t)
			f(t, qs, st)
		})
	}
}

// pick is the first of opts (the zero Opts when none), with MaxConns
// conns when it sets none.
func pick(opts []sqlstore.Opts, conns int) sqlstore.Opts {
	var o sqlstore.Opts
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.MaxConns == 0 {
		o.MaxConns = conns
	}
	return o
}
