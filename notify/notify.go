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
	"time"

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
	// Deliverer is a *Webhook, a *Command or an *Email.
	Deliverer Deliverer
	// NoEvents: it takes no events (whatever Events says), only the
	// scheduled reports that name it.
	NoEvents bool
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

// orDefault sets *v to d unless it is positive.
func orDefault[T int | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

func defaults(o *Opts) {
	orDefault(&o.Attempts, DefaultAttempts)
	orDefault(&o.Batch, DefaultBatch)
	orDefault(&o.Concurrency, DefaultConcurrency)
	orDefault(&o.MinBackoff, DefaultMinBackoff)
	orDefault(&o.MaxBackoff, DefaultMaxBackoff)
	orDefault(&o.Poll, DefaultPoll)
	orDefault(&o.Timeout, DefaultTimeout)
	orDefault(&o.StatusEvery, 5*o.Poll)
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
		if !r.NoEvents {
			out = append(out, sqlstore.OutboxRoute{Receiver: r.Name, Match: Matcher(r.Events)})
		}
	}
	return out
}
