package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Opts configures an Engine.
type Opts struct {
	Store Store
	Sites []Site
	// Clock returns the current time: everything the Engine stamps and
	// every domain time-out is by it. The Engine reads the machine's clock
	// itself only to pace its own work (polls, retries; clock.go).
	Clock func() time.Time
	// Batch is the most requests applied in one group-commit transaction.
	Batch int
	// Committers is the number of parallel committing goroutines; requests
	// of one site always go to the same one, so a site's events keep their
	// order. A site gets its committer when it is first written to, the one
	// with the fewest sites then, so the sites a daemon writes (with several
	// daemons, often only some of them) spread evenly. SQLite wants 1.
	Committers int
	// Follow makes the engine follow the events other daemons commit to
	// the same store (follow.go): it polls the store's versions every
	// PollInterval while subscribers wait for events, every PollIdle
	// otherwise, and wakes on Notifier's notifications. Off: a single
	// daemon (SQLite).
	Follow bool
	// PollInterval is the fast poll; 0 means DefaultPollInterval.
	PollInterval time.Duration
	// PollIdle is the slow poll; 0 means DefaultPollIdle.
	PollIdle time.Duration
	// Notifier, when set, pushes "new events" between daemons.
	Notifier Notifier
	// Name names this daemon in the records of lost work it repairs
	// (LossRecord.Daemon); empty: the host name.
	Name string
	// FeedSize is how many recent events per site the feed keeps in memory.
	FeedSize int
	// MaxReplay is the largest gap a subscriber may catch up from the store;
	// beyond it the subscriber gets ErrGapTooLarge and should take a snapshot.
	MaxReplay int
	// StoreTimeout bounds one request from the moment it is submitted to
	// its commit: waiting for its batch, the transaction and its retries.
	// A store that does not answer in time fails the request with an error
	// wrapping ErrUnavailable (devices are told to retry; an idempotent
	// retry returns the first result if the commit landed after all). It
	// should be shorter than the devices' own request timeout.
	StoreTimeout time.Duration
	Logger       *slog.Logger
	// Queued, when set, is called in a request's own goroutine once the
	// request waits in its committer's queue, before it waits for its
	// batch: requests sent one after the other, each once the one before
	// was reported, sit in their batch in that order. For tests that need
	// a batch in a known order; nothing else needs it.
	Queued func()
}

// DefaultStoreTimeout is Opts.StoreTimeout when it is zero: shorter than
// the 5 s a device waits for an answer, so a hung database reaches the
// device as a retryable "store unavailable" and not as a timeout of its own.
const DefaultStoreTimeout = 3 * time.Second

// DefaultOpts returns the defaults for everything but Store and Sites.
func DefaultOpts() Opts {
	return Opts{
		Clock:        wallClock,
		Batch:        64,
		Committers:   1,
		FeedSize:     4096,
		MaxReplay:    10000,
		StoreTimeout: DefaultStoreTimeout,
		Logger:       slog.New(slog.DiscardHandler),
	}
}

// Engine applies queue operations through a Store: every operation is one
// request in a group-commit transaction, with its own savepoint, its
// idempotency record and its events. It is safe for concurrent use.
type Engine struct {
	store   Store
	defs    atomic.Pointer[siteDefs] // replaced whole by SetSites, never changed in place
	clock   clock
	batch   int
	timeout time.Duration
	log     *slog.Logger
	feed    *feed
	name    string
	queued  func() // Opts.Queued

	// losses counts the lost work found and repaired (lost.go).
	losses struct{ found, restored, tickets, unrestored atomic.Int64 }
	// figs are the booking figures of the last full snapshot of each
	// site and scope (read.go, figures).
	figMu sync.Mutex
	figs  map[figuresKey][]ResourceDay

	// genMu guards generated, the horizon each resource's slots were last
	// generated to ("site/resource"), and slotRuns, the generations that
	// ran per resource ("site/resource") and per site ("site/"), see
	// SlotRuns: a generation's flush writes both.
	genMu     sync.Mutex
	generated map[string]time.Time
	slotRuns  map[string]uint64

	mu     sync.RWMutex
	closed bool
	shards []shard
	wg     sync.WaitGroup

	// bySite is the shard of each site written to so far (string -> int);
	// shardMu guards the assignment and perShard, the sites of each shard.
	bySite   sync.Map
	shardMu  sync.Mutex
	perShard []int
}

