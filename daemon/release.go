package daemon

import (
	"context"
	"log/slog"
	"time"

	"github.com/nowserving/nowserving/internal/part"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// Releaser lets devices go when the store has been unreachable too long:
// once no transaction has succeeded for After since the first failure (the
// store unavailable, read-only or timing out), it closes every device
// session with protocol.StoreDown (ERROR 0x41 with request id 0), so
// devices that know another daemon move there instead of being answered
// 0x41 here until the database comes back. It does so once per outage:
// devices that come back during the same outage (every daemon's store is
// down, or this daemon is their only one) are served, 0x41 and all, and
// not sent round again.
type Releaser struct {
	health  func() sqlstore.Health
	release func() int // closes the sessions, returns how many
	after   time.Duration
	log     *slog.Logger
	stop    *part.Stop
	done    time.Time // the Down of the outage already released
}

// NewReleaser returns the releaser of srv's sessions when health (the
// store's) has been down for after.
func NewReleaser(health func() sqlstore.Health, srv *protocol.Server, after time.Duration, log *slog.Logger) *Releaser {
	return &Releaser{
		health:  health,
		release: func() int { return srv.Release(protocol.StoreDown, "store down") },
		after:   after, log: log, stop: part.NewStop(),
	}
}

// Name names the part.
func (r *Releaser) Name() string { return "releaser" }

// releaseTick is how often Run looks at the store's health, as a share of
// After: detection adds at most a quarter of it.
const releaseTick = 4

// Run watches the store's health until Shutdown or ctx ends.
func (r *Releaser) Run(ctx context.Context) error {
	defer r.stop.Ended()
	tk := time.NewTicker(max(r.after/releaseTick, 10*time.Millisecond))
	defer tk.Stop()
	for {
		select {
		case <-r.stop.Requested():
			return nil
		case <-ctx.Done():
			return nil
		case now := <-tk.C:
			r.check(now)
		}
	}
}

// check releases the sessions if the store has been down for After in an
// outage not released yet.
func (r *Releaser) check(now time.Time) {
	h := r.health()
	if h.Down.IsZero() || now.Sub(h.Down) < r.after || h.Down.Equal(r.done) {
		return
	}
	r.done = h.Down
	n := r.release()
	r.log.Warn("store unreachable: closed the device sessions so devices move to another daemon",
		"down_s", now.Sub(h.Down).Seconds(), "sessions", n, "err", h.Why)
}

// Shutdown stops watching.
func (r *Releaser) Shutdown(ctx context.Context) error {
	return r.stop.Shutdown(ctx, "releaser: stop")
}
