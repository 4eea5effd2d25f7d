package booking

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// ErrOverloaded is the error of a request the front sheds to keep the
// store for the rest: the kiosks and counters of every site commit in the
// same transactions as the bookings, and a rush of reads and bookings must
// not starve them. It is answered 429 with Retry-After (never 503: the
// daemon is well, only busy with appointments). Reads are shed first: a
// slot list the store must be read for is refused as soon as MaxReads are
// being read, and given up when the store has not answered it within the
// ReadBudget; a booking waits for one of MaxBookings places at the engine
// behind at most BookingQueue others, and only then is refused.
var ErrOverloaded = errors.New("booking: too many appointment requests at once")

// OverloadError is ErrOverloaded with the wait to suggest.
type OverloadError struct {
	What       string // "slot reads", "bookings"
	RetryAfter time.Duration
}

// Error says what was shed.
func (e *OverloadError) Error() string {
	return fmt.Sprintf("booking: too many %s at once: retry after %ds", e.What, int64(e.RetryAfter.Seconds()))
}

// Is makes OverloadError match ErrOverloaded.
func (e *OverloadError) Is(target error) bool { return target == ErrOverloaded }

// Defaults of Opts.MaxReads, MaxBookings and BookingQueue: a store read
// of a slot list takes a few milliseconds, a booking a transaction's
// share; the committer's batch is 64 requests, so bookings take at most a
// quarter of one (DESIGN §5a).
const (
	DefaultMaxReads     = 8
	DefaultMaxBookings  = 16
	DefaultBookingQueue = 64
	// DefaultReadBudget is a third of the default store timeout: a read
	// is given up well before a kiosk's request would be.
	DefaultReadBudget = time.Second
)

// shedRetry is the Retry-After of a shed request.
const shedRetry = time.Second

// share lets at most cap(permits) requests through at a time and at most
// queue more wait for a permit; past that a request is refused.
type share struct {
	what    string
	permits chan struct{}
	queue   int64
	waiting atomic.Int64
	shed    atomic.Uint64
}

func newShare(what string, n, queue int) *share {
	return &share{what: what, permits: make(chan struct{}, n), queue: int64(queue)}
}

// enter takes a permit, waiting for one if fewer than queue wait already,
// and returns the function that gives it back.
func (s *share) enter(ctx context.Context) (func(), error) {
	return s.enterWithin(ctx, s.queue, 0, s.what)
}

// enterWithin is enter behind at most queue others (of every queue of the
// share), and waiting at most wait when it is not 0, refused as too many
// what.
func (s *share) enterWithin(ctx context.Context, queue int64, wait time.Duration, what string) (func(), error) {
	select {
	case s.permits <- struct{}{}:
		return s.leave, nil
	default:
	}
	if s.waiting.Add(1) > queue {
		s.waiting.Add(-1)
		return nil, s.refuse(what)
	}
	defer s.waiting.Add(-1)
	var waited <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		waited = t.C
	}
	select {
	case s.permits <- struct{}{}:
		return s.leave, nil
	case <-waited:
		return nil, s.refuse(what)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// refuse counts a request shed and returns its refusal.
func (s *share) refuse(what string) error {
	s.shed.Add(1)
	return &OverloadError{What: what, RetryAfter: shedRetry}
}

func (s *share) leave() { <-s.permits }
