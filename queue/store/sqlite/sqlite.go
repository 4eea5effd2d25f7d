// Package sqlite is the embedded nowserving store: SQLite through the pure
// Go driver modernc.org/sqlite, in WAL mode with synchronous=FULL so every
// committed ticket survives a power cut. All writes go through one
// connection running BEGIN IMMEDIATE (SQLite has one writer anyway, and
// taking the write lock at BEGIN means a transaction never fails half-way
// on a lock upgrade); reads run on a separate pool of read-only connections.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/nowserving/nowserving/internal/backoff"
	"github.com/nowserving/nowserving/internal/part"
	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Opts configures the store; see sqlstore.Opts. MaxConns sizes the reader
// pool (default 4); there is always exactly one writer connection.
type Opts = sqlstore.Opts

// BusyTimeoutMs is how long a connection waits for a lock another process
// holds before failing with SQLITE_BUSY (classified as queue.ErrAborted).
const BusyTimeoutMs = 10000

// Store is the SQLite store.
type Store struct {
	*sqlstore.Store
}

// CheckpointEvery is how often the store's checkpointer copies the
// write-ahead log's new pages into the database file.
//
// SQLite's own checkpoint (wal_autocheckpoint, every 1,000 pages) runs
// inside the COMMIT that crosses the mark, on the writer: that commit then
// also writes those pages back and syncs the database file, one batch in
// every few hundred held back by two more fsyncs, which a loaded disk
// makes hundreds of milliseconds (the tail of BenchmarkCounterCall in web).
// The writer does not checkpoint; a reader connection does, PASSIVE (it
// takes no lock a writer or a reader waits for, and stops short of pages a
// reader still needs), so commits go on meanwhile.
const CheckpointEvery = time.Second

var _ queue.Store = (*Store)(nil)

// Dialect returns the SQLite dialect.
func Dialect() *sqlstore.Dialect {
	return &sqlstore.Dialect{
		Name:            "sqlite",
		Upsert:          sqlstore.OnConflict,
		CacheStatements: true,
		IDs:             sqlstore.IDsAfterMax,
		Classify:        classify,
		// Pages freed by the purge go back to the file system a few at a
		// time (the writer is held while it runs).
		Reclaim:    "PRAGMA incremental_vacuum(256)",
		Migrations: sqlstore.WithPortable(sqlstore.MigrationsDir(migrations)),
		// INTEGER PRIMARY KEY is the rowid; every INTEGER column holds 64 bits.
		Words:     map[string]string{"id": "INTEGER PRIMARY KEY", "int": "INTEGER", "int64": "INTEGER", "bytes": "BLOB", "without_rowid": " WITHOUT ROWID"},
		DropIndex: func(name string) string { return "DROP INDEX " + name },
	}
}

// Open opens (creating it if needed) the database file named by dsn, a path
// or a file: URI, and applies the migrations unless opts.NoMigrate. The
// store adds its own connection parameters (WAL, synchronous=FULL,
// busy_timeout, foreign keys, BEGIN IMMEDIATE on the writer).
//
// Another process opening or migrating the same file at that moment (a
// second daemon, `nowserving migrate`) can hold it past busy_timeout while
// the file switches to WAL: Open then tries again, a few times, before it
// gives up.
func Open(ctx context.Context, dsn string, opts Opts) (*Store, error) {
	for attempt := 1; ; attempt++ {
		s, err := open(ctx, dsn, opts)
		if err == nil || !errors.Is(err, queue.ErrAborted) || attempt == 5 {
			return s, err
		}
		if backoff.Sleep(ctx, time.Duration(attempt*50)*time.Millisecond) != nil {
			return nil, err
		}
	}
}

