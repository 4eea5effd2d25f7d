package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// DefaultConnectTimeout bounds the dial of one host (TCP connect, TLS,
// authentication, the read-write check) when Opts.ConnectTimeout is zero
// and the DSN sets none. It is well under the default store deadline (3 s),
// so a transaction whose first host hangs (a frozen primary) still has the
// time to reach the next one.
const DefaultConnectTimeout = time.Second

// ConnectTimeoutFor is the connect time-out for the store deadline
// timeout: DefaultConnectTimeout, or a third of timeout when that is
// shorter, so that a dial to a hung host leaves the transaction time for
// the next host.
func ConnectTimeoutFor(timeout time.Duration) time.Duration {
	if timeout > 0 && timeout/3 < DefaultConnectTimeout {
		return timeout / 3
	}
	return DefaultConnectTimeout
}

// begin takes a connection of db for one transaction and begins it. The
// caller ends the transaction, then hands the connection and the outcome
// to release; when begin fails, it has released what it took.
func (s *Store) begin(ctx context.Context, db *sql.DB, opts *sql.TxOptions) (*sql.Conn, *sql.Tx, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		s.release(db, nil, s.d.Err(err))
		return nil, nil, err
	}
	stx, err := conn.BeginTx(ctx, opts)
	if err != nil {
		s.release(db, conn, s.d.Err(err))
		return nil, nil, err
	}
	return conn, stx, nil
}

// release gives back conn, a connection of db whose transaction has ended
// with err (classified, or nil), and notes the outcome in the store's
// health. When err drops connections (see Drops), conn is closed instead
// of going back to the pool, and so are db's idle connections, which were
// dialled to the same server: the next transaction dials afresh.
func (s *Store) release(db *sql.DB, conn *sql.Conn, err error) {
	if conn != nil {
		if Drops(err) {
			// database/sql closes a connection whose Raw returns ErrBadConn
			// and does not pool it again.
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		_ = conn.Close()
	}
	if Drops(err) {
		flushIdle(db)
	}
	s.health.note(err, time.Now())
}

// flushIdle closes the idle connections of db and keeps its idle limit:
// database/sql closes at once every idle connection beyond a lowered
// limit. (The stores set the idle limit to the open one.)
func flushIdle(db *sql.DB) {
	n := db.Stats().MaxOpenConnections
	db.SetMaxIdleConns(-1)
	db.SetMaxIdleConns(n)
}

// Health is what a store knows of its server from the transactions it ran.
type Health struct {
	// Down is when the store began to fail (unavailable or timed out) with
	// no transaction succeeding since; zero while it answers.
	Down time.Time
	// Why is the last failure while Down is set: it wraps
	// queue.ErrReadOnly, queue.ErrNotAnswering, queue.ErrUnavailable or
	// context.DeadlineExceeded.
	Why error
	// ReadOnly and NotAnswering count failovers: times the store dropped
	// its connections because the server refused writes, or was gone or
	// did not answer in time, and a transaction then succeeded again on
	// a new connection.
	ReadOnly, NotAnswering uint64
}

// Reason names Why for a person: "store read-only", "store not
// answering" or "store unavailable"; "" when the store answers.
func (h Health) Reason() string {
	return Reason(h.Why)
}

// Reason names what err says of the store: "store read-only", "store not
// answering" (gone, shut down, timed out), "store unavailable", or "" for
// an error that is none of those.
func Reason(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, queue.ErrReadOnly):
		return "store read-only"
	case errors.Is(err, queue.ErrNotAnswering), errors.Is(err, context.DeadlineExceeded):
		return "store not answering"
	case errors.Is(err, queue.ErrUnavailable):
		return "store unavailable"
	}
	return ""
}

// health tracks Health.
type health struct {
	mu      sync.Mutex
	h       Health
	dropped error // the failure that last dropped connections, until a success
}

// note records the outcome of one transaction: a failure of the store (not
// a refusal by the rules, not a caller that left) marks it down, anything
// the server answered marks it up, and the first success after a drop
// counts a failover.
func (hl *health) note(err error, now time.Time) {
	if errors.Is(err, context.Canceled) {
		return
	}
	failed := errors.Is(err, queue.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
	hl.mu.Lock()
	defer hl.mu.Unlock()
	if failed {
		if hl.h.Down.IsZero() {
			hl.h.Down = now
		}
		hl.h.Why = err
		if Drops(err) {
			hl.dropped = err
		}
		return
	}
	if hl.dropped != nil {
		if errors.Is(hl.dropped, queue.ErrReadOnly) {
			hl.h.ReadOnly++
		} else {
			hl.h.NotAnswering++
		}
		hl.dropped = nil
	}
	hl.h.Down, hl.h.Why = time.Time{}, nil
}

// Health returns what the store knows of its server.
func (s *Store) Health() Health {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	return s.health.h
}
