// Package follow is the one way to follow a site's events: every reader of
// the daemon (device fan-out, keypad answers, metrics, LED boards and
// voice, booking caches, web streams) takes its updates from a Site.
//
// A Site owns the whole cycle: the first snapshot, the subscription from
// its version, the gap when the reader falls too far behind the feed
// (queue.ErrGapTooLarge, handled here and nowhere else), the fresh
// snapshot and the events after it, the back-off after a failed read and
// the end when the engine closes or the reader's context ends. A reader
// that joins far behind gets the site's state first and then the tail,
// never a replay of the day.
package follow

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/nowserving/nowserving/internal/backoff"
	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/queue"
)

// Engine is what a Site reads; *queue.Engine fits.
type Engine interface {
	Snapshot(ctx context.Context, site string) (queue.Snapshot, error)
	Subscribe(site string, after int64) (*queue.Subscription, error)
	Events(ctx context.Context, site string, after int64, limit int) ([]queue.Event, error)
}

var _ Engine = (*queue.Engine)(nil)

// Opts says how a Site starts and recovers.
type Opts struct {
	// Resume starts after version After, which the reader already has:
	// its first update is the events after it (or a snapshot when it is
	// too far behind). Without Resume the first update is a snapshot.
	Resume bool
	After  int64
	// MaxBehind, when positive, is the most events the reader takes as
	// events: further behind, it gets a snapshot instead. The engine's own
	// bound (queue.Opts.MaxReplay) holds anyway.
	MaxBehind int
	// Recent is how many of the events up to a snapshot's version come
	// with it (Update.Recent), for a reader that shows the last events of
	// the day; 0: none.
	Recent int
	// Quiet marks the subscription quiet (queue.Subscription.Quiet).
	Quiet bool
	// MinRetry and MaxRetry bound the back-off between failed reads in
	// Next (defaults: 100 ms and 5 s).
	MinRetry, MaxRetry time.Duration
	// Log receives a warning per failed read that Next retries, and a
	// note per gap; Who names the reader in them. Default: discard.
	Log *slog.Logger
	Who string
}

// DefaultOpts are the retry bounds a zero Opts gets.
func DefaultOpts() Opts {
	return Opts{MinRetry: 100 * time.Millisecond, MaxRetry: 5 * time.Second}
}

// Update is one step of a site for its reader.
type Update struct {
	// Snapshot, when set, is the site's state at Snapshot.Version: the
	// reader replaces what it knows with it. The first update of a Site
	// that does not resume is one, and so is the update after a gap.
	Snapshot *queue.Snapshot
	// Recent are, with a snapshot, the last Opts.Recent events up to its
	// version, oldest first (already counted by the snapshot).
	Recent []queue.Event
	// Events are the events after the snapshot or the previous update,
	// in version order.
	Events []queue.Event
}

// Version is the version the reader is at after u, 0 when u carries
// nothing.
func (u *Update) Version() int64 {
	if n := len(u.Events); n > 0 {
		return u.Events[n-1].Version
	}
	if u.Snapshot != nil {
		return u.Snapshot.Version
	}
	return 0
}

// Site follows one site's events for one reader. It is not safe for
// concurrent use: one reader, one Site.
type Site struct {
	eng  Engine
	site string
	o    Opts

	sub   *queue.Subscription
	fresh bool // the next update is a snapshot
	fails int  // consecutive failed reads, for the back-off
}

// New follows site on eng. Nothing is read until the first Next or Poll.
func New(eng Engine, site string, o Opts) *Site {
	d := DefaultOpts()
	o.MinRetry = positive.Or(o.MinRetry, d.MinRetry)
	o.MaxRetry = positive.Or(o.MaxRetry, d.MaxRetry)
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Who == "" {
		o.Who = "follower"
	}
	return &Site{eng: eng, site: site, o: o, fresh: !o.Resume}
}

// Site is the site's id.
func (f *Site) Site() string { return f.site }

// Version is the last version delivered (of an event or a snapshot).
func (f *Site) Version() int64 {
	if f.sub == nil {
		return f.o.After
	}
	return f.sub.Version()
}

