package part

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A loop on Stop's Context ends on Request; Shutdown then returns nil.
func TestStopEndsLoop(t *testing.T) {
	s := NewStop()
	ctx, cancel := s.Context(context.Background())
	go func() {
		defer s.Ended()
		defer cancel()
		<-ctx.Done()
	}()
	if err := s.Shutdown(context.Background(), "test: shutdown"); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	select {
	case <-s.Requested():
	default:
		t.Error("Requested not closed after Shutdown")
	}
	if err := s.Shutdown(context.Background(), "test: shutdown"); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}

// Shutdown of a loop that does not end returns ctx's error behind the
// action.
func TestStopShutdownGivesUp(t *testing.T) {
	s := NewStop()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Shutdown(ctx, "test: shutdown")
	if !errors.Is(err, context.Canceled) || err.Error() != "test: shutdown: context canceled" {
		t.Errorf("Shutdown = %v, want test: shutdown: context canceled", err)
	}
}

// The loop's context ends with its parent too, without a stop request.
func TestStopContextFollowsParent(t *testing.T) {
	s := NewStop()
	parent, cancelParent := context.WithCancel(context.Background())
	ctx, cancel := s.Context(parent)
	defer cancel()
	cancelParent()
	<-ctx.Done()
	select {
	case <-s.Requested():
		t.Error("Requested closed by the parent's end")
	default:
	}
}

// Every runs its pass at once and again at each interval, ends when the
// pass reports false, and marks the loop ended; a stop request ends it
// too, and cancels the pass's context.
func TestEvery(t *testing.T) {
	s := NewStop()
	passes := 0
	s.Every(context.Background(), time.Millisecond, func(context.Context) bool {
		passes++
		return passes < 3
	})
	if passes != 3 {
		t.Errorf("passes = %d, want 3", passes)
	}
	select {
	case <-s.Done():
	default:
		t.Error("Done not closed after Every returned")
	}

	s = NewStop()
	go s.Every(context.Background(), time.Hour, func(ctx context.Context) bool {
		s.Request()
		<-ctx.Done() // the request cancels the pass in flight
		return true
	})
	if err := s.Shutdown(context.Background(), "test: shutdown"); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}
