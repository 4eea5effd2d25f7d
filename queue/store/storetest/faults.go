package storetest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nowserving/nowserving/internal/backoff"
	"github.com/nowserving/nowserving/internal/testkit/record"
	"github.com/nowserving/nowserving/queue"
)

// FaultStore wraps a queue.Store and, when armed, makes one statement of
// the next transaction fail the way a database fails it on its own: the
// transaction is gone (a deadlock, a certification conflict, a killed query,
// a lost connection), so from that statement on every call of it fails
// too, and the real transaction underneath is rolled back whatever the
// caller returns. It records what a caller must never do after such an
// error: run another statement, or return nil (which would commit). The
// retries of the failed transaction run clean (a counting Fault counts and
// hooks them too).
type FaultStore struct {
	queue.Store

	mu         sync.Mutex
	slow       time.Duration
	hold, held chan struct{}
	plan       *Fault
	violations record.List[string]
}

// AtCommit is Fault.At for a failure of COMMIT itself.
const AtCommit = -1

// Fault is one planned failure.
type Fault struct {
	// At is the 0-based position of the Tx call that fails, or AtCommit.
	At int
	// Err is what the database reported; it wraps queue.ErrAborted or
	// queue.ErrUnavailable.
	Err error
	// Landed, with AtCommit, lets the commit land and then reports Err,
	// as a connection lost while COMMIT's answer was on its way.
	Landed bool
	// Count only counts the calls of the transaction (in Calls).
	Count bool
	// Before, when set, runs before each call of the transaction is passed
	// on, with the call's position and method name: a test makes the real
	// database fail there (kill the connection, take a lock).
	Before func(n int, call string)

	// Calls is how many Tx calls the transaction made up to the failure
	// (all of them with Count); Fired tells whether the failure happened.
	Calls int
	Fired bool
}

// NewFaultStore wraps s.
func NewFaultStore(s queue.Store) *FaultStore { return &FaultStore{Store: s} }

// Hold makes the next Update wait until release is called; the returned
// channel is closed once that Update waits. The held transaction runs
// clean, and the fault armed with Arm applies to the one after it.
func (s *FaultStore) Hold() (waiting <-chan struct{}, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold, s.held = make(chan struct{}), make(chan struct{})
	hold := s.hold
	return s.held, sync.OnceFunc(func() { close(hold) })
}

// Slow makes every transaction take at least d more (0: none).
func (s *FaultStore) Slow(d time.Duration) {
	s.mu.Lock()
	s.slow = d
	s.mu.Unlock()
}

// Arm plans f for the first attempt of the next Update (after a held one).
func (s *FaultStore) Arm(f *Fault) {
	s.mu.Lock()
	s.plan = f
	s.mu.Unlock()
}

// Violations returns what callers did after a failure and clears the list.
func (s *FaultStore) Violations() []string { return s.violations.Take() }

func (s *FaultStore) violate(format string, args ...any) {
	s.violations.Add(fmt.Sprintf(format, args...))
}

// View runs fn through the wrapped store, slowed as set.
func (s *FaultStore) View(ctx context.Context, fn func(ctx context.Context, tx queue.Tx) error) error {
	s.mu.Lock()
	slow := s.slow
	s.mu.Unlock()
	if err := backoff.Sleep(ctx, slow); err != nil {
		return err
	}
	return s.Store.View(ctx, fn)
}