// lane is the queue of a committer a request waits in. A counter's action
// (a keypad, the console) goes in front of every ticket a kiosk asks for:
// the committer takes the counter requests waiting first, in a batch of
// their own (every other batch at most, so kiosks still get through), so
// one waits at most for the transaction in flight and one more, never
// behind a flood of kiosks. Bookings wait in a queue of their own, of
// which a batch takes at most bookingShare: a rush of bookings at one site
// never holds more than that share of any transaction, and the kiosks of
// every site sharing the committer never queue behind it.
type lane int

const (
	laneCounter lane = iota // keypads and consoles: first
	laneBulk                // the sweeps, cancels and check-ins
	// laneIssue is the bulk lane for kiosks' tickets, whose requests run
	// bare in a batch: without a savepoint of their own (see runJobs).
	laneIssue
	laneBooking // bookings: at most bookingShare of a batch
)

// Indexes of a shard's queues.
const (
	queueCounter = iota
	queueBulk
	queueBooking
)

// queue is the index of the lane's queue in a shard: laneIssue's requests
// wait in the bulk queue.
func (l lane) queue() int {
	switch l {
	case laneCounter:
		return queueCounter
	case laneBooking:
		return queueBooking
	}
	return queueBulk
}

// shard is one committer's queues (see lane).
type shard [3]chan *job

// bookingShare is the most bookings one batch of size batch takes: a
// quarter, and at least one.
func bookingShare(batch int) int { return max(batch/4, 1) }

// Request carries who asks and the idempotency key of the request. A retry
// with the same Device and Key returns the first result.
type Request struct {
	Site   string
	Device string // actor: device id or operator name
	Key    string // idempotency key; empty: not idempotent

	// number, set by Issue, is the service whose next number the request
	// takes: the batch takes those of its kiosks at once (numbers).
	number string
}

type job struct {
	ctx    context.Context
	site   string
	key    RequestKey // idempotency key; empty Key: none
	lane   lane
	number string // the service whose number a kiosk's ticket takes
	// work is the request's work in the batch's transaction: it returns
	// the request's result, a pointer, which the committer keeps in result
	// and enqueue returns once the batch committed.
	work   func(ctx context.Context, tx Tx, j *job) (any, error)
	result any
	err    error
	events []Event
	writes []write // the tickets it wrote, for the waiting order
	// counters are the counter states it wrote.
	counters []CounterState
	e        *Engine
	wrote    bool // it called a write of trackingTx in its last run
	// took is the number it took last from its batch's span in its last
	// run, which is not counted in wrote: a refusal gives it back.
	took *taken
	done chan struct{}

	// prior is the stored result of an earlier request with the same key,
	// read for the whole batch at once; save, when set, is this request's
	// record, whose Result finishResults encodes from result once the
	// batch has appended the events, and which is written for the whole
	// batch at once after the last job.
	prior *StoredRequest
	save  *SavedRequest
}

// New validates the sites and starts the committers.
func New(o Opts) (*Engine, error) {
	d := DefaultOpts()
	if o.Store == nil {
		return nil, errors.New("queue: new engine: no store")
	}
	if o.Clock == nil {
		o.Clock = d.Clock
	}
	if o.Batch <= 0 {
		o.Batch = d.Batch
	}
	if o.Committers <= 0 {
		o.Committers = d.Committers
	}
	if o.FeedSize <= 0 {
		o.FeedSize = d.FeedSize
	}
	if o.MaxReplay <= 0 {
		o.MaxReplay = d.MaxReplay
	}
	if o.StoreTimeout <= 0 {
		o.StoreTimeout = d.StoreTimeout
	}
	if o.Logger == nil {
		o.Logger = d.Logger
	}
	if o.Name == "" {
		o.Name, _ = os.Hostname()
	}
	e := &Engine{store: o.Store, clock: o.Clock, batch: o.Batch, timeout: o.StoreTimeout, log: o.Logger,
		generated: map[string]time.Time{}, slotRuns: map[string]uint64{}, name: o.Name, queued: o.Queued}
	defs, err := newSiteDefs(o.Sites)
	if err != nil {
		return nil, err
	}
	e.defs.Store(defs)
	e.feed = newFeed(e, o.FeedSize, o.MaxReplay)
	e.feed.warm(defs.order)
	if o.Follow {
		e.feed.startFollower(o.PollInterval, o.PollIdle, o.Notifier)
	}
	for i := 0; i < o.Committers; i++ {
		sh := shard{make(chan *job, o.Batch*4), make(chan *job, o.Batch*4), make(chan *job, o.Batch*4)}
		e.shards = append(e.shards, sh)
		e.wg.Add(1)
		go e.commitLoop(sh)
	}
	return e, nil
}

// siteDefs is one generation of site definitions: read by any goroutine,
// never changed once published.
type siteDefs struct {
	byID  map[string]*Site
	order []string
	// changed is closed when SetSites replaces these definitions.
	changed chan struct{}
}

