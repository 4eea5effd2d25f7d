// Package postgres is the PostgreSQL store of nowserving, through pgx/v5's
// database/sql driver (github.com/jackc/pgx/v5/stdlib; the pool is
// database/sql's). Sessions stay in READ COMMITTED with synchronous_commit
// on; call-next locks its row with FOR UPDATE SKIP LOCKED, so two counters
// never wait on (or get) the same ticket; the day counter is one
// INSERT ... ON CONFLICT ... DO UPDATE ... RETURNING. Several daemons may
// share one database: migrations take an advisory lock.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Opts configures the store; see sqlstore.Opts. MaxConns caps the pool
// (default 20).
type Opts = sqlstore.Opts

// Store is the PostgreSQL store.
type Store struct {
	*sqlstore.Store
}

var _ queue.Store = (*Store)(nil)

// Dialect returns the PostgreSQL dialect.
func Dialect() *sqlstore.Dialect {
	return &sqlstore.Dialect{
		Name:           "postgres",
		Dollar:         true,
		RowLocks:       true,
		SkipLocked:     true,
		Upsert:         sqlstore.OnConflict,
		ReturningID:    true,
		SumCast:        "BIGINT",
		Snapshot:       sql.LevelRepeatableRead,
		Classify:       classify,
		Migrations:     sqlstore.WithPortable(sqlstore.MigrationsDir(migrations)),
		LockMigrations: lockMigrations,
		DropIndex:      func(name string) string { return "DROP INDEX " + name },
	}
}

// Open connects to the database at dsn (a postgres:// URL or key=value
// string as pgx accepts it; search_path may name the schema) and applies
// the migrations unless opts.NoMigrate.
func Open(ctx context.Context, dsn string, opts Opts) (*Store, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", Dialect().Err(err))
	}
	s, err := sqlstore.Connect(ctx, Dialect(), db, opts)
	if err != nil {
		return nil, err
	}
	return &Store{s}, nil
}

// lockMigrations takes a session advisory lock named after the schema, so
// daemons starting together migrate one after the other.
func lockMigrations(ctx context.Context, conn *sql.Conn) (func(), error) {
	const key = "hashtext('nowserving migrate ' || current_schema())"
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock("+key+")"); err != nil {
		return nil, err
	}
	return func() {
		_, _ = conn.ExecContext(context.Background(), "SELECT pg_advisory_unlock("+key+")")
	}, nil
}

// classify maps SQLSTATEs, the one place that decides which errors end a
// transaction on PostgreSQL: serialization failure, deadlock, lock not
// available and a cancelled query abort it (retried whole); unique
// violation is a duplicate; connection exceptions, a terminated backend
// (pg_terminate_backend), shutdowns, too many connections, a read-only
// standby and a full disk make the store unavailable (and end it too).
func classify(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40001", "40P01", "55P03", "57014", "25P02", "40003":
			// Serialization failure, deadlock, lock not available, query
			// cancelled, a statement in a failed transaction, statement
			// completion unknown: the transaction is aborted.
			return queue.ErrAborted
		case "23505":
			return queue.ErrDuplicate
		case "57P01", "57P02", "57P03", "53300", "53400", // terminated, shut down, too many connections
			"25006", "53100": // read-only transaction (a standby), disk full
			return queue.ErrUnavailable
		}
		if strings.HasPrefix(pe.Code, "08") {
			return queue.ErrUnavailable
		}
		return nil
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return queue.ErrUnavailable
	}
	return nil
}
