package web

import (
	"context"
	"slices"
	"sync"

	"github.com/nowserving/nowserving/queue"
)

// boards keeps, per site, the snapshot and the waiting lists the counter
// pages' boards are made of, at one version of the site's events. Every
// counter page reads its board again after each change (counter.js), so
// one event brings as many reads as pages are open: measured with eight
// pages open (BenchmarkCounterCall), their snapshots and waiting lists
// were half the daemon's CPU and held a call's answer back by hundreds of
// milliseconds. With boards, the pages reading after the same event share
// one snapshot and one waiting list per service; each read costs the
// site's last version (one indexed row) to know the shared one is
// current. A snapshot is consistent at its version (one read
// transaction); the waiting lists are read after it, as they were.
type boards struct {
	mu    sync.Mutex
	sites map[string]*siteBoards
}

type siteBoards struct {
	mu      sync.Mutex // held while one request reads for the others
	read    bool       // snap has been read
	version int64      // of snap
	snap    queue.Snapshot
	waiting map[string][]queue.Ticket // by service, at version or after
}

func (bs *boards) site(id string) *siteBoards {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.sites == nil {
		bs.sites = map[string]*siteBoards{}
	}
	sb := bs.sites[id]
	if sb == nil {
		sb = &siteBoards{}
		bs.sites[id] = sb
	}
	return sb
}

// read returns the site's snapshot and the waiting lists of services (the
// first boardTickets of each, in call order), from the shared copy when no
// event came since it was read, else read now (and shared).
func (bs *boards) read(ctx context.Context, e *queue.Engine, site *queue.Site, services []string) (queue.Snapshot, map[string][]queue.Ticket, error) {
	v, err := e.LastVersion(ctx, site.ID)
	if err != nil {
		return queue.Snapshot{}, nil, err
	}
	sb := bs.site(site.ID)
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if !sb.read || sb.version < v || sb.snap.Day != site.Day(e.Now()) {
		snap, err := e.Snapshot(ctx, site.ID)
		if err != nil {
			return queue.Snapshot{}, nil, err
		}
		sb.snap, sb.version, sb.read, sb.waiting = snap, snap.Version, true, map[string][]queue.Ticket{}
	}
	out := make(map[string][]queue.Ticket, len(services))
	for _, sv := range services {
		ts, ok := sb.waiting[sv]
		if !ok {
			if ts, err = e.WaitingList(ctx, site.ID, sv, boardTickets); err != nil {
				return queue.Snapshot{}, nil, err
			}
			sb.waiting[sv] = ts
		}
		out[sv] = slices.Clone(ts)
	}
	return sb.snap, out, nil
}