// newSiteDefs validates sites and indexes them.
func newSiteDefs(sites []Site) (*siteDefs, error) {
	d := &siteDefs{byID: map[string]*Site{}, changed: make(chan struct{})}
	for i := range sites {
		s := sites[i]
		if err := s.Validate(); err != nil {
			return nil, err
		}
		if _, dup := d.byID[s.ID]; dup {
			return nil, fmt.Errorf("queue: site %s defined twice", s.ID)
		}
		d.byID[s.ID] = &s
		d.order = append(d.order, s.ID)
	}
	return d, nil
}

// Sites returns the site definitions in configuration order.
func (e *Engine) Sites() []Site {
	d := e.defs.Load()
	out := make([]Site, 0, len(d.order))
	for _, id := range d.order {
		out = append(out, *d.byID[id])
	}
	return out
}

// Store is the store the engine runs on (Opts.Store), for readers that
// use what a store offers beyond queue.Store (the daily figures of
// package report).
func (e *Engine) Store() Store { return e.store }

// Site returns one site's definition. The definition returned is never
// changed: SetSites publishes new ones.
func (e *Engine) Site(id string) (*Site, error) {
	s, ok := e.defs.Load().byID[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownSite, id)
	}
	return s, nil
}

// SetSites replaces the site definitions while the engine runs (a
// configuration reload): services, counters, hours, names and rules change
// for every request that starts after it returns; a request already
// running finishes with the definitions it started with. Tickets, counters'
// states and events are in the store and stay as they are: a ticket of a
// service that is no longer defined can still be read, and a counter that
// is no longer defined can no longer act. Invalid definitions are refused
// and the running ones stay.
func (e *Engine) SetSites(sites []Site) error {
	d, err := newSiteDefs(sites)
	if err != nil {
		return err
	}
	old := e.defs.Swap(d)
	e.feed.dropOrders() // rebuilt on next use, from the new definitions
	close(old.changed)
	return nil
}

// SitesChanged returns a channel closed at the next SetSites: a reader
// that shows names (a hall display, a ticket page) takes it before it reads
// Site, and reads the site again when it closes, so a reload reaches the
// screens already open without waiting for an event.
func (e *Engine) SitesChanged() <-chan struct{} { return e.defs.Load().changed }

// Now is the engine's clock.
func (e *Engine) Now() time.Time { return e.clock() }

// Close stops taking requests, applies those already queued and stops the
// committers and the feed. It returns ctx's error if they do not finish in
// time.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	if !e.closed {
		e.closed = true
		for _, sh := range e.shards {
			for _, ch := range sh {
				close(ch)
			}
		}
	}
	e.mu.Unlock()
	done := make(chan struct{})
	go func() { e.wg.Wait(); e.feed.close(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("queue: close engine: %w", ctx.Err())
	}
}

// errStoreTimeout is the cause of a request's context ending at the
// engine's StoreTimeout (as opposed to the caller giving up).
var errStoreTimeout = errors.New("queue: store timeout")

// submit runs work as the request j (its site and lane set) in the
// committer of j's site and returns work's result once the batch
// committed, waiting at most the engine's StoreTimeout.
func submit[T any](ctx context.Context, e *Engine, j *job, work func(ctx context.Context, tx Tx, j *job) (T, error)) (T, error) {
	j.work = func(ctx context.Context, tx Tx, j *job) (any, error) {
		v, err := work(ctx, tx, j)
		if err != nil {
			return nil, err
		}
		return &v, nil
	}
	res, err := e.enqueue(ctx, j)
	if err != nil {
		var zero T
		return zero, err
	}
	return *res.(*T), nil
}

// enqueue queues j (its ctx and done are set here) and returns its result
// once the committer closed done: the committer writes j's result and err
// only before that, and enqueue reads them only after it, never when it
// gave up on the context while the commit went on.
func (e *Engine) enqueue(ctx context.Context, j *job) (any, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, e.timeout, errStoreTimeout)
	defer cancel()
	j.ctx, j.done, j.e = ctx, make(chan struct{}), e
	site, l := j.site, j.lane
	e.mu.RLock()
	if e.closed {
		e.mu.RUnlock()
		return nil, ErrClosed
	}
	ch := e.shards[e.shardOf(site)][l.queue()]
	select {
	case ch <- j:
	case <-ctx.Done():
		e.mu.RUnlock()
		return nil, e.ctxErr(ctx)
	}
	e.mu.RUnlock()
	if e.queued != nil {
		e.queued()
	}
	select {
	case <-j.done:
		return j.result, j.err
	case <-ctx.Done():
		return nil, e.ctxErr(ctx)
	}
}