// Refresh makes the next update a fresh snapshot, for a reader whose
// picture went stale without a gap (a new service day, say).
func (f *Site) Refresh() { f.fresh = true }

// Next blocks until there is an update: the events committed after the
// last one delivered, or a snapshot. A failed read is logged and retried
// after a back-off; Next returns an error only when ctx ends
// (ctx.Err()), the engine closes (queue.ErrClosed) or the site cannot be
// subscribed to (it is not configured): the reader is done.
func (f *Site) Next(ctx context.Context) (Update, error) {
	for {
		u, err := f.step(ctx, true)
		if err == nil {
			f.fails = 0
			return u, nil
		}
		if Done(ctx, err) || errors.Is(err, queue.ErrUnknownSite) {
			return Update{}, err
		}
		f.o.Log.Warn("follow: read failed; retrying", "who", f.o.Who, "site", f.site, "err", err)
		d := backoff.Jitter(backoff.Exp(f.fails, f.o.MinRetry, f.o.MaxRetry))
		f.fails++
		if err := backoff.Sleep(ctx, d); err != nil {
			return Update{}, err
		}
	}
}

// Poll is Next without waiting and without retrying: it returns what is
// there now (an update with nothing in it when the reader is level) or the
// error of the read. For a reader on a request's path, which answers with
// the error rather than waiting.
func (f *Site) Poll(ctx context.Context) (Update, error) {
	return f.step(ctx, false)
}

// Done reports whether err, from Next, means the reader is done: ctx
// ended or the engine closed.
func Done(ctx context.Context, err error) bool {
	return err != nil && (ctx.Err() != nil || errors.Is(err, queue.ErrClosed))
}

// step takes one update: a snapshot when one is due, else the next
// events (waiting for them when wait), turning a gap into a snapshot.
func (f *Site) step(ctx context.Context, wait bool) (Update, error) {
	if f.sub == nil && !f.fresh {
		sub, err := f.subscribe(f.o.After)
		if err != nil {
			return Update{}, err
		}
		f.sub = sub
	}
	for {
		if f.fresh {
			return f.snapshot(ctx)
		}
		var evs []queue.Event
		var err error
		from := f.sub.Version()
		if wait {
			evs, err = f.sub.Next(ctx)
		} else {
			evs, err = f.sub.Poll(ctx)
		}
		gap := errors.Is(err, queue.ErrGapTooLarge)
		if !gap && err == nil && f.o.MaxBehind > 0 && len(evs) > f.o.MaxBehind {
			gap = true
		}
		if gap {
			f.o.Log.Info("follow: too far behind, taking a snapshot", "who", f.o.Who, "site", f.site, "from", from)
			f.fresh = true
			continue
		}
		return Update{Events: evs}, err
	}
}

// snapshot reads the site's state (and the recent events before it) and
// moves the subscription to its version.
func (f *Site) snapshot(ctx context.Context) (Update, error) {
	snap, err := f.eng.Snapshot(ctx, f.site)
	if err != nil {
		return Update{}, err
	}
	u := Update{Snapshot: &snap}
	if n := f.o.Recent; n > 0 && snap.Version > 0 {
		after := max(0, snap.Version-int64(n))
		evs, err := f.eng.Events(ctx, f.site, after, n)
		if err != nil {
			return Update{}, err
		}
		for i := range evs {
			if evs[i].Version > snap.Version {
				evs = evs[:i]
				break
			}
		}
		u.Recent = evs
	}
	if f.sub == nil {
		sub, err := f.subscribe(snap.Version)
		if err != nil {
			return Update{}, err
		}
		f.sub = sub
	} else {
		f.sub.Reset(snap.Version)
	}
	f.fresh = false
	return u, nil
}

func (f *Site) subscribe(after int64) (*queue.Subscription, error) {
	sub, err := f.eng.Subscribe(f.site, after)
	if err != nil {
		return nil, err
	}
	if f.o.Quiet {
		sub.Quiet()
	}
	return sub, nil
}
