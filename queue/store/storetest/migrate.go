package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// migrating is what the migration tests use of a store: the shared SQL
// part's Migrate, Version, Dialect, DB and Close.
type migrating interface {
	Migrate(ctx context.Context) error
	Version(ctx context.Context) (int, error)
	Dialect() *sqlstore.Dialect
	DB() *sql.DB
	Close() error
}

// openAt opens a store of one driver on the database dsn names.
type openAt func(ctx context.Context, dsn string, o sqlstore.Opts) (migrating, error)

// migrateConcurrently opens four stores with at on one empty database at
// once, as daemons starting together do: every
// one must succeed; a fifth store opened after them migrates once more
// (nothing left to do), and the schema must end with every migration the
// store embeds recorded once.
func migrateConcurrently(t *testing.T, at openAt, dsn string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			s, err := at(context.Background(), dsn, sqlstore.Opts{MaxConns: 2})
			if err != nil {
				errs <- err
				return
			}
			errs <- s.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s, err := at(t.Context(), dsn, sqlstore.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	ms, err := s.Dialect().Schema()
	if err != nil || len(ms) == 0 {
		t.Fatalf("embedded migrations: %v, %v", ms, err)
	}
	want := ms[len(ms)-1].Version
	if v, err := s.Version(t.Context()); err != nil || v != want {
		t.Errorf("schema version %d, %v; want %d", v, err, want)
	}
	var n int
	if err := s.DB().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM schema_migrations").Scan(&n); err != nil || n != len(ms) {
		t.Errorf("%d migrations recorded, %v; want %d", n, err, len(ms))
	}
}

// migrateChecksums checks the checksums Migrate keeps, on one empty
// database, through a store at opens on it: every migration it applies is recorded with its
// checksum; a database whose rows predate checksums (no checksum column)
// gets them all on its next migrate; a shipped migration whose statements
// were edited after it was applied makes Migrate refuse, naming it, and
// apply nothing, while an edit of its comments and layout alone does not.
func migrateChecksums(t *testing.T, at openAt, dsn string) {
	t.Helper()
	ctx := t.Context()
	s, err := at(ctx, dsn, sqlstore.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ms, err := s.Dialect().Schema()
	if err != nil || len(ms) < 3 {
		t.Fatalf("embedded migrations: %d, %v", len(ms), err)
	}
	recorded := func(when string) {
		t.Helper()
		rows, err := s.DB().QueryContext(ctx, "SELECT version, checksum FROM schema_migrations")
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		defer rows.Close()
		got := map[int]string{}
		for rows.Next() {
			var v int
			var sum sql.NullString
			if err := rows.Scan(&v, &sum); err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			got[v] = sum.String
		}
		for _, m := range ms {
			if want := sqlstore.Checksum(m.SQL); got[m.Version] != want {
				t.Errorf("%s: %s recorded with checksum %q, want %q", when, m.Name, got[m.Version], want)
			}
		}
	}
	recorded("new database")

	// A database migrated before checksums were kept.
	if _, err := s.DB().ExecContext(ctx, "ALTER TABLE schema_migrations DROP COLUMN checksum"); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("migrate a database without checksums: %v", err)
	}
	recorded("rows from before checksums")

	edited := ms[2]
	edited.SQL = "-- a comment added after the release\n\n" + strings.ReplaceAll(edited.SQL, "\n", "\n  ")
	if err := migrateWith(ctx, s, ms, edited); err != nil {
		t.Errorf("migrate after an edit of comments and layout: %v", err)
	}
	edited.SQL = ms[2].SQL + "\nCREATE TABLE edited_after_release (id INTEGER);\n"
	later := sqlstore.Migration{Version: ms[len(ms)-1].Version + 1, Name: "9999_later.sql", SQL: "CREATE TABLE later_migration (id INTEGER);\n"}
	err = migrateWith(ctx, s, ms, edited, later)
	if !errors.Is(err, sqlstore.ErrMigrationEdited) || !strings.Contains(err.Error(), ms[2].Name) {
		t.Errorf("migrate after an edit of %s's statements: %v, want %v naming it", ms[2].Name, err, sqlstore.ErrMigrationEdited)
	}
	if v, err := s.Version(ctx); err != nil || v != ms[len(ms)-1].Version {
		t.Errorf("after the refusal: schema version %d, %v; want %d (nothing applied)", v, err, ms[len(ms)-1].Version)
	}
}

// migrateWith runs Migrate on s's database with s's dialect shipping ms,
// each replaced by the one of over with its version, or added.
func migrateWith(ctx context.Context, s migrating, ms []sqlstore.Migration, over ...sqlstore.Migration) error {
	files := fstest.MapFS{}
	for _, m := range append(ms[:len(ms):len(ms)], over...) {
		for name := range files {
			if strings.HasPrefix(name, fmt.Sprintf("%04d_", m.Version)) {
				delete(files, name)
			}
		}
		files[m.Name] = &fstest.MapFile{Data: []byte(m.SQL)}
	}
	d := *s.Dialect()
	d.Migrations = files
	return sqlstore.New(&d, s.DB(), s.DB(), sqlstore.Opts{}).Migrate(ctx)
}
