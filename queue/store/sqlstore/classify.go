package sqlstore

import (
	"context"
	"database/sql"
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
	// Unavailable: the server cannot be reached or refuses writes.
	Unavailable []K
}

// Of is the queue error of code, nil when c does not list it.
func (c *Codes[K]) Of(code K) error {
	switch {
	case slices.Contains(c.Aborted, code):
		return queue.ErrAborted
	case slices.Contains(c.Duplicate, code):
		return queue.ErrDuplicate
	case slices.Contains(c.Unavailable, code):
		return queue.ErrUnavailable
	}
	return nil
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
