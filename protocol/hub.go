package protocol

import (
	"context"
	"sync"
	"time"

	"github.com/nowserving/nowserving/follow"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// hubs fans each site's events out to its subscribed sessions: one
// goroutine and one queue.Subscription per site, instead of one per
// subscriber, so an idle subscriber costs no goroutine. A subscriber that
// joins behind the site's hub catches up on a goroutine of its own, which
// ends once it is level.
type hubs struct {
	mu     sync.Mutex
	sites  map[string]*hub
	ctx    context.Context // ends the hubs' goroutines
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// hub is one site's fan-out.
type hub struct {
	srv  *Server
	site *queue.Site
	fol  *follow.Site // the hub goroutine's only

	mu      sync.Mutex
	version int64 // last version delivered to the live members
	members map[*session]*member
}

// member is one subscription of a session.
type member struct {
	h     *hub
	ss    *session
	fl    filter
	after int64 // last version sent; the catch-up's while !live, then h.mu's
	live  bool  // the hub delivers to it; guarded by h.mu

	cancel context.CancelFunc // of the catch-up, nil when none
	done   chan struct{}      // closed when the catch-up ended
}

// join subscribes ss to site's events after version from, filtered by fl;
// at is the site's version as the caller read it (a hub that starts starts
// there, so that a subscriber behind catches up on its own, at its pace).
// The caller owns the read side of ss and has queued the SUBSCRIBE answer.
func (s *Server) join(ss *session, site *queue.Site, from, at int64, fl filter) error {
	s.eng.SeenVersion(site.ID, from) // beyond the store's: it lost work
	h, err := s.hubFor(site, at)
	if err != nil {
		return err
	}
	m := &member{h: h, ss: ss, fl: fl, after: from}
	h.mu.Lock()
	defer h.mu.Unlock()
	ss.sub = m
	h.members[ss] = m
	if from >= h.version {
		m.live = true
		return nil
	}
	f := s.follower(site, from, s.o.MaxReplay, "protocol catch-up")
	ctx, cancel := context.WithCancel(s.hubs.ctx)
	m.cancel, m.done = cancel, make(chan struct{})
	go h.catchUp(ctx, m, f)
	return nil
}

// hubFor returns the hub of site, starting it at version from when there is
// none yet.
func (s *Server) hubFor(site *queue.Site, from int64) (*hub, error) {
	hs := &s.hubs
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if h := hs.sites[site.ID]; h != nil {
		return h, nil
	}
	if hs.ctx.Err() != nil {
		return nil, queue.ErrClosed
	}
	if _, err := s.eng.Site(site.ID); err != nil {
		return nil, err
	}
	h := &hub{srv: s, site: site, fol: s.follower(site, from, 0, "protocol hub"), version: from, members: map[*session]*member{}}
	if hs.sites == nil {
		hs.sites = map[string]*hub{}
	}
	hs.sites[site.ID] = h
	hs.wg.Go(func() { h.run(hs.ctx) })
	return h, nil
}

// stopHubs ends the hubs' goroutines (the sessions are gone).
func (hs *hubs) stop() {
	hs.cancel()
	hs.wg.Wait()
}

// unsubscribe ends the session's subscription, if any. The caller owns the
// read side of ss.
func (ss *session) unsubscribe() {
	m := ss.sub
	if m == nil {
		return
	}
	ss.sub = nil
	m.h.mu.Lock()
	delete(m.h.members, ss)
	m.h.mu.Unlock()
	if m.cancel != nil {
		m.cancel()
		<-m.done
	}
}

// follower follows site from version from (which the subscriber has):
// further behind than maxBehind events (0: the engine's bound), a SNAPSHOT
// comes first.
func (s *Server) follower(site *queue.Site, from int64, maxBehind int, who string) *follow.Site {
	return follow.New(s.eng, site.ID, follow.Opts{Resume: true, After: from, MaxBehind: maxBehind,
		Recent: recentEvents, MinRetry: time.Second, Log: s.log, Who: who})
}

// run delivers the site's updates to the live members until ctx ends or
// the engine closes. After a gap the follower's snapshot goes to every live
// member, as an unsolicited SNAPSHOT, and the events after it follow.
func (h *hub) run(ctx context.Context) {
	s := h.srv
	for {
		u, err := h.fol.Next(ctx)
		if err != nil {
			return
		}
		h.mu.Lock()
		if u.Snapshot != nil {
			msg := s.snapshotMsg(h.site, u.Snapshot)
			for _, m := range h.members {
				if m.live && m.ss.send(0, withRecent(m.ss, h.site, msg, u.Recent, m.fl)) {
					m.after = u.Snapshot.Version
				}
			}
		}
		h.version = max(h.version, u.Version())
		for _, m := range h.members {
			if m.live {
				m.send(h.srv, h.site, u.Events, m.ss.enqueue)
			}
		}
		h.mu.Unlock()
	}
}

// catchUp sends a member that joined behind the hub the events it missed,
// from a follower of its own, at the pace its peer reads them, and makes
// it live once it is level.
func (h *hub) catchUp(ctx context.Context, m *member, f *follow.Site) {
	defer close(m.done)
	s := h.srv
	for {
		u, err := f.Next(ctx)
		if err != nil {
			return
		}
		if u.Snapshot != nil {
			b, err := wire.EncodeMessage(nil, 0, 0, withRecent(m.ss, h.site, s.snapshotMsg(h.site, u.Snapshot), u.Recent, m.fl))
			if err != nil || !m.ss.enqueuePaced(ctx, b) {
				return
			}
			m.after = u.Snapshot.Version
		}
		paced := func(b []byte) bool { return m.ss.enqueuePaced(ctx, b) }
		if !m.send(s, h.site, u.Events, paced) {
			return
		}
		h.mu.Lock()
		level := f.Version() >= h.version
		m.live = level
		h.mu.Unlock()
		if level {
			return
		}
	}
}

// send queues, with put, the events after m.after that m's filter
// selects, and reports false when the session is gone. The hub puts with
// enqueue (never waiting); a catch-up with enqueuePaced (waiting for room).
func (m *member) send(s *Server, site *queue.Site, evs []queue.Event, put func([]byte) bool) bool {
	for i := range evs {
		ev := &evs[i]
		if ev.Version <= m.after {
			continue
		}
		m.after = ev.Version
		if !m.fl.match(ev) {
			continue
		}
		if b := s.frames.eventFrame(site, ev); b != nil && !put(b) {
			return false
		}
	}
	return true
}

// recentEvents is how many of the day's last events a console's SNAPSHOT
// carries (wire.Snapshot.Recent), so its event list is full at once.
const recentEvents = 50

// recent reads the events up to snap's version that a SNAPSHOT to ss
// carries: a bounded read, for a console only.
func (s *Server) recent(ctx context.Context, ss *session, site *queue.Site, snap *queue.Snapshot) []queue.Event {
	if ss.dev == nil || ss.dev.Role != wire.RoleConsole || snap.Version == 0 {
		return nil
	}
	evs, err := s.eng.Events(ctx, site.ID, max(0, snap.Version-recentEvents), recentEvents)
	if err != nil {
		s.log.Warn("snapshot without its recent events", "device", ss.dev.ID, "site", site.ID, "err", err)
		return nil
	}
	return evs
}

// withRecent is m with, as its Recent, those of evs (up to its version)
// of its service day that fl selects, when ss is a console; m itself
// otherwise. The oldest are left out where the frame would pass
// wire.MaxPayload.
func withRecent(ss *session, site *queue.Site, m *wire.Snapshot, evs []queue.Event, fl filter) *wire.Snapshot {
	if ss.dev == nil || ss.dev.Role != wire.RoleConsole || len(evs) == 0 {
		return m
	}
	c := *m
	c.Recent = nil
	for i := range evs {
		ev := &evs[i]
		if ev.Version > int64(m.Version) || !fl.match(ev) {
			continue
		}
		if we, ok := eventMsg(site, ev); ok && we.ServiceDay == m.ServiceDay {
			c.Recent = append(c.Recent, *we)
		}
	}
	for len(c.Recent) > 0 {
		b, err := c.AppendBinary(nil)
		if err == nil && len(b) <= wire.MaxPayload {
			break
		}
		c.Recent = c.Recent[len(c.Recent)/2+1:]
	}
	return &c
}
