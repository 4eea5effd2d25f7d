package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/nowserving/nowserving/queue"
)

// Codes sorts a driver's error codes (MySQL's numbers, PostgreSQL's
// SQLSTATEs) into the queue errors a Dialect.Classify returns.
type Codes[K comparable] struct {
	// Aborted: the database ended the transaction; it is retried whole.
	Aborted []K
	// Duplicate: a unique key refused the row.
	Duplicate []K
	// ReadOnly: the server refuses writes (a standby, a read-only node);
	// the store drops the connection (queue.ErrReadOnly).
	ReadOnly []K
	// NotAnswering: the server is gone or going (shut down, the session
	// killed or lost); the store drops the connection
	// (queue.ErrNotAnswering).
	NotAnswering []K
	// Unavailable: the server cannot serve now, but another connection to
	// it would fare no better (too many connections, a full disk).
	Unavailable []K
}

// Of is the queue error of code, nil when c does not list it.
func (c *Codes[K]) Of(code K) error {
	switch {
	case slices.Contains(c.Aborted, code):
		return queue.ErrAborted
	case slices.Contains(c.Duplicate, code):
		return queue.ErrDuplicate
	case slices.Contains(c.ReadOnly, code):
		return queue.ErrReadOnly
	case slices.Contains(c.NotAnswering, code):
		return queue.ErrNotAnswering
	case slices.Contains(c.Unavailable, code):
		return queue.ErrUnavailable
	}
	return nil
}

// Drops reports whether err (a classified error, or a context's) means
// the connection that met it is of no further use: the server refuses
// writes (queue.ErrReadOnly), is gone (queue.ErrNotAnswering), or did not
// answer within the deadline. The store closes such a connection instead
// of returning it to the pool, and lets go of the idle ones too, which
// point at the same server: the next transaction dials afresh, and a
// multi-host DSN or a list of nodes reaches another host.
func Drops(err error) bool {
	return errors.Is(err, queue.ErrReadOnly) || errors.Is(err, queue.ErrNotAnswering) ||
		errors.Is(err, context.DeadlineExceeded)
}

// SessionLock is a Dialect.LockMigrations over a lock the server holds
// for the session: lock is a query answering 1 once it holds the lock (it
// may wait for it), unlock the statement that lets it go.
func SessionLock(lock, unlock string) func(ctx context.Context, conn *sql.Conn) (func(), error) {
	return func(ctx context.Context, conn *sql.Conn) (func(), error) {
		var got sql.NullInt64
		if err := conn.QueryRowContext(ctx, lock).Scan(&got); err != nil {
			return nil, err
		}
		if got.Int64 != 1 {
			return nil, fmt.Errorf("%w: another process holds the migration lock", queue.ErrConflict)
		}
		return func() {
			_, _ = conn.ExecContext(context.Background(), unlock)
		}, nil
	}
}
