package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nowserving/nowserving/internal/backoff"
	"github.com/nowserving/nowserving/internal/part"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// PendingStore is the daemon's queue.Store from the start, before the
// database has answered: until the store opens, every transaction fails at
// once with an error wrapping queue.ErrUnavailable (devices get ERROR 0x41,
// retryable) that says why the last attempt to open it failed; then it
// passes everything to the store.
type PendingStore struct {
	mu     sync.Mutex
	st     *sqlstore.Store
	reason error     // why the last attempt failed; nil before the first ends
	since  time.Time // when the first attempt failed
	closed bool
}

var _ queue.Store = (*PendingStore)(nil)

// errConnecting is what a transaction gets before the store opens.
func (p *PendingStore) errConnecting() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errConnectingLocked()
}

// errConnectingLocked wraps queue.ErrUnavailable and the last attempt's
// error, so its kind (queue.ErrReadOnly, queue.ErrNotAnswering) shows.
func (p *PendingStore) errConnectingLocked() error {
	if p.reason == nil {
		return fmt.Errorf("store: connecting: %w", queue.ErrUnavailable)
	}
	return fmt.Errorf("store: connecting: %w (%w)", queue.ErrUnavailable, p.reason)
}

// Store returns the open store, or nil and the reason it is not open yet.
func (p *PendingStore) Store() (*sqlstore.Store, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.st != nil {
		return p.st, nil
	}
	return nil, p.errConnectingLocked()
}

// Health is the open store's Health; before it opens, the store is down
// since the first attempt to open it failed.
func (p *PendingStore) Health() sqlstore.Health {
	p.mu.Lock()
	st := p.st
	h := sqlstore.Health{Down: p.since, Why: p.reason}
	p.mu.Unlock()
	if st != nil {
		return st.Health()
	}
	return h
}

// opened installs the store; after Close it closes st instead.
func (p *PendingStore) opened(st *sqlstore.Store) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = st.Close()
		return
	}
	p.st, p.reason = st, nil
}

func (p *PendingStore) failed(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reason = err
	if p.since.IsZero() {
		p.since = time.Now()
	}
}

// Update runs fn on the store, or fails as unavailable before it opens.
func (p *PendingStore) Update(ctx context.Context, fn func(ctx context.Context, tx queue.Tx) error) error {
	st, _ := p.Store()
	if st == nil {
		return p.errConnecting()
	}
	return st.Update(ctx, fn)
}

// View runs fn on the store, or fails as unavailable before it opens.
func (p *PendingStore) View(ctx context.Context, fn func(ctx context.Context, tx queue.Tx) error) error {
	st, _ := p.Store()
	if st == nil {
		return p.errConnecting()
	}
	return st.View(ctx, fn)
}

// Close closes the store if it opened; a store opening later is closed as
// soon as it does.
func (p *PendingStore) Close() error {
	p.mu.Lock()
	st := p.st
	p.closed, p.st = true, nil
	p.mu.Unlock()
	if st == nil {
		return nil
	}
	return st.Close()
}

// Open retry pacing: the first retry after openRetryMin, doubling up to
// openRetryMax, each jittered; every attempt bounded by openAttempt.
const (
	openRetryMin = time.Second
	openRetryMax = 30 * time.Second
	openAttempt  = 15 * time.Second
)

// openRetry is the pause before retry n (0-based): 1 s doubling to 30 s,
// drawn from [d/2, d] so daemons restarted together spread out.
func openRetry(n int) time.Duration {
	return backoff.Jitter(backoff.Exp(n, openRetryMin, openRetryMax))
}

// OpenFunc opens (and migrates) the store.
type OpenFunc func(ctx context.Context) (*sqlstore.Store, error)

// Connector opens the store in the background, retrying while the
// database is unavailable, and hands it to a PendingStore. It is the
// daemon's "store" part: Run returns nil once the store is open (or the
// daemon stops), and the error of an attempt that failed for a reason
// retrying cannot cure (a bad DSN, refused credentials, a failed migration).
type Connector struct {
	ps     *PendingStore
	driver string // for the logs
	log    *slog.Logger
	stop   *part.Stop    // Done: the loop has ended; err is set
	first  chan struct{} // closed when the first attempt has ended
	err    error
}

// Connect starts opening the store with open, handing it to ps; driver
// names it in the logs.
func Connect(ps *PendingStore, driver string, open OpenFunc, log *slog.Logger) *Connector {
	k := &Connector{ps: ps, driver: driver, log: log, stop: part.NewStop(), first: make(chan struct{})}
	go k.loop(open)
	return k
}

func (k *Connector) loop(open OpenFunc) {
	ctx, cancel := k.stop.Context(context.Background())
	defer cancel()
	firstOnce := sync.OnceFunc(func() { close(k.first) })
	// done before first: whoever wakes on first sees the outcome.
	defer func() { k.stop.Ended(); firstOnce() }()
	for n := 0; ; n++ {
		actx, cancel := context.WithTimeout(ctx, openAttempt)
		st, err := open(actx)
		cancel()
		if err == nil {
			k.ps.opened(st)
			k.log.Info("store opened", "driver", k.driver)
			return
		}
		if ctx.Err() != nil {
			return // the daemon is stopping
		}
		if !errors.Is(err, queue.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
			k.err = err
			return
		}
		k.ps.failed(err)
		firstOnce()
		wait := openRetry(n)
		k.log.Warn("store unavailable, retrying", "driver", k.driver, "attempt", n+1, "retry_in_s", wait.Seconds(), "err", err)
		if backoff.Sleep(ctx, wait) != nil {
			return // the daemon is stopping
		}
	}
}

// First is closed when the first attempt has ended.
func (k *Connector) First() <-chan struct{} { return k.first }

// Done is closed when the connector has stopped trying; Err then says why.
func (k *Connector) Done() <-chan struct{} { return k.stop.Done() }

// Err is the error that stopped the attempts (nil: the store opened, or
// Stop); valid once Done is closed.
func (k *Connector) Err() error { return k.err }

// Stop stops the attempts without waiting.
func (k *Connector) Stop() { k.stop.Request() }

// Name names the part.
func (k *Connector) Name() string { return "store" }

// Run waits for the store to open; it returns the error that stopped the
// attempts, or nil.
func (k *Connector) Run(ctx context.Context) error {
	select {
	case <-k.stop.Done():
		return k.err
	case <-ctx.Done():
		return nil
	}
}

// Shutdown stops the attempts.
func (k *Connector) Shutdown(ctx context.Context) error {
	return k.stop.Shutdown(ctx, "store: stop connecting")
}
