package queue

import (
	"errors"
	"strings"
	"testing"
)

// TestMachineExhaustive checks every (status, action) pair against the
// table of DESIGN §1, written out here independently.
func TestMachineExhaustive(t *testing.T) {
	want := map[string]Status{
		"WAITING/call": StatusCalled, "WAITING/cancel": StatusCancelled, "WAITING/expire": StatusExpired,
		"CALLED/recall": StatusCalled, "CALLED/start": StatusServing, "CALLED/no-show": StatusNoShow,
		"CALLED/transfer": StatusWaiting, "CALLED/cancel": StatusCancelled, "CALLED/expire": StatusExpired,
		"CALLED/time out to no-show": StatusNoShow, "CALLED/time out to waiting": StatusWaiting,
		"SERVING/complete": StatusDone, "SERVING/transfer": StatusWaiting, "SERVING/expire": StatusExpired,
		"NO_SHOW/re-enter": StatusWaiting,
	}
	allowed := 0
	for _, s := range AllStatuses {
		for _, a := range AllActions {
			key := string(s) + "/" + string(a)
			got, err := Next("A001", s, a)
			w, ok := want[key]
			switch {
			case ok && err != nil:
				t.Errorf("%s: refused (%v), want %s", key, err, w)
			case ok && got != w:
				t.Errorf("%s: got %s, want %s", key, got, w)
			case !ok && err == nil:
				t.Errorf("%s: allowed to %s, want refused", key, got)
			case !ok:
				var te *TransitionError
				if !errors.As(err, &te) || !errors.Is(err, ErrInvalidTransition) {
					t.Errorf("%s: error %v is not a TransitionError", key, err)
				}
				msg := err.Error()
				if !strings.Contains(msg, "A001") || !strings.Contains(msg, string(s)) || !strings.Contains(msg, string(a)) {
					t.Errorf("%s: error %q must name ticket, state and action", key, msg)
				}
			}
			if ok {
				allowed++
			}
		}
	}
	if allowed != len(want) {
		t.Errorf("table has %d allowed pairs checked, want %d", allowed, len(want))
	}
}

func TestTerminal(t *testing.T) {
	for _, s := range AllStatuses {
		want := s == StatusDone || s == StatusNoShow || s == StatusCancelled || s == StatusExpired
		if s.Terminal() != want {
			t.Errorf("%s.Terminal() = %v, want %v", s, s.Terminal(), want)
		}
	}
}
