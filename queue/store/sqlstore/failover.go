package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
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

// StuckCommit is how long a COMMIT waits before the store asks the
// dialect whether its server is still the writable primary
// (Dialect.Demoted).
const StuckCommit = 500 * time.Millisecond

// errDemoted is what a COMMIT stuck on a server that is no longer the
// writable primary ends with.
var errDemoted = fmt.Errorf("%w: the COMMIT waited on a server that is no longer the writable primary", queue.ErrReadOnly)

// watchCommit watches the COMMIT about to run on conn, in the transaction
// whose context cancel ends. When it has not returned after StuckCommit
// and its server is no longer the writable primary (Dialect.Demoted,
// asked again every StuckCommit while it waits), the
// transaction is cancelled with errDemoted: a COMMIT that waits for the
// acknowledgement of a synchronous standby that was promoted away would
// otherwise wait until the store deadline, and hold its site's committer
// that long. Its outcome is unknown, as at a deadline: nothing was
// acknowledged, and a retry with the same idempotency key lands on the
// new primary. stop ends the watch and returns errDemoted if the watch
// cancelled the transaction.
func (s *Store) watchCommit(ctx context.Context, conn *sql.Conn, cancel context.CancelCauseFunc) (stop func() error) {
	none := func() error { return nil }
	if s.d.Demoted == nil || conn == nil {
		return none
	}
	var check func(context.Context) bool
	_ = conn.Raw(func(c any) error { check = s.d.Demoted(c); return nil })
	if check == nil {
		return none
	}
	// The check runs again every StuckCommit while the COMMIT waits: a
	// failover tool may demote the primary some time after the standby
	// stopped acknowledging.
	var mu sync.Mutex
	stopped := false
	var t *time.Timer
	mu.Lock()
	t = time.AfterFunc(StuckCommit, func() {
		pctx, done := context.WithTimeout(context.Background(), DefaultConnectTimeout)
		defer done()
		if check(pctx) {
			cancel(errDemoted)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			t.Reset(StuckCommit)
		}
	})
	mu.Unlock()
	return func() error {
		mu.Lock()
		stopped = true
		t.Stop()
		mu.Unlock()
		if errors.Is(context.Cause(ctx), errDemoted) {
			return errDemoted
		}
		return nil
	}
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
