package queue

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
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

// TestComeBack: an early check-in's refusal gives the time alone on the
// day of the refusal, and the date with it on any other day (a patient a
// day early must not come back at 09:00 today).
func TestComeBack(t *testing.T) {
	sh := time.FixedZone("CST", 8*3600)
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, sh)
	for _, c := range []struct {
		now  time.Time
		want string
	}{
		{time.Date(2026, 12, 2, 8, 0, 0, 0, sh), "09:00"},
		{time.Date(2026, 12, 1, 8, 0, 0, 0, sh), "2026-12-02 09:00"},
		{time.Date(2026, 12, 1, 23, 30, 0, 0, time.UTC), "09:00"}, // 07:30 on the 2nd in the site's zone
		{time.Time{}, "09:00"},
	} {
		e := &CheckInEarlyError{Code: "ABCD2345", At: at, Now: c.now}
		if got := e.ComeBack(); got != c.want {
			t.Errorf("at %s: ComeBack %q, want %q", c.now, got, c.want)
		}
		if !strings.HasSuffix(e.Error(), "come back at "+c.want) {
			t.Errorf("at %s: %q", c.now, e.Error())
		}
	}
}
