package notify

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nowserving/nowserving/internal/backoff"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

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
