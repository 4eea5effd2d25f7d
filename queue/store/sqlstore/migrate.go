package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Migration is one embedded schema change.
type Migration struct {
	Version int
	Name    string // file name
	SQL     string
}

// MigrationsDir is the migrations/ directory of a store package's
// embedded files, for Dialect.Migrations. The directory is embedded with
// the package, so its absence is a build-time fact and panics.
func MigrationsDir(embedded fs.FS) fs.FS {
	sub, err := fs.Sub(embedded, "migrations")
	if err != nil {
		panic(err)
	}
	return sub
}

// Migrations lists the NNNN_name.sql files at the root of fsys by version.
func Migrations(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, fmt.Errorf("sqlstore: list migrations: %w", err)
	}
	var out []Migration
	seen := map[int]string{}
	for _, name := range names {
		prefix, _, ok := strings.Cut(path.Base(name), "_")
		v, err := strconv.Atoi(prefix)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("sqlstore: migration %s: name must be NNNN_name.sql", name)
		}
		if other, dup := seen[v]; dup {
			return nil, fmt.Errorf("sqlstore: migrations %s and %s share version %d", other, name, v)
		}
		seen[v] = name
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: read migration %s: %w", name, err)
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
}

// Expand fills the holes of a portable migration: each {{word}} of src
// becomes words[word]. A word the map lacks, or a {{ left open, is an
// error, so no migration runs with a hole in it.
func Expand(src string, words map[string]string) (string, error) {
	var b strings.Builder
	for {
		before, rest, ok := strings.Cut(src, "{{")
		b.WriteString(before)
		if !ok {
			return b.String(), nil
		}
		word, after, ok := strings.Cut(rest, "}}")
		if !ok {
			return "", fmt.Errorf("sqlstore: unclosed {{ before %.20q", rest)
		}
		w, ok := words[word]
		if !ok {
			return "", fmt.Errorf("sqlstore: no word for {{%s}}", word)
		}
		b.WriteString(w)
		src = after
	}
}

// Schema is the dialect's migrations by version with its Words filled in:
// what Migrate runs.
func (d *Dialect) Schema() ([]Migration, error) {
	ms, err := Migrations(d.Migrations)
	if err != nil {
		return nil, err
	}
	for i := range ms {
		if ms[i].SQL, err = Expand(ms[i].SQL, d.Words); err != nil {
			return nil, fmt.Errorf("%s: migration %s: %w", d.Name, ms[i].Name, err)
		}
	}
	return ms, nil
}

// Statements splits a migration into statements: each ends with a
// semicolon at the end of a line; lines starting with -- are comments.
func Statements(src string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteString("\n")
		if strings.HasSuffix(trimmed, ";") {
			stmt := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(cur.String()), ";"))
			if stmt != "" {
				out = append(out, stmt)
			}
			cur.Reset()
		}
	}
	if rest := strings.TrimSpace(cur.String()); rest != "" {
		out = append(out, rest)
	}
	return out
}

// ErrMigrationEdited is what Migrate refuses with when a migration it
// ships runs other statements than the ones a database recorded when it
// applied it: the file was edited after it was released (or another
// migration took its version). The database's schema is not the one the
// file now describes, so nothing is migrated.
var ErrMigrationEdited = errors.New("sqlstore: a migration was edited after it was applied")

