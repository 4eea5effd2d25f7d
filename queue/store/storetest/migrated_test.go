package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlite"
)

// nextSeq writes in a store: it needs the schema.
func nextSeq(ctx context.Context, tx queue.Tx) error {
	_, err := tx.NextSeq(ctx, queue.DayKey{Site: "s", Service: "A", Day: "2026-12-01"}, 1)
	return err
}

// TestMigratedSQLite: the copy holds the schema (a store opened on it
// without migrating writes), and a file that exists is not overwritten.
func TestMigratedSQLite(t *testing.T) {
	file := filepath.Join(t.TempDir(), "copy.db")
	if err := MigratedSQLite(file); err != nil {
		t.Fatal(err)
	}
	if MigratedSQLite(file) == nil {
		t.Error("a second copy over the first: no error")
	}
	st := At(t, sqlite.Open, file, sqlite.Opts{NoMigrate: true})
	if err := st.Update(t.Context(), nextSeq); err != nil {
		t.Fatalf("write on the copy, not migrated again: %v", err)
	}
}
