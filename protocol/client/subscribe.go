package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/nowserving/nowserving/protocol/wire"
)

// MaxQueued is how many updates a Subscription holds for a consumer that
// does not keep up; past it the client drops them, reconnects and resumes
// from the last update the consumer took.
const MaxQueued = 8192

// Filter says which events a Subscription wants.
type Filter struct {
	// FromVersion is the last version already seen: events after it follow.
	// 0 asks for a SNAPSHOT first.
	FromVersion uint64
	// Services limits events to these service codes; none: all.
	Services []string
	// Counters limits events to these counters; none: all.
	Counters []uint32
	// Site overrides Opts.Site.
	Site string
	// Snapshot asks for a SNAPSHOT before the events even when resuming.
	Snapshot bool
	// Resources limits the SNAPSHOT's resources and the booking events to
	// these resources; none: all (the SNAPSHOT lists a page of them).
	Resources []string
}

// Update is one item of a subscription: an event, or a snapshot of the
// site (first, when asked for, or when the daemon cannot replay the gap).
// Exactly one field is set.
type Update struct {
	// Event is a committed state change.
	Event *wire.Event
	// Snapshot replaces the subscriber's state; events after its version
	// follow.
	Snapshot *wire.Snapshot
}

// Version returns the version of the event or snapshot.
func (u Update) Version() uint64 {
	switch {
	case u.Event != nil:
		return u.Event.Version
	case u.Snapshot != nil:
		return u.Snapshot.Version
	}
	return 0
}

// Subscription delivers a site's events in version order, each once, across
// reconnects.
type Subscription struct {
	c     *Client
	f     Filter
	ch    chan Update
	reqID atomic.Uint32 // request id of the last SUBSCRIBE sent
	wake  chan struct{}
	done  chan struct{}

	mu        sync.Mutex
	queue     []Update
	queued    uint64 // highest version queued
	delivered uint64 // highest version the consumer took
	err       error
	finished  bool
}

// Subscribe asks for events after f.FromVersion (or a snapshot first, when
// 0). Updates arrive on the channel of Updates until ctx ends, Close is
// called on the subscription or the client, or the daemon refuses it for
// good (see Err). One subscription per client at a time.
func (c *Client) Subscribe(ctx context.Context, f Filter) (*Subscription, error) {
	if f.Site == "" {
		f.Site = c.opts.Site
	}
	s := &Subscription{
		c: c, f: f, ch: make(chan Update), wake: make(chan struct{}, 1), done: make(chan struct{}),
		queued: f.FromVersion, delivered: f.FromVersion,
	}
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return nil, fmt.Errorf("client: subscribe: %w", ErrClosed)
	case c.sub != nil:
		c.mu.Unlock()
		return nil, ErrSubscribed
	}
	c.sub = s
	c.mu.Unlock()
	go s.pump()
	if err := c.sendSubscribe(ctx, s, f.Snapshot); err != nil {
		s.finish(err)
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { s.finish(ctx.Err()) })
	go func() { // forget ctx once the subscription ends another way
		<-s.done
		stop()
	}()
	return s, nil
}

// sendSubscribe sends SUBSCRIBE from the last version delivered.
func (c *Client) sendSubscribe(ctx context.Context, s *Subscription, snapshot bool) error {
	id := c.newID()
	s.reqID.Store(id)
	m := &wire.Subscribe{
		Counters: s.f.Counters, Services: s.f.Services, Site: s.f.Site,
		FromVersion: s.resumeFrom(), Snapshot: snapshot, Resources: s.f.Resources,
	}
	_, err := c.roundTrip(ctx, id, m, c.opts.Retries+1)
	return err
}

// resubscribe runs after a reconnect.
func (c *Client) resubscribe(s *Subscription) {
	ctx, cancel := context.WithCancel(s.c.ctx)
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := c.sendSubscribe(ctx, s, false)
	var se *wire.StatusError
	switch {
	case err == nil, ctx.Err() != nil, errors.Is(err, ErrClosed):
	case errors.As(err, &se) && !se.Retryable:
		c.log.Error("subscription refused", "err", err)
		s.finish(err)
	default:
		// The connection went again; the next reconnect resubscribes.
		c.log.Warn("resubscribe failed", "err", err)
	}
}

// resumeFrom returns the version to resume after: the last one queued (the
// queue is kept; after an overflow it was emptied and this is the last
// version the consumer took).
func (s *Subscription) resumeFrom() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queued
}

// Updates returns the channel of updates; it is closed when the
// subscription ends.
func (s *Subscription) Updates() <-chan Update { return s.ch }

// Version returns the version of the last update given to the consumer
// (taken from the channel, or being handed over).
func (s *Subscription) Version() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delivered
}

// Err returns why the subscription ended: nil while it runs or after Close.
func (s *Subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close ends the subscription and closes its channel. The daemon keeps
// sending events on the connection until it closes; they are dropped.
func (s *Subscription) Close() error {
	s.finish(nil)
	return nil
}

func (s *Subscription) finish(err error) {
	s.mu.Lock()
	if s.finished {
		s.mu.Unlock()
		return
	}
	s.finished = true
	if !errors.Is(err, context.Canceled) && !errors.Is(err, ErrClosed) {
		s.err = err
	}
	close(s.done)
	s.mu.Unlock()
	c := s.c
	c.mu.Lock()
	if c.sub == s {
		c.sub = nil
	}
	c.mu.Unlock()
}

// push queues u unless it was seen already. It returns false when the
// queue is full: the queue is dropped and the caller ends the connection so
// that the client resumes from the last update taken.
func (s *Subscription) push(u Update) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return true
	}
	v := u.Version()
	if u.Event != nil && v <= s.queued {
		return true // seen already (a resend after reconnect)
	}
	if len(s.queue) >= MaxQueued {
		s.queue = nil
		s.queued = s.delivered
		return false
	}
	s.queue = append(s.queue, u)
	s.queued = v // a snapshot resets it: events after it follow
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return true
}

// pump moves queued updates to the consumer's channel.
func (s *Subscription) pump() {
	defer close(s.ch)
	for {
		s.mu.Lock()
		var u Update
		have := len(s.queue) > 0
		if have {
			u = s.queue[0]
			s.queue[0] = Update{}
			s.queue = s.queue[1:]
			// u leaves the queue for the consumer: it is the one an
			// overflow resumes after, and what Version reports once the
			// consumer holds it.
			s.delivered = u.Version()
		}
		s.mu.Unlock()
		if !have {
			select {
			case <-s.wake:
				continue
			case <-s.done:
				return
			}
		}
		select {
		case s.ch <- u:
		case <-s.done:
			return
		}
	}
}
