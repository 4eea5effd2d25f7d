package storetest

import (
	"path/filepath"
	"testing"

	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/postgres"
	"github.com/nowserving/nowserving/queue/store/sqlite"
)

// SQLite opens a SQLite store on a new file in the test's temporary
// directory and closes it when the test ends.
func SQLite(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "test.db"), sqlite.Opts{})
	return opened(t, s, err)
}

// Postgres opens a PostgreSQL store (a pool of 20) on a fresh schema of
// the test server (see PostgresDSN) and closes it when the test ends.
func Postgres(t testing.TB) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), PostgresDSN(t), postgres.Opts{MaxConns: 20})
	return opened(t, s, err)
}

// MySQL opens a MySQL/MariaDB store (a pool of 20) on a fresh database of
// the test server (see MySQLDSN) and closes it when the test ends.
func MySQL(t testing.TB) *mysql.Store {
	t.Helper()
	s, err := mysql.Open(t.Context(), MySQLDSN(t), mysql.Opts{MaxConns: 20})
	return opened(t, s, err)
}

// opened fails the test on err, else closes s when the test ends.
func opened[S interface{ Close() error }](t testing.TB, s S, err error) S {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
