// Package notify delivers the outbox: the notifications AppendEvents
// wrote, in the transaction of their event, for every event whose type a
// receiver takes (booking events by default; see sqlstore.OutboxRoute). A
// Worker claims due messages in batches, hands each to its receiver (a
// webhook: a signed JSON POST; a command: the JSON on its standard input)
// and records the outcome: delivered messages leave the outbox, a failed
// attempt is tried again after an exponential backoff, and a message that
// failed Attempts times is set dead, for an operator (RequeueOutbox).
//
// Delivery is at least once: a receiver may see a message again (after a
// timeout whose answer was lost, a daemon that stopped mid-delivery) and
// drops what it saw by the event id, which is the same on every attempt.
// Several daemons on one database share the work: a claim takes each
// message for one of them at a time. Nothing here runs in the
// transactions of the engine: a receiver that is down, slow or failing
// only delays its own messages.
package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nowserving/nowserving/backoff"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// Defaults of Opts.
const (
	DefaultAttempts    = 12
	DefaultMinBackoff  = 2 * time.Second
	DefaultMaxBackoff  = 15 * time.Minute
	DefaultBatch       = 50
	DefaultPoll        = time.Second
	DefaultTimeout     = 10 * time.Second
	DefaultConcurrency = 4
)

// Store is the outbox as the worker uses it (a *sqlstore.Store, or the
// daemon's store before it opens).
type Store interface {
	ClaimOutbox(ctx context.Context, c sqlstore.OutboxClaim) ([]sqlstore.OutboxMessage, error)
	FinishOutbox(ctx context.Context, rs []sqlstore.OutboxResult) error
	OutboxStatus(ctx context.Context, lastDead int) (sqlstore.OutboxStatus, error)
}

// Deliverer hands one message to a receiver: nil means delivered.
type Deliverer interface {
	Deliver(ctx context.Context, m *sqlstore.OutboxMessage) error
}

// Receiver is one destination of notifications.
type Receiver struct {
	// Name names the receiver in the outbox rows, the logs and the
	// metrics; renaming it strands the rows written for the old name.
	Name string
	// Events are the event types it takes, as patterns (see Match).
	Events []string
	// Deliverer is a *Webhook or a *Command.
	Deliverer Deliverer
}

