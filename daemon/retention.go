package daemon

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/nowserving/nowserving/internal/backoff"
	"github.com/nowserving/nowserving/internal/part"
	"github.com/nowserving/nowserving/metrics"
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
	PurgeEvents(ctx context.Context, p sqlstore.DayPurge) (int, error)
	PurgeTickets(ctx context.Context, p sqlstore.DayPurge) (int, error)
	PurgeBookings(ctx context.Context, before time.Time, n int) (bookings, slots int, err error)
	Reclaim(ctx context.Context) (int, error)
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

// PurgeEvents purges a site's old events on the store.
func (p *PendingStore) PurgeEvents(ctx context.Context, d sqlstore.DayPurge) (int, error) {
	return onStore(p, func(st *sqlstore.Store) (int, error) { return st.PurgeEvents(ctx, d) })
}

// PurgeTickets purges a site's old tickets on the store.
func (p *PendingStore) PurgeTickets(ctx context.Context, d sqlstore.DayPurge) (int, error) {
	return onStore(p, func(st *sqlstore.Store) (int, error) { return st.PurgeTickets(ctx, d) })
}

// PurgeBookings purges old slots and their bookings on the store.
func (p *PendingStore) PurgeBookings(ctx context.Context, before time.Time, n int) (int, int, error) {
	type two struct{ b, s int }
	r, err := onStore(p, func(st *sqlstore.Store) (two, error) {
		b, s, err := st.PurgeBookings(ctx, before, n)
		return two{b, s}, err
	})
	return r.b, r.s, err
}

// Reclaim gives freed pages back on the store.
func (p *PendingStore) Reclaim(ctx context.Context) (int, error) {
	return onStore(p, func(st *sqlstore.Store) (int, error) { return st.Reclaim(ctx) })
}

// PurgeLease names the lease the purge runs under: one daemon of those
// sharing a database purges at a time.
const PurgeLease = "purge"

// PurgerOpts configures a Purger.
type PurgerOpts struct {
	Store PurgeStore
	// Holder names this daemon in the lease (host and protocol address).
	Holder string
	// Sites are the sites whose finished days are purged (the engine's).
	Sites func() []queue.Site
	// The windows (see config.Retention): Requests, stored request
	// results; Events, Tickets, Bookings, the detail of finished days;
	// Outbox, notifications never delivered; Personal, patient
	// references. A window of 0 keeps those rows.
	Requests, Events, Tickets, Bookings, Outbox, Personal time.Duration
	// Batch is how many rows one transaction removes.
	Batch int
	// Every is how often a pass runs.
	Every time.Duration
	// Timeout bounds each of the pass's transactions (the store timeout):
	// a database that hangs fails the pass, which is tried again next
	// time, and never holds up a shutdown; 0: none.
	Timeout time.Duration
	// Pause is the rest between two batches of a pass, so the devices'
	// transactions (and /readyz's probe, on SQLite's one writer) go
	// between them; 0: none.
	Pause time.Duration
	Now   func() time.Time
	// Sum, when set, sums a chunk of a site's finished days into the
	// daily figures (report.SumDays) and returns the first day not summed
	// and whether finished days are left: each pass first sums what is
	// due, under the lease, and the purge of a site's events and tickets
	// never reaches a day not summed.
	Sum     func(ctx context.Context, site string, now time.Time) (string, bool, error)
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
	// summed is, per site, the first day not summed into the daily
	// figures by the pass running (the pass's goroutine only).
	summed map[string]string
}

// NewPurger returns a purger of o.
func NewPurger(o PurgerOpts) *Purger {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Purger{o: o, stop: part.NewStop(), summed: map[string]string{}}
}

// Name names the part.
func (p *Purger) Name() string { return "purger" }

// leaseFor is how long a pass holds the lease from its last batch: a
// daemon that died holding it is taken over after that.
func (p *Purger) leaseFor() time.Duration { return max(2*p.o.Every, time.Minute) }

// purgeStep is one kind of row a pass removes or blanks, a batch a call:
// run returns the rows changed per table (blanked ones as
// "table.column") and how far the batch went, fewer than the batch when
// nothing more is due.
type purgeStep struct {
	window time.Duration
	run    func(ctx context.Context, now time.Time) (map[string]int, int, error)
}

