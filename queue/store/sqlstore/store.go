package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"syscall"
	"time"

	"github.com/nowserving/nowserving/internal/backoff"
	"github.com/nowserving/nowserving/queue"
)

// DefaultMaxRetries is how many times Update runs fn again after a conflict
// when Opts.MaxRetries is zero.
// Eight attempts (about 150 ms of backoff in all) ride out the certification
// conflicts of two Galera nodes writing one site's version row at once.
const DefaultMaxRetries = 8

// Opts configures a store. The zero value is usable.
type Opts struct {
	// Logger receives retry and migration messages; nil discards them.
	Logger *slog.Logger
	// CancelOnServer makes a statement whose context ends be cancelled on
	// the server (PostgreSQL: a cancel request, the connection dropped
	// after a second if that did not end it), for long reads a person
	// stops, like check; without it the connection is dropped at once and
	// the server may run the statement to its end.
	CancelOnServer bool
	// MaxRetries bounds how many times Update runs fn again after a
	// serialization failure or deadlock: 0 means DefaultMaxRetries, a
	// negative value means never.
	MaxRetries int
	// MaxConns caps the open connections of the pool (the reader pool on
	// SQLite); 0 leaves the store's default.
	MaxConns int
	// ConnectTimeout bounds the dial of one host of a server database
	// when its DSN sets none (PostgreSQL's connect_timeout, the MySQL
	// driver's timeout): 0 means DefaultConnectTimeout. Keep it well under
	// the store deadline, so a hung first host is skipped in time.
	ConnectTimeout time.Duration
	// NoMigrate skips applying migrations at Open (for `check` on a
	// database another version of the daemon owns).
	NoMigrate bool
	// Outbox routes events to the receivers of notifications: AppendEvents
	// writes an outbox row per event and matching route in the event's
	// transaction (see ClaimOutbox). Empty: no rows.
	Outbox []OutboxRoute
}

// Store is a queue.Store over database/sql.
type Store struct {
	d       *Dialect
	writer  *sql.DB
	reader  *sql.DB
	log     *slog.Logger
	retries int
	q       *queries
	outbox  []OutboxRoute
	// wstmts and rstmts cache prepared statements of the writer and the
	// reader pool when the dialect asks for it.
	wstmts, rstmts *stmtCache
	// health follows the outcomes of the transactions (see Health).
	health health
	// atClose runs first in Close: a dialect's own goroutines on the
	// connections (SQLite's checkpointer) end before the connections do.
	atClose []func()
}

var _ queue.Store = (*Store)(nil)

