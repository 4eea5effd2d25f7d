package protocol

import (
	"context"
	"fmt"
	"github.com/nowserving/nowserving/follow"
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

// followed is one site's picture and the follower it takes it from.
type followed struct {
	mu sync.Mutex
	v  *view.Site // nil until the first read
	f  *follow.Site
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
		f = &followed{f: follow.New(eng, site.ID, follow.Opts{})}
		vs.sites[site.ID] = f
	}
	vs.mu.Unlock()

	f.mu.Lock()
	defer f.mu.Unlock()
	if f.v != nil && f.v.Day < site.Day(eng.Now()) {
		// A new service day and no event of it yet: the picture still
		// counts yesterday's tickets.
		f.f.Refresh()
	}
	for {
		u, err := f.f.Poll(ctx)
		if err != nil {
			return fmt.Errorf("protocol: follow the events of %s: %w", site.ID, err)
		}
		if u.Snapshot != nil {
			f.v = view.FromSnapshot(*site, view.Opts{}, *u.Snapshot)
		} else if len(u.Events) == 0 {
			break
		}
		for i := range u.Events {
			f.v.Apply(&u.Events[i])
		}
	}
	fn(f.v)
	return nil
}