// Update runs fn through the wrapped store, failing it as planned.
func (s *FaultStore) Update(ctx context.Context, fn func(ctx context.Context, tx queue.Tx) error) error {
	s.mu.Lock()
	hold, held, slow := s.hold, s.held, s.slow
	var p *Fault
	if hold != nil {
		s.hold, s.held = nil, nil
	} else {
		p, s.plan = s.plan, nil
	}
	s.mu.Unlock()
	if hold != nil {
		close(held)
		<-hold
	}
	if slow > 0 {
		inner := fn
		fn = func(ctx context.Context, tx queue.Tx) error {
			if err := backoff.Sleep(ctx, slow); err != nil {
				return err
			}
			return inner(ctx, tx)
		}
	}
	if p == nil {
		return s.Store.Update(ctx, fn)
	}
	first := true
	err := s.Store.Update(ctx, func(ctx context.Context, tx queue.Tx) error {
		if !first && !p.Count {
			return fn(ctx, tx) // the retries of a failed transaction run clean
		}
		first = false
		ft := &faultTx{Tx: tx, p: p}
		err := fn(ctx, ft)
		switch {
		case p.Fired:
			if err == nil {
				s.violate("the transaction returned nil after %s failed with %v: it would have committed", ft.failed, p.Err)
			}
			if ft.after != nil {
				s.violate("%d statements ran after %s failed with %v: %v", len(ft.after), ft.failed, p.Err, ft.after)
			}
			return fmt.Errorf("storetest: %s: %w", ft.failed, p.Err) // the database rolled it all back
		case p.At == AtCommit && !p.Count && !p.Landed && err == nil:
			p.Fired = true
			return fmt.Errorf("storetest: commit: %w", p.Err)
		}
		return err
	})
	if err == nil && p.At == AtCommit && p.Landed && !p.Count && !first {
		p.Fired = true
		return fmt.Errorf("storetest: commit landed, then: %w", p.Err)
	}
	return err
}

// faultTx counts the calls of one transaction and fails one of them.
type faultTx struct {
	queue.Tx
	p      *Fault
	failed string   // the call that failed
	after  []string // calls made after it
}

func (t *faultTx) step(name string) error {
	if t.p.Fired {
		t.after = append(t.after, name)
		return fmt.Errorf("storetest: %s after the transaction ended: %w", name, t.p.Err)
	}
	n := t.p.Calls
	t.p.Calls++
	if t.p.Before != nil {
		t.p.Before(n, name)
	}
	if !t.p.Count && n == t.p.At {
		t.p.Fired = true
		t.failed = fmt.Sprintf("call %d (%s)", n, name)
		return fmt.Errorf("storetest: %s: %w", t.failed, t.p.Err)
	}
	return nil
}

// ask is a call of the wrapped transaction's method op, f, with a,
// unless the plan fails op.
func ask[A, R any](t *faultTx, op string, f func(context.Context, A) (R, error), ctx context.Context, a A) (R, error) {
	if err := t.step(op); err != nil {
		var zero R
		return zero, err
	}
	return f(ctx, a)
}

// tell is ask for a method that returns only an error.
func tell[A any](t *faultTx, op string, f func(context.Context, A) error, ctx context.Context, a A) error {
	if err := t.step(op); err != nil {
		return err
	}
	return f(ctx, a)
}

func (t *faultTx) Savepoint(ctx context.Context, name string) error {
	return tell(t, "Savepoint", t.Tx.Savepoint, ctx, name)
}

func (t *faultTx) RollbackTo(ctx context.Context, name string) error {
	return tell(t, "RollbackTo", t.Tx.RollbackTo, ctx, name)
}

func (t *faultTx) Release(ctx context.Context, name string) error {
	return tell(t, "Release", t.Tx.Release, ctx, name)
}

func (t *faultTx) LookupRequests(ctx context.Context, keys []queue.RequestKey) (map[queue.RequestKey]queue.StoredRequest, error) {
	return ask(t, "LookupRequests", t.Tx.LookupRequests, ctx, keys)
}

func (t *faultTx) SaveRequests(ctx context.Context, reqs []queue.SavedRequest) error {
	return tell(t, "SaveRequests", t.Tx.SaveRequests, ctx, reqs)
}

func (t *faultTx) NextSeq(ctx context.Context, k queue.DayKey, n int) (int, error) {
	if err := t.step("NextSeq"); err != nil {
		return 0, err
	}
	return t.Tx.NextSeq(ctx, k, n)
}

func (t *faultTx) NextSeqIDs(ctx context.Context, k queue.DayKey, n, ids int) (int, []int64, error) {
	if err := t.step("NextSeqIDs"); err != nil {
		return 0, nil, err
	}
	return t.Tx.NextSeqIDs(ctx, k, n, ids)
}

func (t *faultTx) GiveBackSeq(ctx context.Context, k queue.DayKey, n int) error {
	if err := t.step("GiveBackSeq"); err != nil {
		return err
	}
	return t.Tx.GiveBackSeq(ctx, k, n)
}

func (t *faultTx) InsertTicket(ctx context.Context, tk *queue.Ticket) error {
	return tell(t, "InsertTicket", t.Tx.InsertTicket, ctx, tk)
}