// Checksum is what schema_migrations records of a migration: the SHA-256
// of the statements it runs (Statements, one a line, white space folded),
// in hex. Comments and layout may change; a statement may not.
func Checksum(src string) string {
	h := sha256.New()
	for _, stmt := range Statements(src) {
		fmt.Fprintln(h, strings.Join(strings.Fields(stmt), " "))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Migrate applies the migrations not yet recorded in schema_migrations,
// each in its own transaction (MySQL commits DDL implicitly: its migrations
// are written to be re-runnable). The dialect's migration lock keeps two
// daemons starting together from applying the same migration twice.
//
// Each applied migration is recorded with its Checksum. Before it applies
// anything, Migrate compares the recorded checksums with those of the
// migrations it ships and refuses, with ErrMigrationEdited, when one
// differs; a row from before checksums were recorded gets the checksum of
// the migration shipped under its version.
func (s *Store) Migrate(ctx context.Context) error {
	ms, err := s.d.Schema()
	if err != nil {
		return err
	}
	conn, err := s.writer.Conn(ctx)
	if err != nil {
		return s.wrap("migrate: connect", err)
	}
	defer conn.Close()
	if s.d.LockMigrations != nil {
		unlock, err := s.d.LockMigrations(ctx, conn)
		if err != nil {
			return s.wrap("migrate: lock", err)
		}
		defer unlock()
	}
	if err := s.migrationsTable(ctx, conn); err != nil {
		return err
	}
	if err := s.checkApplied(ctx, conn, ms); err != nil {
		return err
	}
	for _, m := range ms {
		applied, err := s.apply(ctx, conn, m)
		if err != nil {
			return err
		}
		if applied {
			s.log.InfoContext(ctx, "applied migration", "store", s.d.Name, "migration", m.Name)
		}
	}
	return nil
}

// migrationsTable creates schema_migrations, or adds its checksum column
// to one made before checksums were recorded.
func (s *Store) migrationsTable(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS schema_migrations ("+
		"version BIGINT NOT NULL PRIMARY KEY, name VARCHAR(255) NOT NULL, applied_at BIGINT NOT NULL, checksum VARCHAR(64))"); err != nil {
		return s.wrap("migrate: create schema_migrations", err)
	}
	if s.hasChecksum(ctx, conn) {
		return nil
	}
	if _, err := conn.ExecContext(ctx, "ALTER TABLE schema_migrations ADD COLUMN checksum VARCHAR(64)"); err != nil {
		// SQLite has no migration lock: another process may have just
		// added it.
		if s.hasChecksum(ctx, conn) {
			return nil
		}
		return s.wrap("migrate: add schema_migrations.checksum", err)
	}
	return nil
}

// hasChecksum reports whether schema_migrations has its checksum column:
// whether a query of it runs, the same on every dialect. (Any failure
// reads as "no": adding the column then fails with the real cause.)
func (s *Store) hasChecksum(ctx context.Context, conn *sql.Conn) bool {
	rows, err := conn.QueryContext(ctx, "SELECT checksum FROM schema_migrations WHERE 1 = 0")
	if err != nil {
		return false
	}
	return rows.Close() == nil
}

// checkApplied compares the checksum recorded of each applied migration
// with that of the one shipped under its version (ErrMigrationEdited when
// they differ), then records it where none was. Versions this build does
// not ship (a newer build applied them) are left alone.
func (s *Store) checkApplied(ctx context.Context, conn *sql.Conn, ms []Migration) error {
	missing, err := s.unrecorded(ctx, conn, ms)
	if err != nil {
		return err
	}
	for _, m := range missing {
		if _, err := conn.ExecContext(ctx, s.d.Rebind("UPDATE schema_migrations SET checksum = ? WHERE version = ? AND checksum IS NULL"),
			Checksum(m.SQL), m.Version); err != nil {
			return s.wrap("migrate: record the checksum of "+m.Name, err)
		}
	}
	if len(missing) > 0 {
		s.log.InfoContext(ctx, "recorded the checksums of migrations applied before they were kept", "store", s.d.Name, "migrations", len(missing))
	}
	return nil
}

// unrecorded reads the checksums of the applied migrations and returns
// those of ms applied without one; an edited one fails it.
func (s *Store) unrecorded(ctx context.Context, conn *sql.Conn, ms []Migration) ([]Migration, error) {
	shipped := make(map[int]Migration, len(ms))
	for _, m := range ms {
		shipped[m.Version] = m
	}
	rows, err := conn.QueryContext(ctx, "SELECT version, checksum FROM schema_migrations ORDER BY version")
	if err != nil {
		return nil, s.wrap("migrate: read schema_migrations", err)
	}
	defer rows.Close()
	var missing []Migration
	for rows.Next() {
		var v int
		var sum sql.NullString
		if err := rows.Scan(&v, &sum); err != nil {
			return nil, s.wrap("migrate: read schema_migrations", err)
		}
		m, ok := shipped[v]
		switch want := Checksum(m.SQL); {
		case !ok:
		case !sum.Valid:
			missing = append(missing, m)
		case sum.String != want:
			return nil, fmt.Errorf("%s: migrate: %w: %s (version %d) was applied with checksum %s, this build ships checksum %s: "+
				"restore the file as it was released and make the change in a new migration", s.d.Name, ErrMigrationEdited, m.Name, v, sum.String, want)
		}
	}
	return missing, s.wrap("migrate: read schema_migrations", rows.Err())
}

func (s *Store) apply(ctx context.Context, conn *sql.Conn, m Migration) (applied bool, err error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return false, s.wrap("migrate: begin "+m.Name, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var n int
	if err := tx.QueryRowContext(ctx, s.d.Rebind("SELECT COUNT(*) FROM schema_migrations WHERE version = ?"), m.Version).Scan(&n); err != nil {
		return false, s.wrap("migrate: read schema_migrations", err)
	}
	if n > 0 {
		return false, tx.Commit()
	}
	for _, stmt := range Statements(m.SQL) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return false, s.wrap("migrate: "+m.Name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.d.Rebind("INSERT INTO schema_migrations (version, name, applied_at, checksum) VALUES (?, ?, ?, ?)"),
		m.Version, m.Name, time.Now().UnixMilli(), Checksum(m.SQL)); err != nil {
		return false, s.wrap("migrate: record "+m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, s.wrap("migrate: commit "+m.Name, err)
	}
	return true, nil
}

// Version is the newest applied migration, 0 on an empty database.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v sql.NullInt64
	if err := s.reader.QueryRowContext(ctx, "SELECT MAX(version) FROM schema_migrations").Scan(&v); err != nil {
		return 0, s.wrap("schema version", err)
	}
	return int(v.Int64), nil
}
