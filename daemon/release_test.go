package daemon

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// TestReleaserOncePerOutage: the sessions are closed once the store has
// been down for After, once per outage; a store that answers, or has been
// down for less, keeps them.
func TestReleaserOncePerOutage(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var h sqlstore.Health
	released := 0
	r := &Releaser{
		health:  func() sqlstore.Health { return h },
		release: func() int { released++; return 7 },
		after:   3 * time.Second, log: slog.New(slog.DiscardHandler),
	}
	why := fmt.Errorf("mysql: begin: %w", queue.ErrNotAnswering)
	for _, st := range []struct {
		name string
		down time.Time
		now  time.Time
		want int // releases so far
	}{
		{"store answers", time.Time{}, t0, 0},
		{"down 2.9 s", t0, t0.Add(2900 * time.Millisecond), 0},
		{"down 3 s", t0, t0.Add(3 * time.Second), 1},
		{"same outage later", t0, t0.Add(10 * time.Second), 1},
		{"back up", time.Time{}, t0.Add(11 * time.Second), 1},
		{"next outage, 1 s", t0.Add(20 * time.Second), t0.Add(21 * time.Second), 1},
		{"next outage, 3 s", t0.Add(20 * time.Second), t0.Add(23 * time.Second), 2},
	} {
		h = sqlstore.Health{Down: st.down}
		if !st.down.IsZero() {
			h.Why = why
		}
		r.check(st.now)
		if released != st.want {
			t.Errorf("%s: %d releases, want %d", st.name, released, st.want)
		}
	}
}
