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
	PurgeOutbox(ctx context.Context, before time.Time, n int) (int, error)
	BlankPatients(ctx context.Context, before time.Time, n int) (int, error)
	PurgePatientLocks(ctx context.Context, before time.Time, n int) (int, error)
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

// PurgeOutbox purges notifications on the store.
func (p *PendingStore) PurgeOutbox(ctx context.Context, before time.Time, n int) (int, error) {
	return onStore(p, func(st *sqlstore.Store) (int, error) { return st.PurgeOutbox(ctx, before, n) })
}

// BlankPatients blanks patient references on the store.
func (p *PendingStore) BlankPatients(ctx context.Context, before time.Time, n int) (int, error) {
	return onStore(p, func(st *sqlstore.Store) (int, error) { return st.BlankPatients(ctx, before, n) })
}

// PurgePatientLocks purges patient lock rows on the store.
func (p *PendingStore) PurgePatientLocks(ctx context.Context, before time.Time, n int) (int, error) {
	return onStore(p, func(st *sqlstore.Store) (int, error) { return st.PurgePatientLocks(ctx, before, n) })
}

// PurgeLease names the lease the purge runs under: one daemon of those
// sharing a database purges at a time.
const PurgeLease = "purge"

// PurgerOpts configures a Purger.
type PurgerOpts struct {
	Store PurgeStore
	// Holder names this daemon in the lease (host and protocol address).
	Holder string
	// Requests is how long stored request results are kept; Outbox,
	// notifications never delivered; Personal, patient references.
	Requests, Outbox, Personal time.Duration
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

// purgeStep is one kind of row a pass removes or blanks.
type purgeStep struct {
	table  string
	blanks bool // blanks personal data, keeping the row
	window time.Duration
	run    func(ctx context.Context, before time.Time, n int) (int, error)
}

func (p *Purger) steps() []purgeStep {
	st := p.o.Store
	return []purgeStep{
		{"requests", false, p.o.Requests, st.PurgeRequests},
		{"outbox", false, p.o.Outbox, st.PurgeOutbox},
		{"bookings", true, p.o.Personal, st.BlankPatients},
		{"patient_locks", false, p.o.Personal, st.PurgePatientLocks},
	}
}

// Pass runs one pass: unless another daemon holds the purge lease, it
// removes, step by step, the rows past their window: stored request
// results, notifications never delivered, then personal data (patient
// references blanked in bookings, patient lock rows deleted), a batch a
// transaction, renewing the lease before each, until fewer than a batch
// are left or maxBatches ran in all. It returns the rows changed per table
// and whether it held the lease.
func (p *Purger) Pass(ctx context.Context) (map[string]int, bool, error) {
	out := map[string]int{}
	batches := 0
	for _, step := range p.steps() {
		if step.window <= 0 {
			continue // not configured: kept
		}
		for ; batches < maxBatches; batches++ {
			now := p.o.Now()
			held, err := p.o.Store.TakeLease(ctx, sqlstore.Lease{Name: PurgeLease, Holder: p.o.Holder, Now: now, For: p.leaseFor()})
			if err != nil || !held {
				return out, held, err
			}
			if batches > 0 && p.o.Pause > 0 {
				if err := backoff.Sleep(ctx, p.o.Pause); err != nil {
					return out, true, err
				}
			}
			n, err := step.run(ctx, now.Add(-step.window), p.o.Batch)
			if n > 0 {
				out[step.table] += n
				switch {
				case p.o.Metrics == nil:
				case step.blanks:
					p.o.Metrics.Blanked(step.table, n)
				default:
					p.o.Metrics.Deleted(step.table, n)
				}
			}
			if err != nil {
				return out, true, err
			}
			if n < p.o.Batch {
				break
			}
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
			p.o.Logger.Info("purged rows past their retention", "requests", n["requests"], "outbox", n["outbox"],
				"bookings_blanked", n["bookings"], "patient_locks", n["patient_locks"])
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
