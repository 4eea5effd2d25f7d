package part

import (
	"context"
	"errors"
	"testing"
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