func open(ctx context.Context, dsn string, opts Opts) (*Store, error) {
	if dsn == "" || strings.Contains(dsn, ":memory:") || strings.Contains(dsn, "mode=memory") {
		return nil, fmt.Errorf("sqlite: open %q: %w: need a database file (an in-memory database is one per connection)", dsn, queue.ErrBadRequest)
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	common := url.Values{}
	common.Set("_busy_timeout", fmt.Sprint(BusyTimeoutMs))
	common.Set("_foreign_keys", "1")
	common.Set("_journal_mode", "WAL")
	common.Set("_synchronous", "FULL")
	// The statement journal of every savepoint (one per request of a
	// batch) goes to memory, not to a temporary file: on a file, each page
	// a request first touches is one pwrite, and the file is opened and
	// closed per transaction, a third of the daemon's CPU per ticket. The
	// statement journal only serves ROLLBACK TO inside an open transaction;
	// what survives a crash is the WAL, synced at each commit as before.
	// Readers write no journal: their temporary files are the sorts and
	// automatic indexes of long reads (check, report), which go to disk
	// past the page cache instead of growing the process with the
	// history they read.
	writerDSN := dsn + sep + common.Encode() + "&_pragma=temp_store(MEMORY)&_pragma=wal_autocheckpoint(0)&_txlock=immediate"
	readerDSN := dsn + sep + common.Encode() + "&_pragma=temp_store(FILE)&_query_only=1"

	writer, err := sql.Open("sqlite", writerDSN)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", dsn, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	// Connect the writer first: it switches the file to WAL before any
	// reader opens it.
	if err := writer.PingContext(ctx); err != nil {
		writer.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", dsn, Dialect().Err(err))
	}
	if err := incrementalVacuum(ctx, writer); err != nil {
		writer.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", dsn, Dialect().Err(err))
	}
	reader, err := sql.Open("sqlite", readerDSN)
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", dsn, err)
	}
	n := positive.Or(opts.MaxConns, 4)
	reader.SetMaxOpenConns(n)
	reader.SetMaxIdleConns(n)
	s, err := sqlstore.Start(ctx, Dialect(), writer, reader, opts)
	if err != nil {
		return nil, err
	}
	// The checkpointer stops when the store closes, also when a caller
	// closes the *sqlstore.Store inside (cmd/nowserving keeps only that).
	s.AtClose(checkpointer(reader, CheckpointEvery))
	return &Store{Store: s}, nil
}

// checkpointer checkpoints the write-ahead log on a connection of readers
// at once and then every interval, until stop.
func checkpointer(readers *sql.DB, every time.Duration) (stop func()) {
	st := part.NewStop()
	go st.Every(context.Background(), every, func() bool {
		ctx, cancel := st.Context(context.Background())
		defer cancel()
		// A failure (the file gone, say) shows on the next write; the next
		// pass tries again.
		var busy, frames, copied int
		_ = readers.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied)
		return true
	})
	return func() { st.Request(); <-st.Done() }
}

// incrementalVacuum sets auto_vacuum=INCREMENTAL on a new, empty file,
// before its first table, so the pages the purge frees can be given back to the file
// system (Store.Reclaim). A file made before keeps its mode (0, none)
// until a VACUUM (see README); a file opened read-only is left alone.
func incrementalVacuum(ctx context.Context, writer *sql.DB) error {
	var tables int
	if err := writer.QueryRowContext(ctx, "SELECT COUNT(*) FROM sqlite_master").Scan(&tables); err != nil || tables > 0 {
		return err
	}
	if _, err := writer.ExecContext(ctx, "PRAGMA auto_vacuum = INCREMENTAL"); err != nil {
		return err
	}
	// The switch to WAL wrote the file's first page already: a VACUUM of
	// the empty file (instant) applies the mode.
	_, err := writer.ExecContext(ctx, "VACUUM")
	return err
}

// classify maps SQLite result codes, the one place that decides which end
// a transaction: BUSY, LOCKED (another process holds the database past
// busy_timeout), INTERRUPT and ABORT abort it; UNIQUE and PRIMARY KEY
// violations are duplicates; I/O, full-disk, read-only, open and corruption
// failures make the store unavailable.
func classify(err error) error {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return nil
	}
	switch code := e.Code(); code {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return queue.ErrDuplicate
	default:
		switch code & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_INTERRUPT, sqlite3.SQLITE_ABORT:
			// Another process holds the database past busy_timeout, or
			// the statement was interrupted: the transaction cannot go on.
			return queue.ErrAborted
		case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY,
			sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			// SQLite may have rolled the transaction back already; either
			// way the file cannot take the write.
			return queue.ErrUnavailable
		}
	}
	return nil
}