func (t *faultTx) TicketIDs(ctx context.Context, n int) ([]int64, error) {
	return ask(t, "TicketIDs", t.Tx.TicketIDs, ctx, n)
}

func (t *faultTx) InsertTickets(ctx context.Context, ts []*queue.Ticket) error {
	return tell(t, "InsertTickets", t.Tx.InsertTickets, ctx, ts)
}

func (t *faultTx) UpdateTicket(ctx context.Context, tk *queue.Ticket, from queue.Status) error {
	if err := t.step("UpdateTicket"); err != nil {
		return err
	}
	return t.Tx.UpdateTicket(ctx, tk, from)
}

func (t *faultTx) Ticket(ctx context.Context, id int64) (*queue.Ticket, error) {
	return ask(t, "Ticket", t.Tx.Ticket, ctx, id)
}

func (t *faultTx) TicketByNumber(ctx context.Context, k queue.NumberKey) (*queue.Ticket, error) {
	return ask(t, "TicketByNumber", t.Tx.TicketByNumber, ctx, k)
}

func (t *faultTx) Head(ctx context.Context, q queue.HeadQuery) (*queue.Ticket, error) {
	return ask(t, "Head", t.Tx.Head, ctx, q)
}

func (t *faultTx) Waiting(ctx context.Context, q queue.WaitingQuery) ([]queue.Ticket, error) {
	return ask(t, "Waiting", t.Tx.Waiting, ctx, q)
}

func (t *faultTx) Ahead(ctx context.Context, tk *queue.Ticket) (int, error) {
	return ask(t, "Ahead", t.Tx.Ahead, ctx, tk)
}

func (t *faultTx) SetSortKey(ctx context.Context, id, key int64) error {
	if err := t.step("SetSortKey"); err != nil {
		return err
	}
	return t.Tx.SetSortKey(ctx, id, key)
}

func (t *faultTx) Find(ctx context.Context, f queue.Filter) ([]queue.Ticket, error) {
	return ask(t, "Find", t.Tx.Find, ctx, f)
}

func (t *faultTx) Stats(ctx context.Context, d queue.SiteDay) ([]queue.StatRow, error) {
	return ask(t, "Stats", t.Tx.Stats, ctx, d)
}

func (t *faultTx) Counter(ctx context.Context, k queue.CounterKey) (queue.CounterState, error) {
	return ask(t, "Counter", t.Tx.Counter, ctx, k)
}

func (t *faultTx) PutCounter(ctx context.Context, c queue.CounterState) error {
	return tell(t, "PutCounter", t.Tx.PutCounter, ctx, c)
}

func (t *faultTx) Counters(ctx context.Context, site string) ([]queue.CounterState, error) {
	return ask(t, "Counters", t.Tx.Counters, ctx, site)
}

func (t *faultTx) Streak(ctx context.Context, k queue.ServiceKey) (int, error) {
	return ask(t, "Streak", t.Tx.Streak, ctx, k)
}

func (t *faultTx) SetStreak(ctx context.Context, k queue.ServiceKey, n int) error {
	if err := t.step("SetStreak"); err != nil {
		return err
	}
	return t.Tx.SetStreak(ctx, k, n)
}

func (t *faultTx) AppendEvents(ctx context.Context, site string, evs []*queue.Event) error {
	if err := t.step("AppendEvents"); err != nil {
		return err
	}
	return t.Tx.AppendEvents(ctx, site, evs)
}

func (t *faultTx) Events(ctx context.Context, q queue.EventsQuery) ([]queue.Event, error) {
	return ask(t, "Events", t.Tx.Events, ctx, q)
}

func (t *faultTx) LastVersion(ctx context.Context, site string) (int64, error) {
	return ask(t, "LastVersion", t.Tx.LastVersion, ctx, site)
}

func (t *faultTx) LastVersions(ctx context.Context) (map[string]int64, error) {
	if err := t.step("LastVersions"); err != nil {
		return nil, err
	}
	return t.Tx.LastVersions(ctx)
}

func (t *faultTx) LockSites(ctx context.Context, sites []string) error {
	return tell(t, "LockSites", t.Tx.LockSites, ctx, sites)
}
