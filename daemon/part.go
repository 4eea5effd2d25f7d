package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"time"

	"github.com/nowserving/nowserving/internal/part"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/queue"
)

// Protocol serves the device protocol on one listener.
type Protocol struct {
	Server   *protocol.Server
	Listener net.Listener
}

// Name names the part.
func (p *Protocol) Name() string { return "protocol" }

// Run serves until Shutdown.
func (p *Protocol) Run(context.Context) error {
	if err := p.Server.Serve(p.Listener); !errors.Is(err, protocol.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops accepting and drains the sessions within ctx.
func (p *Protocol) Shutdown(ctx context.Context) error { return p.Server.Shutdown(ctx) }

// Sweeper expires past days and applies call time-outs every few seconds.
type Sweeper struct {
	eng   *queue.Engine
	every time.Duration
	log   *slog.Logger
	stop  *part.Stop
}

// NewSweeper returns a sweeper of eng running every so often.
func NewSweeper(eng *queue.Engine, every time.Duration, log *slog.Logger) *Sweeper {
	return &Sweeper{eng: eng, every: every, log: log, stop: part.NewStop()}
}

// Name names the part.
func (s *Sweeper) Name() string { return "sweeper" }

// Run sweeps at once, then every so often until Shutdown, ctx ends or
// the engine closes; a failed sweep is logged and tried again next time.
// The first sweep is not put off: it creates the slots of the days that
// opened while the daemon was stopped (a fresh database has none), and
// bookings for them are refused until it has run.
func (s *Sweeper) Run(ctx context.Context) error {
	s.stop.Every(ctx, s.every, func() bool {
		sctx, cancel := context.WithTimeout(ctx, s.every)
		defer cancel()
		n, err := s.eng.Sweep(sctx)
		switch {
		case errors.Is(err, queue.ErrClosed) || errors.Is(err, context.Canceled):
			return false
		case err != nil:
			s.log.Warn("sweep failed", "err", err)
		case n > 0:
			s.log.Info("swept tickets, bookings and slots", "moved", n)
		}
		return true
	})
	return nil
}

// Shutdown stops the sweeps, waiting for one in flight within ctx.
func (s *Sweeper) Shutdown(ctx context.Context) error {
	return s.stop.Shutdown(ctx, "sweeper: stop")
}

// LogClosedServices logs, at INFO, every service its opening hours close
// now, and when it opens next: a site started (or reloaded) outside its
// hours says why its kiosks are refused.
func LogClosedServices(log *slog.Logger, eng *queue.Engine) {
	now := eng.Now()
	for _, s := range eng.Sites() {
		for i := range s.Services {
			sv := &s.Services[i]
			if sv.OpenAt(now, s.Location) {
				continue
			}
			opens := "never (no opening hours match a weekday)"
			if at, ok := sv.NextOpen(now, s.Location); ok {
				opens = at.Format("Mon 2006-01-02 15:04 MST")
			}
			log.Info("service closed by its hours: kiosks are refused until it opens", "site", s.ID, "service", sv.Code, "opens", opens)
		}
	}
}
