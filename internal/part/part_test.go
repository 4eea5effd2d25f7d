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

// Every runs a pass at once and goes on until a pass reports false, then
// marks the loop ended; a stop requested between passes ends it too.
func TestEvery(t *testing.T) {
	s := NewStop()
	n := 0
	s.Every(context.Background(), time.Millisecond, func() bool { n++; return n < 3 })
	if n != 3 {
		t.Errorf("%d passes, want 3 (the third reports false)", n)
	}
	select {
	case <-s.Done():
	default:
		t.Error("Done not closed after Every returned")
	}
	s = NewStop()
	s.Request()
	n = 0
	s.Every(context.Background(), time.Hour, func() bool { n++; return true })
	if n != 1 {
		t.Errorf("%d passes with the stop requested, want the first alone", n)
	}
}