// shardOf is the committer of site: the one it was given at its first
// request, the one with the fewest sites then (the first such).
func (e *Engine) shardOf(site string) int {
	if i, ok := e.bySite.Load(site); ok {
		return i.(int)
	}
	e.shardMu.Lock()
	defer e.shardMu.Unlock()
	if i, ok := e.bySite.Load(site); ok {
		return i.(int)
	}
	if e.perShard == nil {
		e.perShard = make([]int, len(e.shards))
	}
	i := 0
	for j, n := range e.perShard {
		if n < e.perShard[i] {
			i = j
		}
	}
	e.perShard[i]++
	e.bySite.Store(site, i)
	return i
}

// ctxErr is the error of a request whose context ended: the caller's own
// error, or ErrUnavailable when the engine's StoreTimeout ran out.
func (e *Engine) ctxErr(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), errStoreTimeout) {
		return fmt.Errorf("%w: no answer within %s", ErrUnavailable, e.timeout)
	}
	return ctx.Err()
}

func (e *Engine) commitLoop(sh shard) {
	defer e.wg.Done()
	fast, bulk, books := sh[queueCounter], sh[queueBulk], sh[queueBooking]
	alone := false // the last batch held only counter requests
	for fast != nil || bulk != nil || books != nil {
		var j *job
		var ok bool
		select {
		case j, ok = <-fast:
			if !ok {
				fast = nil
				continue
			}
		default:
			select {
			case j, ok = <-fast:
				if !ok {
					fast = nil
					continue
				}
			case j, ok = <-bulk:
				if !ok {
					bulk = nil
					continue
				}
			case j, ok = <-books:
				if !ok {
					books = nil
					continue
				}
			}
		}
		batch := e.drain(fast, []*job{j}, e.batch)
		if j.lane == laneCounter && !alone {
			// Counter requests go alone, without kiosks: their batch is
			// short. The next batch takes kiosks too, so that counters
			// calling back to back cannot starve them.
			alone = true
			e.runBatch(batch)
			continue
		}
		alone = false
		e.runBatch(e.fill(batch, bulk, books))
	}
}

// fill adds to batch, which holds the job that starts it (and counter
// requests), the bookings waiting up to bookingShare of the batch in all,
// then the bulk requests waiting up to the batch size: a kiosk waits for
// at most the bookings of the transaction in flight and of the next, never
// behind a rush of them, and the bookings still get their share.
func (e *Engine) fill(batch []*job, bulk, books chan *job) []*job {
	taken := 0
	for _, j := range batch {
		if j.lane == laneBooking {
			taken++
		}
	}
	batch = e.drain(books, batch, min(e.batch, len(batch)+bookingShare(e.batch)-taken))
	return e.drain(bulk, batch, e.batch)
}

// drain adds to batch the jobs waiting in ch, up to n jobs in the batch.
func (e *Engine) drain(ch chan *job, batch []*job, n int) []*job {
	for ch != nil && len(batch) < n {
		select {
		case j, ok := <-ch:
			if !ok {
				return batch
			}
			batch = append(batch, j)
		default:
			return batch
		}
	}
	return batch
}

// runBatch applies the jobs in one transaction, each in a savepoint: a
// refused request is rolled back alone. If the transaction fails (the store
// has already retried it whole when the database aborted it), each job is
// tried again alone, so one bad request cannot fail the others; not when
// the store is unavailable or out of time, where that would only multiply
// the wait.
func (e *Engine) runBatch(batch []*job) {
	live := batch[:0:0]
	var later []*job
	seen := map[RequestKey]bool{}
	for _, j := range batch {
		if j.ctx.Err() != nil {
			j.err = e.ctxErr(j.ctx)
			close(j.done)
			continue
		}
		if j.key.Key != "" {
			if seen[j.key] {
				// A retry of a request in this batch: it must see the
				// first one's stored result, so it runs after the commit.
				later = append(later, j)
				continue
			}
			seen[j.key] = true
		}
		live = append(live, j)
	}
	if len(later) > 0 {
		defer e.runBatch(later)
	}
	if len(live) == 0 {
		return
	}
	err := e.commit(live)
	switch {
	case err == nil:
	case len(live) > 1 && !errors.Is(err, ErrUnavailable):
		e.log.Warn("batch failed, applying its requests one by one", "requests", len(live), "err", err)
		for _, j := range live {
			if j.ctx.Err() != nil {
				j.err = e.ctxErr(j.ctx)
				continue
			}
			j.err = e.commit([]*job{j})
		}
	default:
		for _, j := range live {
			j.err = err
		}
	}
	for _, j := range live {
		if j.err == nil {
			e.feed.publish(j.events, j.writes, heldOf(j))
		}
		close(j.done)
	}
}