// New returns a store writing through writer and reading through reader
// (the same pool on servers; on SQLite one writer connection and a pool of
// readers). It does not migrate: call Migrate. Close closes both pools.
func New(d *Dialect, writer, reader *sql.DB, opts Opts) *Store {
	if reader == nil {
		reader = writer
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	retries := opts.MaxRetries
	switch {
	case retries == 0:
		retries = DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	s := &Store{d: d, writer: writer, reader: reader, log: log, retries: retries, q: newQueries(d), outbox: opts.Outbox}
	if d.CacheStatements {
		s.wstmts = newStmtCache(writer)
		s.rstmts = s.wstmts
		if reader != writer {
			s.rstmts = newStmtCache(reader)
		}
	}
	return s
}

// Dialect returns the store's dialect.
func (s *Store) Dialect() *Dialect { return s.d }

// DB returns the pool that writes (tests use it to corrupt a database on
// purpose; nothing else should).
func (s *Store) DB() *sql.DB { return s.writer }

// AtClose has Close run f before it closes the connections: whoever
// holds the Store, the dialect's goroutines on them stop with it.
func (s *Store) AtClose(f func()) { s.atClose = append(s.atClose, f) }

// Close closes the connections.
func (s *Store) Close() error {
	for _, f := range s.atClose {
		f()
	}
	s.atClose = nil
	if s.wstmts != nil {
		s.wstmts.close()
		s.rstmts.close()
	}
	err := s.writer.Close()
	if s.reader != s.writer {
		if rerr := s.reader.Close(); err == nil {
			err = rerr
		}
	}
	if err != nil {
		return fmt.Errorf("%s: close: %w", s.d.Name, err)
	}
	return nil
}

// Update runs fn in a read-write transaction and commits it. When the
// database aborts the transaction (queue.ErrAborted: deadlock,
// serialization failure, lock wait timeout, an interrupted query, a Galera
// certification conflict, at any statement or at COMMIT), when fn reports
// a compare-and-set conflict (queue.ErrConflict), or when the connection
// was lost before COMMIT was sent (queue.ErrUnavailable), Update rolls back
// and runs fn again on a fresh transaction, up to the configured number of
// retries, with a short jittered pause; then it returns the last error. A
// connection lost during COMMIT is not retried: the commit may have landed,
// and only an idempotent retry by the caller can tell.
func (s *Store) Update(ctx context.Context, fn func(ctx context.Context, tx queue.Tx) error) error {
	for attempt := 0; ; attempt++ {
		committing, err := s.update(ctx, fn)
		if err == nil {
			return nil
		}
		if !retryable(err, committing) || ctx.Err() != nil {
			return err
		}
		if attempt >= s.retries {
			return fmt.Errorf("%s: update: gave up after %d attempts: %w", s.d.Name, attempt+1, err)
		}
		s.log.DebugContext(ctx, "transaction failed, retrying it whole", "store", s.d.Name, "attempt", attempt+1, "err", err)
		if err := backoff.Sleep(ctx, retryPause(attempt)); err != nil {
			return fmt.Errorf("%s: update: %w", s.d.Name, err)
		}
	}
}

// retryable reports whether a failed transaction may simply run again.
func retryable(err error, committing bool) bool {
	switch {
	case errors.Is(err, queue.ErrAborted), errors.Is(err, queue.ErrConflict):
		return true
	case errors.Is(err, queue.ErrUnavailable):
		return !committing
	}
	return false
}

// retryPause is the pause before retry attempt+1: about 1, 2, 4 ... ms,
// capped at 50 ms, jittered so colliding transactions spread out.
func retryPause(attempt int) time.Duration {
	return backoff.Jitter(backoff.Exp(attempt, time.Millisecond, 50*time.Millisecond))
}

// update runs fn in one transaction. committing reports that the error
// came from COMMIT itself.
func (s *Store) update(ctx context.Context, fn func(ctx context.Context, tx queue.Tx) error) (committing bool, err error) {
	if s.wstmts != nil {
		defer s.wstmts.prepare(ctx)
	}
	var opts *sql.TxOptions
	if s.d.WriteIsolation != sql.LevelDefault {
		opts = &sql.TxOptions{Isolation: s.d.WriteIsolation}
	}
	// The transaction's own context, which watchCommit may end.
	tctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	l, stx, err := s.begin(tctx, true, opts)
	if err != nil {
		return false, s.wrap("begin", err)
	}
	done := false
	defer func() {
		if !done {
			_ = stx.Rollback() // fn panicked: free the connection, then re-panic
			_ = l.conn.Close()
		}
	}()
	t := &tx{s: s, tx: stx, write: true, cache: s.wstmts}
	err = fn(tctx, t)
	if err == nil {
		err = t.flush(tctx) // the writes still waiting (Dialect.MergeWrites)
	}
	done = true
	committing, err = s.end(stx, t, err, func() func() error { return s.watchCommit(tctx, l.conn, cancel) })
	l.release(err)
	return committing, err
}

// end ends the read-write transaction stx after fn returned err, on t:
// rolled back when the database ended it or fn failed, else committed,
// with watch watching the COMMIT (see watchCommit).
func (s *Store) end(stx *sql.Tx, t *tx, err error, watch func() (stop func() error)) (committing bool, _ error) {
	if t.dead != nil {
		// The database ended the transaction: whatever fn made of that
		// (a refusal, a retry that found nothing, nil), nothing of it
		// stands, and the cause decides what happens next.
		_ = stx.Rollback()
		if err != nil && !errors.Is(err, t.dead) {
			return false, fmt.Errorf("%w (then: %v)", t.dead, err)
		}
		return false, t.dead
	}
	if err != nil {
		_ = stx.Rollback()
		return false, err
	}
	stop := watch()
	err = stx.Commit()
	if demoted := stop(); err != nil {
		if demoted != nil {
			return true, fmt.Errorf("%s: commit: %w (%v)", s.d.Name, demoted, err)
		}
		return true, s.wrap("commit", err)
	}
	return false, nil
}

// View runs fn in a read-only transaction on a reader connection. Locks
// asked for inside it (HeadQuery.Lock, Counter) are not taken.
func (s *Store) View(ctx context.Context, fn func(ctx context.Context, tx queue.Tx) error) error {
	return s.view(ctx, &sql.TxOptions{ReadOnly: true}, func(ctx context.Context, t *tx) error { return fn(ctx, t) })
}

func (s *Store) view(ctx context.Context, opts *sql.TxOptions, fn func(ctx context.Context, t *tx) error) error {
	if s.rstmts != nil {
		defer s.rstmts.prepare(ctx)
	}
	return s.inTx(ctx, plainTx{opts: opts, begin: "begin read", commit: "end read"}, func(stx *sql.Tx) error {
		return fn(ctx, &tx{s: s, tx: stx, cache: s.rstmts})
	})
}

// plainTx is a transaction run once, with no retry: on the writer pool
// when write, else on a reader, begun with opts; begin and commit name
// those steps in its errors.
type plainTx struct {
	write         bool
	opts          *sql.TxOptions
	begin, commit string
}

// inTx runs fn in the transaction p describes and commits it when fn
// returns nil, else rolls it back; the lease notes the outcome (fn's
// error as fn returned it, begin's or commit's wrapped).
func (s *Store) inTx(ctx context.Context, p plainTx, fn func(stx *sql.Tx) error) (err error) {
	l, stx, err := s.begin(ctx, p.write, p.opts)
	if err != nil {
		return s.wrap(p.begin, err)
	}
	defer func() {
		_ = stx.Rollback() // no-op after Commit
		l.release(err)
	}()
	if err = fn(stx); err != nil {
		return err
	}
	if err = stx.Commit(); err != nil {
		return s.wrap(p.commit, err)
	}
	return nil
}

// wrap turns a driver error into an error that names the store and the
// action; see Dialect.Err.
func (s *Store) wrap(action string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %s: %w", s.d.Name, action, s.d.Err(err))
}

// Err returns an error with err's text that wraps the queue sentinel
// err is classified as (or the context's error), and never a driver type.
func (d *Dialect) Err(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%w (%v)", context.Canceled, err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)
	case errors.Is(err, queue.ErrAborted), errors.Is(err, queue.ErrUnavailable),
		errors.Is(err, queue.ErrConflict), errors.Is(err, queue.ErrDuplicate):
		return err // classified already (a statement refused on a dead transaction)
	}
	if sentinel := d.classify(err); sentinel != nil {
		return fmt.Errorf("%w: %v", sentinel, err)
	}
	return errors.New(err.Error())
}

func (d *Dialect) classify(err error) error {
	if d.Classify != nil {
		if c := d.Classify(err); c != nil {
			return c
		}
	}
	if lostConn(err) {
		return queue.ErrNotAnswering
	}
	return nil
}

// lostConn reports whether err is a connection that broke under the
// driver, whatever the driver: closed, reset, cut short or timed out.
func lostConn(err error) bool {
	var ne net.Error
	for _, e := range []error{driver.ErrBadConn, sql.ErrConnDone, io.ErrUnexpectedEOF, io.EOF,
		net.ErrClosed, syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE,
		syscall.ETIMEDOUT, syscall.EHOSTUNREACH, syscall.ENETUNREACH} {
		if errors.Is(err, e) {
			return true
		}
	}
	return errors.As(err, &ne)
}
