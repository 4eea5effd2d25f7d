package protocol

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/view"
)

// siteViews keeps, per site, the picture of package view following the
// engine's events, brought up to date when it is read. A keypad's answer
// ("N waiting") is read from it: a request's events are in the engine's
// feed once the request has returned, so the picture then is the one a
// snapshot would give, and after the first snapshot of a site it costs no
// store read. There are no goroutines: a site nobody reads stays where it
// was, and the next read catches up (from a fresh snapshot when too far
// behind).
type siteViews struct {
	mu    sync.Mutex
	sites map[string]*followed
}

// followed is one site's picture and the subscription it follows.
type followed struct {
	mu  sync.Mutex
	v   *view.Site // nil until the first read, and after a gap
	sub *queue.Subscription
}

// read brings the picture of site up to date and calls fn with it; fn must
// not keep it.
func (vs *siteViews) read(ctx context.Context, eng *queue.Engine, site *queue.Site, fn func(*view.Site)) error {
	vs.mu.Lock()
	if vs.sites == nil {
		vs.sites = map[string]*followed{}
	}
	f := vs.sites[site.ID]
	if f == nil {
		f = &followed{}
		vs.sites[site.ID] = f
	}
	vs.mu.Unlock()

	f.mu.Lock()
	defer f.mu.Unlock()
	if f.v != nil && f.v.Day < site.Day(eng.Now()) {
		// A new service day and no event of it yet: the picture still
		// counts yesterday's tickets.
		f.v = nil
	}
	for {
		if f.v == nil {
			snap, err := eng.Snapshot(ctx, site.ID)
			if err != nil {
				return err
			}
			sub, err := eng.Subscribe(site.ID, snap.Version)
			if err != nil {
				return err
			}
			f.v, f.sub = view.FromSnapshot(*site, view.Opts{}, snap), sub
		}
		evs, err := f.sub.Poll(ctx)
		if errors.Is(err, queue.ErrGapTooLarge) {
			f.v = nil
			continue
		}
		if err != nil {
			return fmt.Errorf("protocol: follow the events of %s: %w", site.ID, err)
		}
		if len(evs) == 0 {
			break
		}
		for i := range evs {
			f.v.Apply(&evs[i])
		}
	}
	fn(f.v)
	return nil
}
