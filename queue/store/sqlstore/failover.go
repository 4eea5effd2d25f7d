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

// lease is a connection taken from one of the store's pools for one
// transaction.
type lease struct {
	s     *Store
	db    *sql.DB
	conn  *sql.Conn // nil when none could be had
	write bool      // a read-write transaction on the writer pool
}

// begin takes a connection for one transaction (from the writer pool when
// write, else the reader pool) and begins it. The caller ends the
// transaction, then hands the outcome to the lease's release; when begin
// fails, it has released what it took.
func (s *Store) begin(ctx context.Context, write bool, opts *sql.TxOptions) (*lease, *sql.Tx, error) {
	l := &lease{s: s, db: s.reader, write: write}
	if write {
		l.db = s.writer
	}
	conn, err := l.db.Conn(ctx)
	if err != nil {
		l.release(s.d.Err(err))
		return nil, nil, err
	}
	l.conn = conn
	stx, err := conn.BeginTx(ctx, opts)
	if err != nil {
		l.release(s.d.Err(err))
		return nil, nil, err
	}
	return l, stx, nil
}

// release gives back the connection, whose transaction has ended with err
// (classified, or nil), and notes the outcome in the store's health. When
// err drops connections (see Drops), the connection is closed instead of
// going back to the pool, and so are the pool's idle ones, which were
// dialled to the same server: the next transaction dials afresh.
func (l *lease) release(err error) {
	if l.conn != nil {
		if Drops(err) {
			// database/sql closes a connection whose Raw returns ErrBadConn
			// and does not pool it again.
			_ = l.conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		_ = l.conn.Close()
	}
	if Drops(err) {
		flushIdle(l.db)
	}
	l.s.health.note(err, l.write, time.Now())
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

// health tracks Health.
type health struct {
	mu      sync.Mutex
	h       Health
	dropped error // the failure that last dropped connections, until a success
}

// note records the outcome of one transaction (write: a read-write one):
// a failure of the store (not a refusal by the rules, not a caller that
// left) marks it down, anything the server answered marks it up, and the
// first success after a drop counts a failover. A read does not end a
// read-only outage: a standby answers reads.
func (hl *health) note(err error, write bool, now time.Time) {
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
	if !write && errors.Is(hl.h.Why, queue.ErrReadOnly) {
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