// byTime is a step removing the rows of one table older than window.
func (p *Purger) byTime(table string, window time.Duration, f func(ctx context.Context, before time.Time, n int) (int, error)) purgeStep {
	return purgeStep{window, func(ctx context.Context, now time.Time) (map[string]int, int, error) {
		n, err := f(ctx, now.Add(-window), p.o.Batch)
		return map[string]int{table: n}, n, err
	}}
}

// byDay is a step removing one table's rows of a site's finished days
// older than window.
func (p *Purger) byDay(table string, site *queue.Site, window time.Duration, f func(ctx context.Context, d sqlstore.DayPurge) (int, error)) purgeStep {
	return purgeStep{window, func(ctx context.Context, now time.Time) (map[string]int, int, error) {
		d := sqlstore.DayPurgeOf(site, now, window, p.o.Batch)
		if next, ok := p.summed[site.ID]; ok && next < d.Day {
			d.Day = next // the detail of days not summed yet stays
		}
		n, err := f(ctx, d)
		return map[string]int{table: n}, n, err
	}}
}

// steps are the pass's steps in order: stored results first (they carry
// patients), notifications, personal data, then the detail of finished
// days: bookings with their slots, and per site events before tickets (a
// ticket leaves with its last event).
func (p *Purger) steps() []purgeStep {
	st, o := p.o.Store, p.o
	steps := []purgeStep{
		p.byTime("requests", o.Requests, st.PurgeRequests),
		p.byTime("outbox", o.Outbox, st.PurgeOutbox),
		p.byTime("bookings.patient", o.Personal, st.BlankPatients),
		p.byTime("patient_locks", o.Personal, st.PurgePatientLocks),
		{o.Bookings, func(ctx context.Context, now time.Time) (map[string]int, int, error) {
			b, sl, err := st.PurgeBookings(ctx, now.Add(-o.Bookings), o.Batch)
			return map[string]int{"bookings": b, "slots": sl}, sl, err
		}},
	}
	if o.Sites == nil {
		return steps
	}
	for _, s := range o.Sites() {
		steps = append(steps, p.byDay("events", &s, o.Events, st.PurgeEvents), p.byDay("tickets", &s, o.Tickets, st.PurgeTickets))
	}
	return steps
}

// Pass runs one pass: unless another daemon holds the purge lease, it
// runs the steps in order, each a batch a transaction, renewing the lease
// before each, until fewer than a batch are left or maxBatches ran in all.
// After a pass that deleted rows, SQLite gives the freed pages back to the
// file system (Reclaim). It returns the rows changed per table and whether
// it held the lease.
func (p *Purger) Pass(ctx context.Context) (map[string]int, bool, error) {
	out, held, err := p.pass(ctx)
	if err == nil && held && len(out) > 0 {
		_, err = withinTimeout(ctx, p.o.Timeout, p.o.Store.Reclaim)
	}
	return out, held, err
}

