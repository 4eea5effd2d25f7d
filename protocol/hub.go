package protocol

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nowserving/nowserving/backoff"
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
	sub  *queue.Subscription // the hub goroutine's only

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

// join subscribes ss to site's events after version from, filtered by fl.
// The caller owns the read side of ss and has queued the SUBSCRIBE answer.
func (s *Server) join(ss *session, site *queue.Site, from int64, fl filter) error {
	s.eng.SeenVersion(site.ID, from) // beyond the store's: it lost work
	h, err := s.hubFor(site, from)
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
	sub, err := s.eng.Subscribe(site.ID, from)
	if err != nil {
		delete(h.members, ss)
		ss.sub = nil
		return err
	}
	ctx, cancel := context.WithCancel(s.hubs.ctx)
	m.cancel, m.done = cancel, make(chan struct{})
	go h.catchUp(ctx, m, sub)
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
	sub, err := s.eng.Subscribe(site.ID, from)
	if err != nil {
		return nil, err
	}
	h := &hub{srv: s, site: site, sub: sub, version: from, members: map[*session]*member{}}
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

// run delivers the site's events to the live members until ctx ends or the
// engine closes.
func (h *hub) run(ctx context.Context) {
	for {
		evs, err := h.sub.Next(ctx)
		if err != nil {
			if !h.recover(ctx, err) {
				return
			}
			continue
		}
		h.mu.Lock()
		h.version = evs[len(evs)-1].Version
		for _, m := range h.members {
			if m.live {
				m.send(h.srv, h.site, evs)
			}
		}
		h.mu.Unlock()
	}
}

// recover handles a failed Next of the hub: a hub too far behind sends its
// live members a SNAPSHOT and goes on from there; other errors are retried
// after a second. It reports false when the hub is to end.
func (h *hub) recover(ctx context.Context, err error) bool {
	s := h.srv
	if ctx.Err() != nil || errors.Is(err, queue.ErrClosed) {
		return false
	}
	if errors.Is(err, queue.ErrGapTooLarge) {
		snap, serr := s.eng.Snapshot(ctx, h.site.ID)
		if serr == nil {
			h.mu.Lock()
			for _, m := range h.members {
				if m.live && m.ss.send(0, s.snapshotMsg(h.site, &snap)) {
					m.after = snap.Version
				}
			}
			h.version = snap.Version
			h.sub.Reset(snap.Version)
			h.mu.Unlock()
			return true
		}
		err = serr
	}
	s.log.Warn("event fan-out failed; retrying", "site", h.site.ID, "err", err)
	return backoff.Sleep(ctx, time.Second) == nil
}

// catchUp sends a member that joined behind the hub the events it missed,
// from its own subscription, and makes it live once it is level.
func (h *hub) catchUp(ctx context.Context, m *member, sub *queue.Subscription) {
	defer close(m.done)
	s := h.srv
	for {
		evs, err := sub.Poll(ctx)
		switch {
		case ctx.Err() != nil || errors.Is(err, queue.ErrClosed):
			return
		case errors.Is(err, queue.ErrGapTooLarge):
			snap, serr := s.eng.Snapshot(ctx, h.site.ID)
			if serr != nil {
				err = serr
				break
			}
			if !m.ss.send(0, s.snapshotMsg(h.site, &snap)) {
				return
			}
			m.after = snap.Version
			sub.Reset(snap.Version)
			continue
		case err == nil:
			if !m.send(s, h.site, evs) {
				return
			}
			h.mu.Lock()
			level := sub.Version() >= h.version
			m.live = level
			h.mu.Unlock()
			if level {
				return
			}
			continue
		}
		s.log.Warn("event subscription failed; retrying", "device", m.ss.dev.ID, "site", h.site.ID, "err", err)
		if backoff.Sleep(ctx, time.Second) != nil {
			return
		}
	}
}

// send queues the events after m.after that m's filter selects, and
// reports false when the session is gone.
func (m *member) send(s *Server, site *queue.Site, evs []queue.Event) bool {
	for i := range evs {
		ev := &evs[i]
		if ev.Version <= m.after {
			continue
		}
		m.after = ev.Version
		if !m.fl.match(ev) {
			continue
		}
		if b := s.frames.eventFrame(site, ev); b != nil && !m.ss.enqueue(b) {
			return false
		}
	}
	return true
}
