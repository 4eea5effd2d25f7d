package queue

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// This file is where the events other daemons commit enter this one. Several
// daemons share one store; each keeps the feed of its sites, filled by its
// own commits (feed.publish) and by what the follower finds in the store
// (feed.catchUp, the one place foreign events come in). Whatever in this
// daemon must follow other daemons' writes (subscribers, in-memory state)
// reads them there, or registers a hook with Engine.OnFollow.
//
// The follower wakes on:
//   - a Notifier's notification (PostgreSQL LISTEN/NOTIFY, sent by the other
//     daemon after its commit), which names the site and its version;
//   - a poll of every site's last version in one query: every PollInterval
//     while subscribers wait for events (and no notifier is listening), every
//     PollIdle otherwise, as a safety net.
//
// A notification or a poll is only a wake-up: the follower reads the events
// by version from the event table, which is the record (DESIGN §7).

// Notifier pushes "a site has new events" between daemons that share a
// store, outside any transaction. A store that can (PostgreSQL) offers one;
// elsewhere the follower polls.
type Notifier interface {
	// Notify tells the other daemons that the events of each site of
	// versions reached its version, at once. The engine calls it after the
	// commit, from a goroutine of its own, coalescing what commits faster
	// than it sends: one call for every site that moved meanwhile.
	Notify(ctx context.Context, versions map[string]int64) error
	// Listen calls ready once it listens, then fn for each notification
	// another daemon sent (not this one's own), until ctx ends or the
	// connection fails; it returns why. Notifications sent while it was
	// not listening are lost: the caller reads by version after ready.
	Listen(ctx context.Context, ready func(), fn func(site string, version int64)) error
}

// Defaults of the follower.
const (
	// DefaultPollInterval is Opts.PollInterval of a shared store: the poll
	// while subscribers wait and no notifier listens.
	DefaultPollInterval = 50 * time.Millisecond
	// DefaultPollIdle is Opts.PollIdle: the poll with nobody waiting, or
	// behind a notifier that listens.
	DefaultPollIdle = time.Second
)

// FollowStats is what the follower saw of a site, for /metrics.
type FollowStats struct {
	// Behind is how many versions the feed was behind the store after the
	// last catch-up of every site (0 when it kept up).
	Behind int64
	// Polled is when every site was last caught up; zero if never.
	Polled time.Time
}

// OnFollow registers fn, called with the events of a site that this daemon
// did not publish itself (another daemon committed them), in version order,
// once each, as they enter the feed. It may also see an event this daemon
// committed whose publication a poll overtook. fn runs with the feed locked:
// it must be quick and must not call the engine.
func (e *Engine) OnFollow(fn func(site string, evs []Event)) {
	e.feed.mu.Lock()
	defer e.feed.mu.Unlock()
	e.feed.hooks = append(e.feed.hooks, fn)
}

// FollowStats returns what the follower saw of each site.
func (e *Engine) FollowStats() map[string]FollowStats {
	f := e.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]FollowStats, len(f.stats))
	for k, v := range f.stats {
		out[k] = v
	}
	return out
}

// lockSites takes the version row lock of every site the jobs write, in
// site order, before anything else of the batch: with several daemons on
// one store, two batches of one site otherwise lock its day counters (and
// tickets, counters) in different orders and deadlock, which the database
// resolves only after its deadlock timeout (PostgreSQL: 1 s) by aborting
// one. Behind the site lock they simply queue.
func lockSites(ctx context.Context, tx Tx, jobs []*job) error {
	sites := make([]string, 0, 1)
	for _, j := range jobs {
		if !slices.Contains(sites, j.site) {
			sites = append(sites, j.site)
		}
	}
	slices.Sort(sites)
	if err := tx.LockSites(ctx, sites); err != nil {
		return fmt.Errorf("queue: lock sites %s: %w", strings.Join(sites, ", "), err)
	}
	return nil
}

