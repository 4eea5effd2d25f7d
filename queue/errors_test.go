package queue

import (
	"errors"
	"fmt"
	"testing"
)

func TestIsRefusal(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{ErrServiceFull, true},
		{fmt.Errorf("%w: A full at 30", ErrServiceFull), true},
		{&TransitionError{Number: "A001", Status: StatusDone, Action: ActCall}, true},
		{fmt.Errorf("queue: call: %w", &TransitionError{Number: "A001"}), true},
		{ErrBadRequest, true},
		{ErrKeyReused, true},
		{ErrAborted, false},
		{ErrConflict, false},
		{ErrUnavailable, false},
		{ErrDuplicate, false},
		{ErrClosed, false},
		{errors.New("queue: unknown service"), false}, // same text, not the sentinel
		{nil, false},
	}
	for _, c := range cases {
		if got := IsRefusal(c.err); got != c.want {
			t.Errorf("IsRefusal(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	if !errors.Is(fmt.Errorf("x: %w", &TransitionError{}), ErrInvalidTransition) {
		t.Error("a TransitionError no longer matches ErrInvalidTransition")
	}
}
