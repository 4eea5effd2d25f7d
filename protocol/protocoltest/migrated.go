package protocoltest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/nowserving/nowserving/queue/store/sqlite"
)

// migrated is an empty database with every migration applied, made once
// per test process: a new store applies a dozen migrations, each a synced
// transaction, which on a loaded disk takes seconds (measured at load 20:
// 10 s, against 1.3 s to open a copy), and what a daemon's tests are about
// comes after them. A new daemon's database starts as a copy of it; Open
// still checks that every migration the store ships is applied, with the
// checksum it has.
var migrated struct {
	once sync.Once
	db   []byte
	err  error
}

// freshDB writes a new database, migrated and empty, to file, which must
// not exist.
func freshDB(file string) error {
	migrated.once.Do(func() { migrated.db, migrated.err = migrate() })
	if migrated.err != nil {
		return migrated.err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("protocoltest: new database: %w", err)
	}
	if _, err := f.Write(migrated.db); err != nil {
		f.Close()
		return fmt.Errorf("protocoltest: new database %s: %w", file, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("protocoltest: new database %s: %w", file, err)
	}
	return nil
}

// migrate opens a store on a new file, which applies the migrations, and
// returns a consistent copy of it (sqlite.Backup: one file, nothing left
// in a write-ahead log).
func migrate() ([]byte, error) {
	dir, err := os.MkdirTemp("", "protocoltest-")
	if err != nil {
		return nil, fmt.Errorf("protocoltest: migrate a database: %w", err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	src, dst := filepath.Join(dir, "src.db"), filepath.Join(dir, "migrated.db")
	st, err := sqlite.Open(ctx, src, sqlite.Opts{})
	if err != nil {
		return nil, fmt.Errorf("protocoltest: migrate a database: %w", err)
	}
	if err := st.Close(); err != nil {
		return nil, fmt.Errorf("protocoltest: migrate a database: %w", err)
	}
	if err := sqlite.Backup(ctx, src, dst); err != nil {
		return nil, fmt.Errorf("protocoltest: migrate a database: %w", err)
	}
	b, err := os.ReadFile(dst)
	if err != nil {
		return nil, fmt.Errorf("protocoltest: migrate a database: %w", err)
	}
	return b, nil
}
