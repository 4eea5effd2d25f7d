package storetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/nowserving/nowserving/queue/store/sqlite"
)

// migratedSQLite is an empty SQLite database with every migration
// applied, made once per test process: a new store applies a dozen
// migrations, each a synced transaction, which on a loaded disk takes
// seconds (measured at load 20: 10 s, against 1.3 s to open a copy), and
// what a test of the layers above the store is about comes after them.
var migratedSQLite struct {
	once sync.Once
	db   []byte
	err  error
}

// MigratedSQLite writes to file, which must not exist, an empty SQLite
// database with every migration applied: a copy of one migrated once per
// test process. sqlite.Open on it still checks that every migration the
// store ships is applied, with the checksum it has; what it skips is
// applying them again. A test of the migrations themselves opens a new
// file instead (SQLite).
func MigratedSQLite(file string) error {
	migratedSQLite.once.Do(func() { migratedSQLite.db, migratedSQLite.err = migrateSQLite() })
	if migratedSQLite.err != nil {
		return migratedSQLite.err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("storetest: new database: %w", err)
	}
	if _, err := f.Write(migratedSQLite.db); err != nil {
		f.Close()
		return fmt.Errorf("storetest: new database %s: %w", file, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("storetest: new database %s: %w", file, err)
	}
	return nil
}

// SQLiteMigrated opens a SQLite store, as SQLite does, on a new file that
// starts as a copy of a migrated database (MigratedSQLite), and closes it
// when the test ends.
func SQLiteMigrated(t testing.TB, opts ...sqlite.Opts) *sqlite.Store {
	t.Helper()
	file := filepath.Join(t.TempDir(), "test.db")
	if err := MigratedSQLite(file); err != nil {
		t.Fatal(err)
	}
	return At(t, sqlite.Open, file, pick(opts, 0))
}

// migrateSQLite opens a store on a new file, which applies the
// migrations, and returns a consistent copy of it (sqlite.Backup: one
// file, nothing left in a write-ahead log).
func migrateSQLite() ([]byte, error) {
	dir, err := os.MkdirTemp("", "storetest-")
	if err != nil {
		return nil, fmt.Errorf("storetest: migrate a database: %w", err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	src, dst := filepath.Join(dir, "src.db"), filepath.Join(dir, "migrated.db")
	st, err := sqlite.Open(ctx, src, sqlite.Opts{})
	if err != nil {
		return nil, fmt.Errorf("storetest: migrate a database: %w", err)
	}
	if err := st.Close(); err != nil {
		return nil, fmt.Errorf("storetest: migrate a database: %w", err)
	}
	if err := sqlite.Backup(ctx, src, dst); err != nil {
		return nil, fmt.Errorf("storetest: migrate a database: %w", err)
	}
	b, err := os.ReadFile(dst)
	if err != nil {
		return nil, fmt.Errorf("storetest: migrate a database: %w", err)
	}
	return b, nil
}
