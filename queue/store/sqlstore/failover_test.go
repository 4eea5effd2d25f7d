package sqlstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// TestHealth: failures mark the store down from the first of them, a
// success marks it up and, after a drop, counts one failover of the drop's
// kind; refusals and callers that left change nothing; a read does not end
// a read-only outage (a standby answers reads).
func TestHealth(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	readOnly := fmt.Errorf("postgres: commit: %w", queue.ErrReadOnly)
	gone := fmt.Errorf("mysql: begin: %w", queue.ErrNotAnswering)
	full := fmt.Errorf("mysql: begin: %w: too many connections", queue.ErrUnavailable)
	type step struct {
		err   error
		write bool
		want  Health
	}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"read-only, then a write succeeds", []step{
			{readOnly, true, Health{Down: at(0), Why: readOnly}},
			{nil, false, Health{Down: at(0), Why: readOnly}},
			{nil, true, Health{ReadOnly: 1}},
			{nil, true, Health{ReadOnly: 1}},
		}},
		{"not answering, then a read succeeds", []step{
			{gone, true, Health{Down: at(0), Why: gone}},
			{context.DeadlineExceeded, false, Health{Down: at(0), Why: context.DeadlineExceeded}},
			{nil, false, Health{NotAnswering: 1}},
		}},
		{"unavailable without a drop counts no failover", []step{
			{full, true, Health{Down: at(0), Why: full}},
			{queue.ErrServiceFull, true, Health{}},
		}},
		{"a caller that left says nothing", []step{
			{context.Canceled, true, Health{}},
			{gone, true, Health{Down: at(1), Why: gone}},
			{context.Canceled, true, Health{Down: at(1), Why: gone}},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var hl health
			for i, st := range c.steps {
				hl.note(st.err, st.write, at(i))
				if got := hl.h; got != st.want {
					t.Errorf("after step %d (%v): %+v, want %+v", i, st.err, got, st.want)
				}
			}
		})
	}
}

// TestConnectTimeoutFor: a third of the store deadline, at most 1 s.
func TestConnectTimeoutFor(t *testing.T) {
	for _, c := range []struct{ timeout, want time.Duration }{
		{3 * time.Second, time.Second},
		{10 * time.Second, time.Second},
		{1500 * time.Millisecond, 500 * time.Millisecond},
		{0, DefaultConnectTimeout},
	} {
		if got := ConnectTimeoutFor(c.timeout); got != c.want {
			t.Errorf("ConnectTimeoutFor(%s) = %s, want %s", c.timeout, got, c.want)
		}
	}
}
