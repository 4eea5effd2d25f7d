package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestBackupWhileWriting copies the database while a writer commits pairs
// of rows (x and -x) in one transaction each: the copy is a snapshot, so
// it holds whole transactions only (an even count, a zero sum), its schema
// is the store's, and it passes the integrity check.
func TestBackupWhileWriting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	dsn := filepath.Join(dir, "q.db")
	st := storetest.At(t, sqlite.Open, dsn, sqlite.Opts{})
	db := st.DB()
	if _, err := db.Exec("CREATE TABLE pairs (x INTEGER NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var written atomic.Int64
	storetest.Until(&wg, stop, func(i int) bool {
		tx, err := db.Begin()
		if err == nil {
			_, err = tx.Exec("INSERT INTO pairs (x) VALUES (?), (?)", i, -i)
		}
		if err == nil {
			err = tx.Commit()
		}
		if err != nil {
			t.Errorf("write pair %d: %v", i, err)
			return false
		}
		written.Store(int64(i))
		return true
	})
	to := filepath.Join(dir, "copy.db")
	for written.Load() < 50 && !t.Failed() {
		// let the writer get going
		_ = db.QueryRow("SELECT 1").Scan(new(int))
	}
	err := sqlite.Backup(ctx, dsn, to)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("backup: %v", err)
	}
	cp, err := sql.Open("sqlite", to)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	var n, sum, version int
	if err := cp.QueryRow("SELECT COUNT(*), COALESCE(SUM(x), 0) FROM pairs").Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	if n == 0 || n%2 != 0 || sum != 0 {
		t.Errorf("copy holds %d rows summing to %d, want an even count > 0 summing to 0", n, sum)
	}
	if int64(n/2) > written.Load() {
		t.Errorf("copy holds %d pairs, more than the %d written", n/2, written.Load())
	}
	if err := cp.QueryRow("SELECT COUNT(*) FROM tickets").Scan(&version); err != nil {
		t.Errorf("copy has no tickets table: %v", err)
	}
	// A second backup to the same file is refused, the copy untouched.
	if err := sqlite.Backup(ctx, dsn, to); !errors.Is(err, os.ErrExist) {
		t.Errorf("backup over an existing file: %v, want os.ErrExist", err)
	}
	if err := sqlite.Backup(ctx, filepath.Join(dir, "none.db"), filepath.Join(dir, "x.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("backup of a missing database: %v, want os.ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "none.db")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("backup created the missing database")
	}
}