func (p *Purger) pass(ctx context.Context) (map[string]int, bool, error) {
	out := map[string]int{}
	if held, err := p.sum(ctx); err != nil || !held {
		return out, held, err
	}
	batches := 0
	for _, step := range p.steps() {
		if step.window <= 0 {
			continue // not configured: kept
		}
		for ; batches < maxBatches; batches++ {
			if batches > 0 && p.o.Pause > 0 {
				if err := backoff.Sleep(ctx, p.o.Pause); err != nil {
					return out, true, err
				}
			}
			now := p.o.Now()
			held, err := withinTimeout(ctx, p.o.Timeout, func(ctx context.Context) (bool, error) {
				return p.o.Store.TakeLease(ctx, sqlstore.Lease{Name: PurgeLease, Holder: p.o.Holder, Now: now, For: p.leaseFor()})
			})
			if err != nil || !held {
				return out, held, err
			}
			type batch struct {
				counts map[string]int
				n      int
			}
			b, err := withinTimeout(ctx, p.o.Timeout, func(ctx context.Context) (batch, error) {
				counts, n, err := step.run(ctx, now)
				return batch{counts, n}, err
			})
			counts, n := b.counts, b.n
			for table, c := range counts {
				p.count(out, table, c)
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

// sum sums the sites' finished days into the daily figures (o.Sum), a
// chunk a call, renewing the lease before each, and notes per site the
// first day not summed. It reports whether it held the lease.
func (p *Purger) sum(ctx context.Context) (bool, error) {
	clear(p.summed)
	if p.o.Sum == nil || p.o.Sites == nil {
		return true, nil
	}
	for _, s := range p.o.Sites() {
		for more := true; more; {
			now := p.o.Now()
			held, err := withinTimeout(ctx, p.o.Timeout, func(ctx context.Context) (bool, error) {
				return p.o.Store.TakeLease(ctx, sqlstore.Lease{Name: PurgeLease, Holder: p.o.Holder, Now: now, For: p.leaseFor()})
			})
			if err != nil || !held {
				return held, err
			}
			// Summing reads days of events: no store time-out, the
			// lease bounds it.
			next, m, err := p.o.Sum(ctx, s.ID, now)
			if err != nil {
				p.summed[s.ID] = "" // keep every day of a site that failed
				return true, err
			}
			p.summed[s.ID], more = next, m
		}
	}
	return true, nil
}

// withinTimeout runs f within timeout (0: none) or until ctx ends, then
// abandons it (see boundedValue): a hung connection can keep a store call
// past its deadline (a driver's ROLLBACK after a failed statement takes
// no context).
func withinTimeout[T any](ctx context.Context, timeout time.Duration, f func(ctx context.Context) (T, error)) (T, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	return boundedValue(ctx, f)
}

// count adds n rows changed in table to out and the metrics.
func (p *Purger) count(out map[string]int, table string, n int) {
	if n == 0 {
		return
	}
	out[table] += n
	if p.o.Metrics == nil {
		return
	}
	if t, ok := strings.CutSuffix(table, ".patient"); ok {
		p.o.Metrics.Blanked(t, n)
		return
	}
	p.o.Metrics.Deleted(table, n)
}

// Run runs a pass at once, then every so often until Shutdown or ctx
// ends; a failed pass is logged and tried again next time.
func (p *Purger) Run(ctx context.Context) error {
	p.stop.Every(ctx, p.o.Every, func() bool {
		pctx, cancel := p.stop.Context(ctx)
		defer cancel()
		n, _, err := p.Pass(pctx)
		switch {
		case errors.Is(err, context.Canceled):
			return false
		case errors.Is(err, queue.ErrUnavailable):
			p.o.Logger.Debug("purge: store unavailable", "err", err)
		case err != nil:
			p.o.Logger.Warn("purge failed", "err", err)
		case len(n) > 0:
			p.o.Logger.Info("purged rows past their retention", "requests", n["requests"], "outbox", n["outbox"],
				"patients_blanked", n["bookings.patient"], "patient_locks", n["patient_locks"], "bookings", n["bookings"],
				"slots", n["slots"], "events", n["events"], "tickets", n["tickets"])
		}
		return true
	})
	return nil
}

// Shutdown stops the purge, waiting for a batch in flight within ctx.
func (p *Purger) Shutdown(ctx context.Context) error {
	return p.stop.Shutdown(ctx, "purger: stop")
}

// DailyRows reads daily figures on the store.
func (p *PendingStore) DailyRows(ctx context.Context, site, from, to string) ([]sqlstore.DailyRow, error) {
	return onStore(p, func(st *sqlstore.Store) ([]sqlstore.DailyRow, error) { return st.DailyRows(ctx, site, from, to) })
}

// LastDailyDay reads the newest summed day on the store.
func (p *PendingStore) LastDailyDay(ctx context.Context, site string) (string, error) {
	return onStore(p, func(st *sqlstore.Store) (string, error) { return st.LastDailyDay(ctx, site) })
}

// PutDaily writes daily figures on the store.
func (p *PendingStore) PutDaily(ctx context.Context, site string, days []string, rows []sqlstore.DailyRow, now time.Time) error {
	_, err := onStore(p, func(st *sqlstore.Store) (struct{}, error) { return struct{}{}, st.PutDaily(ctx, site, days, rows, now) })
	return err
}