// follower finds the events other daemons commit.
type follower struct {
	f          *feed
	fast, idle time.Duration
	n          Notifier

	waiting atomic.Int32 // subscribers waiting in Next that want events fast
	pushed  atomic.Bool  // the notifier listens: notifications wake the follower
	wake    chan struct{}
	swept   time.Time // last poll that caught up every site (run's goroutine only)

	mu       sync.Mutex
	waiters  map[string]int       // those subscribers, by site
	notified map[string]int64     // sites other daemons notified, by version
	missed   map[string]int64     // notified while nobody waited on them, by version
	left     map[string]time.Time // when the last waiter of a site stopped waiting
	full     bool                 // poll every site now (the notifier just started listening)

	out     chan struct{} // a publication waits in sends
	sendsMu sync.Mutex
	sends   map[string]int64 // versions to notify, coalesced
}

func newFollower(f *feed, fast, idle time.Duration, n Notifier) *follower {
	if fast <= 0 {
		fast = DefaultPollInterval
	}
	if idle < fast {
		idle = max(fast, DefaultPollIdle)
	}
	return &follower{f: f, fast: fast, idle: idle, n: n, wake: make(chan struct{}, 1), waiters: map[string]int{},
		notified: map[string]int64{}, missed: map[string]int64{}, left: map[string]time.Time{},
		out: make(chan struct{}, 1), sends: map[string]int64{}}
}

func (w *follower) start() {
	w.f.wg.Go(w.run)
	if w.n != nil {
		w.f.wg.Go(w.listen)
		w.f.wg.Go(w.send)
	}
}

func (w *follower) kick() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// listening marks a subscriber of site waiting for events (+1) or done
// (-1). Only sites with such subscribers are followed at once (on a
// notification, at the fast poll); the others at the slow poll, or when
// this daemon writes to them. The first subscriber of a site after none
// has it caught up at once if the feed may have missed events meanwhile:
// a notification came for it, or (polling) the fast poll did not run for
// it. A subscriber that waits again right after its events came (a loop
// of Next) costs no read.
func (w *follower) listening(site string, d int) {
	w.waiting.Add(int32(d))
	w.mu.Lock()
	n := w.waiters[site] + d
	w.waiters[site] = n
	kick := false
	switch {
	case d < 0 && n == 0:
		w.left[site] = w.f.e.clock.mono()
	case d > 0 && n == 1:
		if v, ok := w.missed[site]; ok {
			delete(w.missed, site)
			w.notified[site], kick = max(w.notified[site], v), true
		} else if !w.pushed.Load() {
			// Polling: the poll must come within the fast interval
			// (the kick brings it forward, never later); a read now
			// only if it may not have run for this site meanwhile.
			kick = true
			if w.f.e.clock.since(w.left[site]) > w.fast {
				w.notified[site] = math.MaxInt64
			}
		}
	}
	w.mu.Unlock()
	if kick {
		w.kick()
	}
}

// waitedOn reports whether subscribers of site wait for its events.
func (w *follower) waitedOn(site string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.waiters[site] > 0
}

// interval is the pause before the next poll.
func (w *follower) interval() time.Duration {
	if w.waiting.Load() > 0 && !w.pushed.Load() {
		return w.fast
	}
	return w.idle
}

func (w *follower) run() {
	w.poll() // every site's feed starts now, at the store's version
	// due is the next poll: a wake-up may bring it forward (a subscriber
	// that starts waiting wants the fast one), never put it off, however
	// often it comes.
	due := w.f.e.clock.mono().Add(w.interval())
	t := time.NewTimer(w.f.e.clock.until(due))
	defer t.Stop()
	for {
		select {
		case <-w.f.stop:
			return
		case <-t.C:
			w.poll()
			due = w.f.e.clock.mono().Add(w.interval())
		case <-w.wake:
			w.mu.Lock()
			sites, full := w.notified, w.full
			w.notified, w.full = map[string]int64{}, false
			w.mu.Unlock()
			if full {
				w.poll()
				due = w.f.e.clock.mono().Add(w.interval())
			}
			for id, v := range sites {
				// Looked at and recorded under one lock: a first waiter
				// either is seen here or sees what was missed.
				w.mu.Lock()
				waited := w.waiters[id] > 0
				if !waited {
					w.missed[id] = max(w.missed[id], v)
				}
				w.mu.Unlock()
				if waited {
					w.catchUp(id, v)
				}
			}
			if d := w.f.e.clock.mono().Add(w.interval()); d.Before(due) {
				due = d
			}
		}
		t.Reset(w.f.e.clock.until(due))
	}
}

