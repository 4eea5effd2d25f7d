package daemon

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/nowserving/nowserving/backoff"
	"github.com/nowserving/nowserving/metrics"
	"github.com/nowserving/nowserving/part"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// PurgeStore is what the purge needs of the store.
type PurgeStore interface {
	TakeLease(ctx context.Context, l sqlstore.Lease) (bool, error)
	PurgeRequests(ctx context.Context, before time.Time, n int) (int, error)
}

var _ PurgeStore = (*PendingStore)(nil)

// TakeLease takes the lease on the store.
func (p *PendingStore) TakeLease(ctx context.Context, l sqlstore.Lease) (bool, error) {
	return onStore(p, func(st *sqlstore.Store) (bool, error) { return st.TakeLease(ctx, l) })
}

// PurgeRequests purges stored results on the store.
func (p *PendingStore) PurgeRequests(ctx context.Context, before time.Time, n int) (int, error) {
	return onStore(p, func(st *sqlstore.Store) (int, error) { return st.PurgeRequests(ctx, before, n) })
}

// PurgeLease names the lease the purge runs under: one daemon of those
// sharing a database purges at a time.
const PurgeLease = "purge"

// PurgerOpts configures a Purger.
type PurgerOpts struct {
	Store PurgeStore
	// Holder names this daemon in the lease (host and protocol address).
	Holder string
	// Requests is how long stored request results are kept.
	Requests time.Duration
	// Batch is how many rows one transaction removes.
	Batch int
	// Every is how often a pass runs.
	Every time.Duration
	// Pause is the rest between two batches of a pass, so the devices'
	// transactions (and /readyz's probe, on SQLite's one writer) go
	// between them; 0: none.
	Pause   time.Duration
	Now     func() time.Time
	Metrics *metrics.Retention // nil: not counted
	Logger  *slog.Logger
}

// maxBatches bounds one pass: what is left waits for the next one.
const maxBatches = 200

// Purger removes what is past its retention window, a pass every so
// often, under the purge lease.
type Purger struct {
	o    PurgerOpts
	stop *part.Stop
}

// NewPurger returns a purger of o.
func NewPurger(o PurgerOpts) *Purger {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Purger{o: o, stop: part.NewStop()}
}

// Name names the part.
func (p *Purger) Name() string { return "purger" }

// leaseFor is how long a pass holds the lease from its last batch: a
// daemon that died holding it is taken over after that.
func (p *Purger) leaseFor() time.Duration { return max(2*p.o.Every, time.Minute) }

// Pass runs one pass: unless another daemon holds the purge lease, it
// deletes the stored request results older than the window, a batch a
// transaction (renewing the lease before each), until fewer than a batch
// are left or maxBatches ran. It returns the rows deleted per table and
// whether it held the lease.
func (p *Purger) Pass(ctx context.Context) (map[string]int, bool, error) {
	out := map[string]int{}
	for i := 0; i < maxBatches; i++ {
		now := p.o.Now()
		held, err := p.o.Store.TakeLease(ctx, sqlstore.Lease{Name: PurgeLease, Holder: p.o.Holder, Now: now, For: p.leaseFor()})
		if err != nil || !held {
			return out, held, err
		}
		if i > 0 && p.o.Pause > 0 {
			if err := backoff.Sleep(ctx, p.o.Pause); err != nil {
				return out, true, err
			}
		}
		n, err := p.o.Store.PurgeRequests(ctx, now.Add(-p.o.Requests), p.o.Batch)
		if n > 0 {
			out["requests"] += n
			if p.o.Metrics != nil {
				p.o.Metrics.Deleted("requests", n)
			}
		}
		if err != nil || n < p.o.Batch {
			return out, true, err
		}
	}
	return out, true, nil
}

// Run runs a pass at once, then every so often until Shutdown or ctx
// ends; a failed pass is logged and tried again next time.
func (p *Purger) Run(ctx context.Context) error {
	defer p.stop.Ended()
	tk := time.NewTicker(p.o.Every)
	defer tk.Stop()
	for {
		pctx, cancel := p.stop.Context(ctx)
		n, _, err := p.Pass(pctx)
		cancel()
		switch {
		case errors.Is(err, context.Canceled):
			return nil
		case errors.Is(err, queue.ErrUnavailable):
			p.o.Logger.Debug("purge: store unavailable", "err", err)
		case err != nil:
			p.o.Logger.Warn("purge failed", "err", err)
		case len(n) > 0:
			p.o.Logger.Info("purged rows past their retention", "requests", n["requests"])
		}
		select {
		case <-p.stop.Requested():
			return nil
		case <-ctx.Done():
			return nil
		case <-tk.C:
		}
	}
}

// Shutdown stops the purge, waiting for a batch in flight within ctx.
func (p *Purger) Shutdown(ctx context.Context) error {
	return p.stop.Shutdown(ctx, "purger: stop")
}
