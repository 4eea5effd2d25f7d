package load

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/nowserving/nowserving/internal/backoff"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

// sleep waits about avg (from half to one and a half times it) and
// reports whether ctx is still live.
func sleep(ctx context.Context, avg time.Duration) bool {
	return backoff.Sleep(ctx, time.Duration(float64(avg)*(0.5+rand.Float64()))) == nil
}

// keypad calls, starts and finishes tickets until ctx ends.
func (l *loader) keypad(ctx context.Context, c *client.Client) {
	for ctx.Err() == nil {
		_, err := c.CallNext(ctx, 0)
		switch {
		case err == nil:
			l.st.called.Add(1)
		case ctx.Err() != nil:
			return
		case errors.Is(err, wire.ErrNoTicketWaiting), errors.Is(err, wire.ErrCounterPaused):
			sleep(ctx, 500*time.Millisecond)
			continue
		case errors.Is(err, wire.ErrInvalidTransition):
			// The counter is still handling a ticket from before the run
			// (or from someone else): finish it first.
			if _, err := c.Complete(ctx, 0, ""); err != nil {
				_, _ = c.Start(ctx, 0, "")
				_, _ = c.Complete(ctx, 0, "")
			}
			continue
		default:
			l.fail(err)
			sleep(ctx, time.Second)
			continue
		}
		if !sleep(ctx, l.o.CallGap) || !l.serve(ctx, c) {
			return
		}
	}
}

// serve handles the ticket the keypad called: a no-show now and then,
// else start and, after about the service time, done. It reports false
// when ctx ended.
func (l *loader) serve(ctx context.Context, c *client.Client) bool {
	if rand.Float64() < l.o.NoShow {
		if _, err := c.NoShow(ctx, 0, ""); err == nil {
			l.st.noShows.Add(1)
		} else if ctx.Err() == nil {
			l.fail(err)
		}
		return true
	}
	if _, err := c.Start(ctx, 0, ""); err != nil {
		if ctx.Err() == nil {
			l.fail(err)
		}
		return true
	}
	if !sleep(ctx, l.o.ServiceTime) {
		// Leave no ticket half-served at the end of a run.
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, _ = c.Complete(cctx, 0, "")
		cancel()
		return false
	}
	if _, err := c.Complete(ctx, 0, ""); err == nil {
		l.st.served.Add(1)
	} else if ctx.Err() == nil {
		l.fail(err)
	}
	return true
}