// commit applies the jobs; when the transaction finds the store behind
// this daemon (lost.go), the site is restored in the next one, which runs
// the jobs again.
func (e *Engine) commit(jobs []*job) error {
	for attempt := 0; ; attempt++ {
		rs, err := e.apply(jobs)
		for _, r := range rs {
			e.feed.publishRestored(r)
		}
		var le *lostError
		if !errors.As(err, &le) {
			return err
		}
		e.feed.markLost(le)
		if attempt == 2 {
			return fmt.Errorf("%w: %w", ErrLostWork, err)
		}
	}
}

// restoration is a site's lost work repaired in a batch's transaction: its
// record and this daemon's requests applied again (with their new versions).
type restoration struct {
	le    *lostError
	rec   LossRecord
	again []*heldJob
}

// apply runs the jobs in one store transaction, until the latest of their
// deadlines: past it no caller waits for the answer. It returns the sites
// it restored first, if any.
func (e *Engine) apply(jobs []*job) ([]restoration, error) {
	deadline := e.clock.mono().Add(e.timeout)
	if d, ok := jobs[0].ctx.Deadline(); ok {
		deadline = d
		for _, j := range jobs[1:] {
			if d, ok := j.ctx.Deadline(); ok && d.After(deadline) {
				deadline = d
			}
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	var rs []restoration
	each := false // every job in a savepoint (errRedo)
	for {
		err := e.store.Update(ctx, func(ctx context.Context, tx Tx) error {
			var err error
			rs, err = e.applyTx(ctx, tx, jobs, each)
			return err // Store.Update returns only an error: rs is kept aside
		})
		if errors.Is(err, errRedo) && !each {
			each = true
			continue
		}
		if err != nil {
			rs = nil
		}
		return rs, e.noAnswer(ctx, err)
	}
}

// applyTx is the work of apply's transaction, each as runJobs takes it.
func (e *Engine) applyTx(ctx context.Context, tx Tx, jobs []*job, each bool) ([]restoration, error) {
	// Nothing reads the errors of the writes the store may hold but to
	// fail the transaction, which the commit's error does as well.
	tx.DeferWrites()
	var rs []restoration
	lost := e.feed.lostSites(jobs)
	if e.feed.follower != nil || len(lost) > 0 { // other daemons write too
		if err := lockSites(ctx, tx, jobs); err != nil {
			return nil, err
		}
	}
	for _, le := range lost {
		r, ok, err := e.restore(ctx, tx, le)
		if err != nil {
			return nil, err
		}
		if ok {
			rs = append(rs, r)
		}
	}
	if err := lookupPriors(ctx, tx, jobs); err != nil {
		return nil, err
	}
	if err := runJobs(ctx, tx, jobs, each); err != nil {
		return nil, err
	}
	if err := appendEvents(ctx, tx, jobs); err != nil {
		return nil, err
	}
	// The store numbered them at or below what this daemon saw: it
	// lost work (lost.go).
	if err := e.feed.checkVersions(jobs); err != nil {
		return nil, err
	}
	if err := finishResults(jobs); err != nil {
		return nil, err
	}
	var saves []SavedRequest
	for _, j := range jobs {
		if j.save != nil {
			saves = append(saves, *j.save)
		}
	}
	if err := tx.SaveRequests(ctx, saves); err != nil {
		return nil, fmt.Errorf("queue: save requests: %w", err)
	}
	return rs, nil
}

// noAnswer turns the error of a store call that ran out of ctx, the
// engine's time for it, into ErrUnavailable: the store did not answer. The
// error may come from a deadline the driver derived from ctx (a dial, say)
// an instant before ctx itself reports it.
func (e *Engine) noAnswer(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) || (ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded)) {
		return err
	}
	return fmt.Errorf("%w: no answer within %s: %w", ErrUnavailable, e.timeout, err)
}

// reset clears what a run of the job made, for a run again.
func (j *job) reset() {
	j.events, j.writes, j.counters, j.result, j.err, j.save = j.events[:0], j.writes[:0], j.counters[:0], nil, nil, nil
}