// Opts configures a Worker; zero values take the defaults.
type Opts struct {
	Store     Store
	Receivers []Receiver
	// Attempts is how many failed attempts make a message dead.
	Attempts int
	// MinBackoff and MaxBackoff bound the pause after a failed attempt:
	// MinBackoff after the first, doubling up to MaxBackoff, jittered.
	MinBackoff, MaxBackoff time.Duration
	// Batch is how many messages one claim takes at most.
	Batch int
	// Poll is the pause between claims that found fewer than Batch due.
	Poll time.Duration
	// Timeout bounds one attempt.
	Timeout time.Duration
	// Concurrency is how many attempts of a batch run at once.
	Concurrency int
	// StatusEvery is how often the outbox's counts are read for Stats
	// (default 5 polls).
	StatusEvery time.Duration
	Logger      *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Worker delivers the outbox. It is a daemon part: Run until Shutdown.
type Worker struct {
	o     Opts
	rcv   map[string]*Receiver
	log   *slog.Logger
	lease time.Duration

	stop     chan struct{} // closed by Shutdown: claim no more
	stopOnce sync.Once
	hard     context.Context // cancelled when Shutdown's ctx ends: abandon attempts
	abandon  context.CancelFunc
	done     chan struct{} // closed when Run returns

	mu       sync.Mutex
	counts   map[string]*ReceiverStats
	status   sqlstore.OutboxStatus
	statusAt time.Time
	failing  bool // the last claim failed (logged once until it works)
}

// New returns a worker of o; it does nothing until Run.
func New(o Opts) (*Worker, error) {
	if o.Store == nil {
		return nil, errors.New("notify: no store")
	}
	defaults(&o)
	w := &Worker{o: o, rcv: map[string]*Receiver{}, log: o.Logger, counts: map[string]*ReceiverStats{},
		stop: make(chan struct{}), done: make(chan struct{})}
	for i := range o.Receivers {
		r := &o.Receivers[i]
		if r.Name == "" || r.Deliverer == nil {
			return nil, fmt.Errorf("notify: receiver %d: needs a name and a deliverer", i)
		}
		if _, dup := w.rcv[r.Name]; dup {
			return nil, fmt.Errorf("notify: receiver %q listed twice", r.Name)
		}
		if err := CheckPatterns(r.Events); err != nil {
			return nil, fmt.Errorf("notify: receiver %q: %w", r.Name, err)
		}
		w.rcv[r.Name] = r
		w.counts[r.Name] = &ReceiverStats{Name: r.Name}
	}
	// A claim holds its messages until the slowest attempt of the batch
	// has run, each in turn for a free slot; one more timeout of margin.
	rounds := (o.Batch + o.Concurrency - 1) / o.Concurrency
	w.lease = time.Duration(rounds+1) * o.Timeout
	w.hard, w.abandon = context.WithCancel(context.Background())
	return w, nil
}

func defaults(o *Opts) {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setD := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&o.Attempts, DefaultAttempts)
	set(&o.Batch, DefaultBatch)
	set(&o.Concurrency, DefaultConcurrency)
	setD(&o.MinBackoff, DefaultMinBackoff)
	setD(&o.MaxBackoff, DefaultMaxBackoff)
	setD(&o.Poll, DefaultPoll)
	setD(&o.Timeout, DefaultTimeout)
	setD(&o.StatusEvery, 5*o.Poll)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// Routes are the outbox routes of the receivers, for sqlstore.Opts.Outbox:
// the store writes a row for a receiver for each event it takes.
func Routes(rs []Receiver) []sqlstore.OutboxRoute {
	out := make([]sqlstore.OutboxRoute, 0, len(rs))
	for _, r := range rs {
		out = append(out, sqlstore.OutboxRoute{Receiver: r.Name, Match: Matcher(r.Events)})
	}
	return out
}

// Name names the part.
func (w *Worker) Name() string { return "notify" }

// Run claims and delivers until Shutdown (or ctx ends), then returns nil.
// A store that fails (not open yet, down) is tried again at the next poll.
func (w *Worker) Run(ctx context.Context) error {
	defer close(w.done)
	var lastStatus time.Time
	for {
		full := w.cycle(ctx)
		if now := w.o.Now(); now.Sub(lastStatus) >= w.o.StatusEvery {
			lastStatus = now
			w.readStatus(ctx)
		}
		if full {
			select {
			case <-w.stop:
				return nil
			case <-ctx.Done():
				return nil
			default:
				continue // more may be due now
			}
		}
		t := time.NewTimer(w.o.Poll)
		select {
		case <-w.stop:
			t.Stop()
			return nil
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// Shutdown stops claiming and waits for the attempts in flight within ctx;
// when ctx ends first, they are abandoned and their messages handed back
// (Release), due again at once for whoever runs next.
func (w *Worker) Shutdown(ctx context.Context) error {
	w.stopOnce.Do(func() { close(w.stop) })
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		w.abandon()
		select {
		case <-w.done:
		case <-time.After(time.Second):
		}
		return fmt.Errorf("notify: stop: %w", ctx.Err())
	}
}

// cycle claims one batch, delivers it and records the outcomes; full
// reports that the claim took a whole batch.
func (w *Worker) cycle(ctx context.Context) (full bool) {
	if len(w.rcv) == 0 {
		return false // nothing to deliver to: leave the rows to a daemon that has receivers
	}
	now := w.o.Now()
	cctx, cancel := context.WithTimeout(ctx, w.o.Timeout)
	ms, err := w.o.Store.ClaimOutbox(cctx, sqlstore.OutboxClaim{Now: now, Lease: w.lease, N: w.o.Batch})
	cancel()
	if err != nil && ctx.Err() != nil {
		return false // stopping: the claim was cut short
	}
	w.claimed(err)
	if err != nil || len(ms) == 0 {
		return false
	}
	rs := w.deliverAll(ms)
	// The outcomes are recorded even when the daemon is stopping: a
	// delivered message left claimed would be sent again.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.o.Timeout)
	defer cancel()
	if err := w.o.Store.FinishOutbox(fctx, rs); err != nil {
		w.log.Warn("notify: recording delivery outcomes failed: the messages will be sent again after their lease",
			"messages", len(rs), "lease_s", w.lease.Seconds(), "err", err)
	}
	return len(ms) == w.o.Batch
}

// claimed logs a failed claim once, and when claims work again.
func (w *Worker) claimed(err error) {
	w.mu.Lock()
	was := w.failing
	w.failing = err != nil
	w.mu.Unlock()
	switch {
	case err != nil && !was:
		w.log.Warn("notify: cannot claim outbox messages, retrying every poll", "poll_s", w.o.Poll.Seconds(), "err", err)
	case err != nil:
		w.log.Debug("notify: claim failed", "err", err)
	case was:
		w.log.Info("notify: claiming outbox messages again")
	}
}

// deliverAll runs the attempts of a batch, Concurrency at a time, and
// returns their outcomes.
func (w *Worker) deliverAll(ms []sqlstore.OutboxMessage) []sqlstore.OutboxResult {
	rs := make([]sqlstore.OutboxResult, len(ms))
	sem := make(chan struct{}, w.o.Concurrency)
	var wg sync.WaitGroup
	for i := range ms {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			rs[i] = w.attempt(&ms[i])
		})
	}
	wg.Wait()
	return rs
}

// attempt delivers one claimed message and says what became of it.
func (w *Worker) attempt(m *sqlstore.OutboxMessage) sqlstore.OutboxResult {
	res := sqlstore.OutboxResult{ID: m.ID, Attempt: m.Attempt}
	r, ok := w.rcv[m.Receiver]
	var err error
	if !ok {
		err = fmt.Errorf("notify: no receiver %q in this daemon's configuration", m.Receiver)
	} else {
		ctx, cancel := context.WithTimeout(w.hard, w.o.Timeout)
		err = r.Deliverer.Deliver(ctx, m)
		cancel()
	}
	res.At = w.o.Now()
	switch {
	case err == nil:
		res.Outcome = sqlstore.Delivered
		w.count(m.Receiver, func(s *ReceiverStats) { s.Delivered++ })
		w.log.Debug("notify: delivered", "receiver", m.Receiver, "event_id", m.EventID, "type", string(m.Type), "attempt", m.Attempt)
	case w.hard.Err() != nil:
		res.Outcome, res.Due = sqlstore.Release, res.At // stopping: not the receiver's fault
	case m.Attempt >= w.o.Attempts:
		res.Outcome, res.Err = sqlstore.Dead, err.Error()
		w.count(m.Receiver, func(s *ReceiverStats) { s.Failed++; s.Dead++ })
		w.log.Error("notify: giving up on a message: it is dead (nowserving notify requeue sends it again)",
			"receiver", m.Receiver, "event_id", m.EventID, "type", string(m.Type), "site", m.Site, "version", m.Version,
			"attempts", m.Attempt, "err", err)
	default:
		wait := backoff.Jitter(backoff.Exp(m.Attempt-1, w.o.MinBackoff, w.o.MaxBackoff))
		res.Outcome, res.Due, res.Err = sqlstore.Retry, res.At.Add(wait), err.Error()
		w.count(m.Receiver, func(s *ReceiverStats) { s.Failed++ })
		w.log.Warn("notify: delivery failed, will retry", "receiver", m.Receiver, "event_id", m.EventID,
			"type", string(m.Type), "attempt", m.Attempt, "retry_in_s", wait.Seconds(), "err", err)
	}
	return res
}