// poll reads every site's last version in one query and catches up the
// sites that moved: those subscribers wait on, and every site once per
// slow interval.
func (w *follower) poll() {
	f := w.f
	ctx, cancel := context.WithTimeout(f.ctx, f.e.timeout)
	defer cancel()
	before := f.lasts()
	sweep := f.e.clock.since(w.swept) >= w.idle
	var vs map[string]int64
	var losses []LossRecord
	err := f.e.store.View(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if vs, err = tx.LastVersions(ctx); err != nil || !sweep {
			return err
		}
		// Gaps other daemons skipped when the store lost work: this one
		// applies its own requests of them again (lost.go).
		losses, err = tx.Losses(ctx, "", 0)
		return err
	})
	if err != nil {
		if f.ctx.Err() == nil {
			f.e.log.Warn("event feed: poll failed", "err", err)
		}
		return
	}
	f.behind(before, vs)
	f.othersLost(losses)
	now := f.e.clock.mono()
	for _, id := range f.e.defs.Load().order {
		if sweep || w.waitedOn(id) {
			w.catchUp(id, vs[id])
		}
	}
	if !sweep {
		return
	}
	w.swept = now
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range f.e.defs.Load().order {
		st := f.stats[id]
		st.Polled = now
		if sf := f.sites[id]; sf != nil {
			st.Behind = max(vs[id]-sf.last, 0)
		}
		f.stats[id] = st
	}
}

// catchUp reads a site's events if the feed is behind version v.
func (w *follower) catchUp(id string, v int64) {
	f := w.f
	if _, ok := f.e.defs.Load().byID[id]; !ok {
		return
	}
	sf, err := f.lockSite(id)
	if err != nil {
		return
	}
	behind := v > sf.last
	f.mu.Unlock()
	if !behind {
		return
	}
	if err := f.catchUp(id, 0); err != nil {
		if f.ctx.Err() == nil {
			f.e.log.Warn("event feed: catch up failed", "site", id, "err", err)
		}
		return
	}
	f.mu.Lock()
	last := sf.last
	f.mu.Unlock()
	w.mu.Lock()
	if m, ok := w.missed[id]; ok && m <= last {
		delete(w.missed, id)
	}
	w.mu.Unlock()
}

// listen keeps the notifier listening, again after each failure with a
// pause, polling fast meanwhile.
func (w *follower) listen() {
	for attempt := 0; ; attempt++ {
		err := w.n.Listen(w.f.ctx, func() {
			attempt = 0
			w.pushed.Store(true)
			w.mu.Lock()
			w.full = true // what was sent before we listened
			w.mu.Unlock()
			w.kick()
		}, func(site string, v int64) {
			w.mu.Lock()
			if v > w.notified[site] {
				w.notified[site] = v
			}
			w.mu.Unlock()
			w.kick()
		})
		w.pushed.Store(false)
		if w.f.ctx.Err() != nil {
			return
		}
		w.f.e.log.Warn("event feed: listen failed, polling meanwhile", "err", err)
		select {
		case <-w.f.ctx.Done():
			return
		case <-time.After(min(time.Duration(attempt+1)*500*time.Millisecond, 10*time.Second)):
		}
	}
}

// notify queues a site's new version for the other daemons. It never
// blocks: the sender coalesces.
func (w *follower) notify(site string, v int64) {
	if w.n == nil {
		return
	}
	w.sendsMu.Lock()
	if v > w.sends[site] {
		w.sends[site] = v
	}
	w.sendsMu.Unlock()
	select {
	case w.out <- struct{}{}:
	default:
	}
}

// send delivers the queued notifications: every site that moved since the
// last send, each with its newest version, in one call.
func (w *follower) send() {
	for {
		select {
		case <-w.f.stop:
			return
		case <-w.out:
		}
		w.sendsMu.Lock()
		sends := w.sends
		w.sends = map[string]int64{}
		w.sendsMu.Unlock()
		ctx, cancel := context.WithTimeout(w.f.ctx, w.f.e.timeout)
		err := w.n.Notify(ctx, sends)
		cancel()
		if err != nil && w.f.ctx.Err() == nil {
			// The others find the events by their poll.
			w.f.e.log.Warn("event feed: notify failed", "sites", len(sends), "err", err)
		}
	}
}