// lookupPriors clears the jobs' results of an earlier attempt and reads the
// stored results of their idempotency keys, for the whole batch at once.
func lookupPriors(ctx context.Context, tx Tx, jobs []*job) error {
	var keys []RequestKey
	for _, j := range jobs {
		j.reset()
		j.prior = nil
		if j.key.Key != "" {
			keys = append(keys, j.key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	stored, err := tx.LookupRequests(ctx, keys)
	if err != nil {
		return fmt.Errorf("queue: look up requests: %w", err)
	}
	for _, j := range jobs {
		if r, ok := stored[j.key]; ok && j.key.Key != "" {
			j.prior = &r
		}
	}
	return nil
}

// runJobs runs the jobs of a batch, each refusal rolled back alone. A batch
// of one needs no savepoint (a refusal rolls the transaction back). In a
// larger one, a job runs in a savepoint of its own, except the kiosks'
// tickets (laneIssue) and the bookings (laneBooking), which run bare: a
// ticket's refusals (unknown service, closed, bad class) and a booking's
// usual ones (the slot full, closed or gone) come before they write, so
// there is nothing to roll back, and a savepoint per request would cost
// its statement and, on SQLite, a copy of every page the request touches
// into the statement journal (on PostgreSQL, a subtransaction each). A
// bare ticket refused once it took its number (the daily cap) gives the
// number back to the batch's span (numbers.untake). One refused after it
// wrote what cannot be undone alone (a booking whose patient holds the
// time already, refused after it took its place) fails the run with
// errRedo: the transaction is rolled back and run again with each (every
// job in a savepoint), which a batch pays only then, where a savepoint
// around every batch cost two statements each time. Only a refusal of one
// request is rolled back; anything else (above all a transaction the
// database aborted, after which only ROLLBACK may run) fails the whole
// transaction.
func runJobs(ctx context.Context, tx Tx, jobs []*job, each bool) error {
	if len(jobs) == 1 {
		j := jobs[0]
		if each || j.lane != laneIssue {
			return j.run(ctx, trackingTx{Tx: tx, e: j.e, j: j})
		}
		// Alone, a kiosk's ticket takes its number and its id in one
		// statement where the store can, and its insert waits with them.
		nums := newNumbers(jobs)
		if err := j.run(ctx, trackingTx{Tx: tx, e: j.e, j: j, nums: nums}); err != nil {
			return err
		}
		return nums.finish(ctx, tx)
	}
	var nums *numbers
	if !each && slices.ContainsFunc(jobs, func(j *job) bool { return j.lane == laneIssue }) {
		nums = newNumbers(jobs)
	}
	first, redo, err := runEach(ctx, tx, jobs, nums, !each)
	switch {
	case err != nil:
		return err
	case redo:
		return errRedo
	case nums == nil:
		return nil
	}
	if err := nums.finish(ctx, tx); err != nil {
		return err
	}
	if first == "" {
		return nil
	}
	// Released, with every savepoint after it: the events and the saved
	// results are written outside them, not copied into a statement
	// journal no one rolls back to.
	return tx.Release(ctx, first)
}

// errRedo is runJobs asking for its batch to run again, each job in a
// savepoint.
var errRedo = errors.New("queue: a request refused after it wrote: the batch runs again, a savepoint each")

// runEach runs the jobs one after the other. With bare, the tickets
// (laneIssue) and bookings (laneBooking) run without a savepoint, the
// tickets taking their numbers from nums; without, every job runs in a
// savepoint. It returns the first savepoint it took, and reports redo, and
// stops, when a bare job was refused after it wrote.
func runEach(ctx context.Context, tx Tx, jobs []*job, nums *numbers, bare bool) (first string, redo bool, err error) {
	for i, j := range jobs {
		if nums != nil && !newKioskTicket(j) {
			// It may read tickets, or insert one of its own.
			if err := nums.flush(ctx, tx, true); err != nil {
				return first, false, err
			}
		}
		sp := ""
		if !bare || (j.lane != laneIssue && j.lane != laneBooking) {
			// Savepoints are not released one by one: RELEASE would cost
			// a round trip and free nothing a batch needs back.
			sp = fmt.Sprintf("r%d", i)
			if err := tx.Savepoint(ctx, sp); err != nil {
				return first, false, err
			}
			if first == "" {
				first = sp
			}
		}
		j.wrote, j.took = false, nil
		err := j.run(ctx, trackingTx{Tx: tx, e: j.e, j: j, nums: nums})
		if err == nil {
			continue
		}
		if !IsRefusal(err) {
			return first, false, err
		}
		if sp == "" && (j.wrote || (j.took != nil && !nums.untake(j.took.k, j.took.seq))) {
			return first, true, nil
		}
		j.reset()
		j.err = err
		if sp == "" {
			continue
		}
		if err := tx.RollbackTo(ctx, sp); err != nil {
			return first, false, err
		}
	}
	return first, false, nil
}

// trackingTx is the transaction a job runs in: it records the tickets the job
// writes, which the waiting order applies once they are committed, and
// whether the job wrote at all (a bare job may write only through the
// methods below).
type trackingTx struct {
	Tx
	e    *Engine
	j    *job
	nums *numbers // the batch's numbers, when the job may take one there
}

// taken is a number of a service day a request took from its batch's span.
type taken struct {
	k   DayKey
	seq int
}

// NextSeq takes one number (n is 1 in every request: the spans are the
// batch's, not a request's), from the batch's span when it has one.
func (t trackingTx) NextSeq(ctx context.Context, k DayKey, n int) (int, error) {
	var seq int
	var err error
	if t.nums == nil || n != 1 {
		t.j.wrote = true
		seq, err = t.Tx.NextSeq(ctx, k, n)
	} else {
		seq, err = t.nums.take(ctx, t.Tx, t.j, k)
		// Only a kiosk's one number from a span can be given back alone.
		if err != nil || t.j.lane != laneIssue || t.j.took != nil {
			t.j.wrote = true
		}
		t.j.took = &taken{k, seq}
	}
	if err == nil {
		// A number this daemon knows was given: the store lost work.
		err = t.e.feed.checkNumber(k, seq)
	}
	return seq, err
}

// PutCounter records the counter states the job writes, kept with its work
// in case the store loses it (lost.go).
func (t trackingTx) PutCounter(ctx context.Context, c CounterState) error {
	t.j.wrote = true
	err := t.Tx.PutCounter(ctx, c)
	if err == nil {
		t.j.counters = append(t.j.counters, c)
	}
	return err
}

func (t trackingTx) InsertTicket(ctx context.Context, tk *Ticket) error {
	t.j.wrote = true
	var err error
	if t.nums != nil {
		err = t.nums.insert(ctx, t.Tx, t.j, tk)
	} else {
		err = t.Tx.InsertTicket(ctx, tk)
	}
	if err == nil {
		c := *tk
		t.j.writes = append(t.j.writes, write{t: &c})
	}
	return err
}

// TakeSlot takes a place in a slot, and the patient's lock: a write,
// unless it took none.
func (t trackingTx) TakeSlot(ctx context.Context, k PatientKey, slot int64, now time.Time) (*Slot, bool, error) {
	sl, ok, err := t.Tx.TakeSlot(ctx, k, slot, now)
	if ok || err != nil {
		t.j.wrote = true
	}
	return sl, ok, err
}

// InsertBooking stores a booking.
func (t trackingTx) InsertBooking(ctx context.Context, b *Booking) error {
	t.j.wrote = true
	return t.Tx.InsertBooking(ctx, b)
}

// Waiting reads the waiting tickets once the batch's own are stored (a
// revisit ticket is placed among them).
func (t trackingTx) Waiting(ctx context.Context, q WaitingQuery) ([]Ticket, error) {
	if t.nums != nil {
		if err := t.nums.flush(ctx, t.Tx, false); err != nil {
			return nil, err
		}
	}
	return t.Tx.Waiting(ctx, q)
}

func (t trackingTx) UpdateTicket(ctx context.Context, tk *Ticket, from Status) error {
	t.j.wrote = true
	err := t.Tx.UpdateTicket(ctx, tk, from)
	if err == nil {
		c := *tk
		t.j.writes = append(t.j.writes, write{t: &c})
	}
	return err
}

func (t trackingTx) SetSortKey(ctx context.Context, id, key int64) error {
	t.j.wrote = true
	err := t.Tx.SetSortKey(ctx, id, key)
	if err == nil {
		t.j.writes = append(t.j.writes, write{id: id, key: key})
	}
	return err
}

// emit records an event of the job. Its version is given when the batch
// appends the events of every request that succeeded, after the last one,
// so the site's version row is held only from there to the commit.
func (j *job) emit(ev Event) {
	j.events = append(j.events, ev)
}

// appendEvents stores the events of the jobs that succeeded, site by site
// in job order, and sets their versions.
func appendEvents(ctx context.Context, tx Tx, jobs []*job) error {
	var sites []string
	bySite := map[string][]*Event{}
	for _, j := range jobs {
		for i := range j.events {
			ev := &j.events[i]
			if _, ok := bySite[ev.Site]; !ok {
				sites = append(sites, ev.Site)
			}
			bySite[ev.Site] = append(bySite[ev.Site], ev)
		}
	}
	for _, site := range sites {
		if err := tx.AppendEvents(ctx, site, bySite[site]); err != nil {
			return fmt.Errorf("queue: append %d events of %s: %w", len(bySite[site]), site, err)
		}
	}
	return nil
}

// run runs the job's work in tx and keeps its result.
func (j *job) run(ctx context.Context, tx Tx) error {
	res, err := j.work(ctx, tx, j)
	j.result = res
	return err
}

// finishResults gives each job's result the version of its last event
// (when the result carries one) and encodes the result of each job that
// saves it, once the batch has appended the events.
func finishResults(jobs []*job) error {
	for _, j := range jobs {
		if j.err != nil {
			continue
		}
		if v, ok := j.result.(versioned); ok && len(j.events) > 0 {
			v.setVersion(j.events[len(j.events)-1].Version)
		}
		if j.save == nil {
			continue
		}
		b, err := json.Marshal(j.result)
		if err != nil {
			return fmt.Errorf("queue: encode result of %s: %w", j.save.Op, err)
		}
		j.save.Result = b
	}
	return nil
}

// versioned is a result that carries the version of the events it made
// (Ticket, CounterState).
type versioned interface{ setVersion(int64) }

// call is an idempotent request: who asks (Request), the committer's lane
// it waits in and op, its name in its idempotency record (opName).
type call struct {
	Request
	lane lane
	op   string
}

// steps is the work of an idempotent request: run makes its result; again,
// when set, answers a retry in the same transaction from the stored
// result, e.g. with what changed since.
type steps[T, R any] struct {
	run   func(ctx context.Context, tx Tx, j *job, s *Site) (T, error)
	again func(ctx context.Context, tx Tx, s *Site, stored T) (R, error)
}

// retried is again's answer to a retry, as a job's result.
type retried[R any] struct{ v R }

// idempotent runs one request once per (device, key) (see lane): a stored
// result for the key is returned as it was; otherwise run makes it and it
// is stored in the same transaction.
func idempotent[T any](ctx context.Context, e *Engine, c call, run func(ctx context.Context, tx Tx, j *job, s *Site) (T, error)) (T, error) {
	v, _, err := runIdempotent(ctx, e, c, steps[T, T]{run: run})
	return v, err
}

// runIdempotent is idempotent with st.again, when set, answering a retry:
// it returns run's result, or again's answer (then not nil).
func runIdempotent[T, R any](ctx context.Context, e *Engine, c call, st steps[T, R]) (T, *R, error) {
	var zero T
	s, err := e.Site(c.Site)
	if err != nil {
		return zero, nil, err
	}
	key := RequestKey{Device: c.Device, Key: c.Key}
	j := &job{site: s.ID, key: key, lane: c.lane, number: c.number, work: func(ctx context.Context, tx Tx, j *job) (any, error) {
		if p := j.prior; p != nil {
			if p.Op != c.op {
				return nil, fmt.Errorf("%w: key %q was used for %s, not %s", ErrKeyReused, c.Key, opText(p.Op), opText(c.op))
			}
			var v T
			if err := json.Unmarshal(p.Result, &v); err != nil {
				return nil, fmt.Errorf("queue: decode stored result of %s: %w", c.op, err)
			}
			if st.again == nil {
				return &v, nil
			}
			r, err := st.again(ctx, tx, s, v)
			if err != nil {
				return nil, err
			}
			return &retried[R]{r}, nil
		}
		v, err := st.run(ctx, tx, j, s)
		if err != nil {
			return nil, err
		}
		if c.Key != "" {
			j.save = &SavedRequest{RequestKey: key, Op: c.op, AtMs: ms(e.clock())}
		}
		return &v, nil
	}}
	res, err := e.enqueue(ctx, j)
	if err != nil {
		return zero, nil, err
	}
	if r, ok := res.(*retried[R]); ok {
		return zero, &r.v, nil
	}
	return *res.(*T), nil, nil
}

// ms converts a time to the unix milliseconds stores keep; zero stays 0.
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// read runs fn in a read transaction of the store, at most StoreTimeout,
// and returns what fn read: a store that does not answer fails the read
// with ErrUnavailable. A store may run fn more than once (a transaction
// it retries): the result is that of the run it committed.
func read[T any](ctx context.Context, e *Engine, fn func(ctx context.Context, tx Tx) (T, error)) (T, error) {
	vctx, cancel := context.WithTimeoutCause(ctx, e.timeout, errStoreTimeout)
	defer cancel()
	var out T
	err := e.store.View(vctx, func(ctx context.Context, tx Tx) error {
		v, err := fn(ctx, tx)
		out = v // Store.View returns only an error: the one place the result is kept aside
		return err
	})
	if err == nil {
		return out, nil
	}
	var zero T
	if ctx.Err() != nil {
		return zero, err // the caller's own deadline or cancel, not the store's silence
	}
	return zero, e.noAnswer(vctx, err)
}
