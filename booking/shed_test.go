package booking

import (
	"errors"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
)

// TestShare: a share lets its permits through, queues that many more
// requests, refuses the next with ErrOverloaded (Retry-After 1 s) and lets
// a queued one through when a permit is given back; a share without a
// queue (the slot reads) refuses at once.
func TestShare(t *testing.T) {
	ctx := t.Context()
	s := newShare("bookings", 2, 1)
	first, err := s.enter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.enter(ctx); err != nil {
		t.Fatal(err)
	}
	queued := make(chan error, 1)
	go func() {
		leave, err := s.enter(ctx)
		if err == nil {
			leave()
		}
		queued <- err
	}()
	poll.Until(t, "a booking waits", func() bool { return s.waiting.Load() == 1 })
	_, err = s.enter(ctx)
	var oe *OverloadError
	if !errors.Is(err, ErrOverloaded) || !errors.As(err, &oe) || oe.RetryAfter != time.Second || oe.What != "bookings" {
		t.Fatalf("past permits and queue: %v, want ErrOverloaded retry after 1s", err)
	}
	first()
	if err := <-queued; err != nil {
		t.Errorf("the queued booking: %v, want it through once a permit is back", err)
	}
	if s.shed.Load() != 1 {
		t.Errorf("shed %d, want 1", s.shed.Load())
	}

	reads := newShare("slot reads", 1, 0)
	if _, err := reads.enter(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := reads.enter(ctx); !errors.Is(err, ErrOverloaded) {
		t.Errorf("a second read of a share of one: %v, want ErrOverloaded at once", err)
	}
}
