package queue

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrGapTooLarge tells a subscriber that it is too far behind to replay
// events: it should take a Snapshot and Reset to its version.
var ErrGapTooLarge = errors.New("queue: subscriber too far behind: take a snapshot")

// feed keeps the recent events of each site in memory, in version order,
// for subscribers. The event table is the record: the feed fills itself from
// local commits and, for events other daemons committed, from the store.
type feed struct {
	e         *Engine
	size      int
	maxReplay int

	// mu guards what follows and each site's feed. It is never held
	// across I/O (a store read, a log line): what a read brings is
	// applied under it afterwards, so a slow store stalls neither the
	// committers' publications nor the subscribers (lockSite, catchUp,
	// rebuild; TestFeedHoldsNoLockAcrossReads in queue/store/sqlite).
	mu    sync.Mutex
	sites map[string]*siteFeed

	// follower, when set, finds the events other daemons commit
	// (follow.go); hooks see them, stats is what it saw.
	follower *follower
	hooks    []func(site string, evs []Event)
	stats    map[string]FollowStats
	// lossSeen are the loss records of other daemons already taken
	// (othersLost), lossStarted whether the first poll has read them.
	lossSeen    map[string]bool
	lossStarted bool
	// maxTicket is the largest ticket id this daemon gave or followed.
	maxTicket int64

	stop chan struct{}
	wg   sync.WaitGroup
	// ctx bounds the feed's store reads: cancelled by close, so a poll
	// waiting on a database that hangs does not hold the engine's Close.
	ctx    context.Context
	cancel context.CancelFunc
}

type siteFeed struct {
	ring []Event // contiguous versions ending at last; between size and 2*size once full
	last int64
	wake chan struct{} // closed and replaced when events arrive

	// ord is the site's waiting order, following the feed; nil when it
	// could not be built or followed, until it is built again (not before
	// ordRetry).
	ord      *order
	ordRetry time.Time
	// building says a goroutine builds the order from the store, without
	// f.mu: the runs appended meanwhile wait in ordWork, in version order,
	// applied once it is built, and positions come from the store until
	// then. ordBuilt is the store's version the last build read with the
	// tickets: the order reflects every version up to it. ordGen counts
	// the drops of the order: what was read for the order before one is
	// not applied.
	building bool
	ordWork  []orderWork
	ordBuilt int64
	ordGen   int
	// used is when this daemon last wrote to the site or asked its order
	// (a position): a site it has not used for orderKeep does not follow
	// other daemons' events in its order, which it drops instead.
	used time.Time

	// held is the work of this daemon's recent requests (heldEvents
	// events, about the feed's size), high the highest number of each
	// service day it gave or followed, and lost, when set, says the store
	// lost some of it: the site is restored before its next write
	// (lost.go).
	held       []*heldJob
	heldEvents int
	high       map[DayKey]int
	lost       []*lostError
}

// orderKeep is how long a site's waiting order keeps following other
// daemons' events after this daemon last used it. Following costs a read
// of the tickets of those events; a daemon that serves none of a site's
// devices (other daemons serve them) would pay it for nothing. A dropped
// order is built again on the site's next use.
const orderKeep = 10 * time.Second

func newFeed(e *Engine, size, maxReplay int) *feed {
	f := &feed{e: e, size: size, maxReplay: maxReplay, sites: map[string]*siteFeed{}, stats: map[string]FollowStats{}, stop: make(chan struct{})}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	return f
}

// startFollower starts the follower: other daemons write to the store too.
func (f *feed) startFollower(fast, idle time.Duration, n Notifier) {
	f.follower = newFollower(f, fast, idle, n)
	f.follower.start()
}

func (f *feed) close() {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	f.cancel()
	f.wg.Wait()
}

// warm reads the last version and builds the waiting order of each site,
// so that no request pays for it; a site whose read fails is tried again
// on first use.
func (f *feed) warm(sites []string) {
	for _, id := range sites {
		if _, err := f.lockSite(id); err != nil {
			f.e.log.Warn("event feed: first read failed, trying again on first use", "site", id, "err", err)
			continue
		}
		f.mu.Unlock()
	}
}

// lockSite locks the feed and returns the feed of a site. On first use it
// reads the site's last version and waiting order from the store first,
// without the lock; when two goroutines read it at once, the first to
// lock keeps its own. On success f.mu is held, on error it is not.
func (f *feed) lockSite(id string) (*siteFeed, error) {
	f.mu.Lock()
	if sf, ok := f.sites[id]; ok {
		return sf, nil
	}
	f.mu.Unlock()
	sf, err := f.load(id)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	if cur, ok := f.sites[id]; ok {
		return cur, nil
	}
	f.sites[id] = sf
	return sf, nil
}

// load reads the feed of a site: its last version, and its waiting order
// read after it, in one transaction. f.mu is not held.
func (f *feed) load(id string) (*siteFeed, error) {
	ctx, cancel := context.WithTimeout(f.ctx, f.e.timeout)
	defer cancel()
	var v int64
	var ord *order
	var oerr error
	err := f.e.store.View(ctx, func(ctx context.Context, tx Tx) error {
		var err error
		if v, err = tx.LastVersion(ctx, id); err != nil {
			return err
		}
		// Read after the version: the order reflects at least it.
		if s, ok := f.e.defs.Load().byID[id]; ok {
			ord, oerr = buildOrder(ctx, tx, s)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("queue: event feed of %s: %w", id, err)
	}
	f.orderFailed(id, oerr)
	sf := &siteFeed{last: v, wake: make(chan struct{}), ordBuilt: v}
	f.setOrder(sf, ord, oerr)
	return sf, nil
}

// setOrder installs a site's order, or drops it after err until a later
// retry. f.mu is held (or sf is not shared yet).
func (f *feed) setOrder(sf *siteFeed, ord *order, err error) {
	if err != nil {
		ord, sf.ordRetry = nil, f.e.clock.mono().Add(time.Second)
	}
	sf.ord = ord
}

// orderFailed logs that a read for a site's waiting order failed, before
// the order is dropped. f.mu is not held: logging is I/O too.
func (f *feed) orderFailed(id string, err error) {
	if err != nil {
		f.e.log.Warn("waiting order dropped: positions come from the store", "site", id, "err", err)
	}
}

// builtOrder is a waiting order built from the store, with the store's
// version read with its tickets.
type builtOrder struct {
	ord     *order
	version int64
}

// order returns the site's waiting order once the feed has appended
// version atLeast, building it again if it was dropped; nil when it is not
// available. f.mu is held (released across a build).
func (f *feed) order(id string, sf *siteFeed, atLeast int64) *order {
	if sf.last < atLeast {
		return nil
	}
	sf.used = f.e.clock.mono()
	s, ok := f.e.defs.Load().byID[id]
	if sf.ord == nil && !sf.building && ok && f.e.clock.mono().After(sf.ordRetry) {
		f.rebuild(id, sf, s)
	}
	return sf.ord
}

// rebuild builds a dropped waiting order again from the store without
// f.mu, then has it follow the runs the feed appended meanwhile. The
// store's version is read with the tickets: the order reflects every
// version up to it. f.mu is held on entry and on return.
func (f *feed) rebuild(id string, sf *siteFeed, s *Site) {
	sf.building, sf.ordWork = true, nil
	gen := sf.ordGen
	f.mu.Unlock()
	built, err := read(f.ctx, f.e, func(ctx context.Context, tx Tx) (builtOrder, error) {
		v, err := tx.LastVersion(ctx, id)
		if err != nil {
			return builtOrder{}, err
		}
		ord, err := buildOrder(ctx, tx, s)
		return builtOrder{ord: ord, version: v}, err
	})
	f.orderFailed(id, err)
	f.mu.Lock()
	work := sf.ordWork
	sf.building, sf.ordWork = false, nil
	if sf.ordGen != gen {
		return // dropped meanwhile (new site definitions): built on next use
	}
	f.setOrder(sf, built.ord, err)
	sf.ordBuilt = built.version
	for _, w := range work {
		if sf.ord == nil {
			return
		}
		sf.follow(w)
	}
}

// position is where t stands, from the waiting order once the feed has
// appended version atLeast; false when the order is not available.
func (f *feed) position(site string, t *Ticket, atLeast int64) (Position, bool) {
	sf, err := f.lockSite(site)
	if err != nil {
		return Position{}, false
	}
	defer f.mu.Unlock()
	o := f.order(site, sf, atLeast)
	if o == nil {
		return Position{}, false
	}
	p, err := o.position(t)
	return p, err == nil
}

// dropOrders forgets every site's waiting order, built from site
// definitions SetSites has replaced; each is rebuilt on its next use.
func (f *feed) dropOrders() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, sf := range f.sites {
		sf.dropOrder()
	}
}

// dropOrder forgets the site's waiting order, with a build in flight and
// what waits for it: it is built again on its next use. f.mu is held.
func (sf *siteFeed) dropOrder() {
	sf.ord, sf.ordRetry, sf.ordWork = nil, time.Time{}, nil
	sf.ordGen++
}

// orderWork is a run of appended events the waiting order follows: with
// the tickets the request of this engine that made them wrote (local), or
// with what readRemote read for them (another daemon committed them; nil
// when nothing was read).
type orderWork struct {
	evs   []Event
	local bool
	ws    []write
	rd    *remoteRead
}

// follow applies w to the order. A run the last build read already is in
// it; a remote one nothing was read for (readLate gave up) drops it,
// built again on its next use. f.mu is held.
func (sf *siteFeed) follow(w orderWork) {
	switch {
	case w.evs[len(w.evs)-1].Version <= sf.ordBuilt:
	case w.local:
		sf.ord.local(w.evs, w.ws)
	case w.rd != nil:
		sf.ord.remote(w.evs, *w.rd)
	default:
		sf.dropOrder()
	}
}

// following says whether the site's waiting order follows the feed (it
// is built, or being built), so that catchUp reads what the order needs
// with the events, and returns the order's generation then; an order this
// daemon has not used for orderKeep is dropped instead. f.mu is held.
func (f *feed) following(sf *siteFeed) (bool, int) {
	if sf.ord == nil && !sf.building {
		return false, sf.ordGen
	}
	if !sf.building && f.e.clock.since(sf.used) > orderKeep {
		sf.dropOrder() // built again on next use
		return false, sf.ordGen
	}
	return true, sf.ordGen
}

// followOrder has the waiting order follow a run the feed just appended,
// in the same hold of f.mu, with no I/O: w carries the tickets the request
// wrote, or what catchUp read from the store before it appended; gen is
// the order's generation when that was read, and a read for an order
// dropped since is not used. During a build the run waits for it. An
// order whose read failed is dropped until a retry. f.mu is held.
func (f *feed) followOrder(sf *siteFeed, w orderWork, gen int) {
	if !w.local && sf.ordGen != gen {
		w.rd = nil
	}
	switch {
	case sf.ord == nil && !sf.building:
	case w.rd != nil && w.rd.err != nil:
		sf.dropOrder()
		f.setOrder(sf, nil, w.rd.err)
	case sf.building:
		sf.ordWork = append(sf.ordWork, w)
	default:
		sf.follow(w)
	}
}

// catchUp reads a site's events newer than the feed's last version from
// the store and appends them: the one place where events this daemon did
// not publish (other daemons committed them) enter the feed; the waiting
// order follows them and the OnFollow hooks see them here. It holds f.mu
// only to look and to append, not across the reads of the events and of
// their tickets (followOrder), so a slow store stalls neither the
// committers' publications nor the subscribers. before, when not 0, stops
// it short of that version (the first of events this daemon is
// publishing). f.mu is not held.
func (f *feed) catchUp(id string, before int64) error {
	sf, err := f.lockSite(id)
	if err != nil {
		return err
	}
	from := sf.last
	follow, gen := f.following(sf)
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(f.ctx, f.e.timeout)
	defer cancel()
	for {
		limit := 1000
		if before > 0 {
			if limit = int(min(int64(limit), before-1-from)); limit <= 0 {
				return nil
			}
		}
		evs, rd, err := f.read(ctx, EventsQuery{Site: id, After: from, Limit: limit}, follow)
		if err != nil {
			return err
		}
		f.mu.Lock()
		rd, gen = f.readLate(ctx, sf, orderWork{evs: evs, rd: rd}, gen)
		if len(evs) > 0 && evs[0].Version > sf.last+1 && sf.last == from {
			// The store skipped versions: a daemon restored work the
			// store had lost (lost.go). The feed goes on after them, and
			// this daemon applies again its own requests of them.
			le := &lostError{site: id, known: evs[0].Version - 1, gapFrom: sf.last + 1, gapTo: evs[0].Version - 1,
				reason: fmt.Sprintf("the store skipped versions %d-%d", sf.last+1, evs[0].Version-1)}
			sf.ring, sf.last = nil, evs[0].Version-1
			f.mu.Unlock()
			f.markLost(le)
			f.e.restoreSoon(id)
			f.mu.Lock()
		}
		if added := f.append(sf, evs); len(added) > 0 {
			f.noteNumbers(id, sf, added, nil)
			f.followOrder(sf, orderWork{evs: added, rd: rd}, gen)
			for _, h := range f.hooks {
				h(id, added)
			}
		}
		follow, gen = f.following(sf)
		f.mu.Unlock()
		if len(evs) < limit {
			return nil
		}
		from = evs[len(evs)-1].Version
	}
}

// readLate reads what the waiting order needs to follow the events of w,
// which catchUp read with w.rd for the order's generation gen, when the
// order has begun to follow the feed since (it was built, or dropped and
// built again, while the events were read): without it the order cannot
// follow them and is dropped, to be built again from all the site's
// waiting tickets instead of those of the run. It returns what the order
// follows them with, and its generation. f.mu is held on entry and on
// return (released across the read).
func (f *feed) readLate(ctx context.Context, sf *siteFeed, w orderWork, gen int) (*remoteRead, int) {
	evs, rd := w.evs, w.rd
	// An order dropped and built again during each read (new site
	// definitions, over and over) is dropped after a few.
	for range 3 {
		follow, g := f.following(sf)
		switch {
		case !follow || rd != nil && g == gen || len(evs) == 0 || evs[len(evs)-1].Version <= sf.last:
			return rd, gen // nothing to read, or nothing to follow
		case !sf.building && evs[len(evs)-1].Version <= sf.ordBuilt:
			return rd, gen // its build read them all
		}
		f.mu.Unlock()
		rd, gen = f.readForOrder(ctx, evs[0].Site, evs), g
		f.mu.Lock()
	}
	return rd, gen
}

// read reads the events q selects and, when the waiting order follows the
// feed, what the order needs to follow them. f.mu is not held.
func (f *feed) read(ctx context.Context, q EventsQuery, follow bool) ([]Event, *remoteRead, error) {
	evs, err := f.e.Events(ctx, q.Site, q.After, q.Limit)
	if err != nil || !follow || len(evs) == 0 {
		return evs, nil, err
	}
	return evs, f.readForOrder(ctx, q.Site, evs), nil
}

// readForOrder reads what the waiting order of site id needs to follow
// evs, events another daemon committed; nil when the site has no definition.
// A read that fails is returned as its error: the events go on to the
// feed, the order is dropped. f.mu is not held.
func (f *feed) readForOrder(ctx context.Context, id string, evs []Event) *remoteRead {
	s, ok := f.e.defs.Load().byID[id]
	if !ok {
		return nil
	}
	rd, err := read(ctx, f.e, func(ctx context.Context, tx Tx) (remoteRead, error) {
		return readRemote(ctx, tx, s, evs)
	})
	if err != nil {
		f.orderFailed(id, err)
		rd = remoteRead{err: err}
	}
	return &rd
}

// append adds contiguous events and wakes subscribers; it returns those
// it added (a run of evs: they are in version order). f.mu is held.
func (f *feed) append(sf *siteFeed, evs []Event) []Event {
	lo, hi := -1, -1
	for i, ev := range evs {
		if ev.Version != sf.last+1 {
			continue
		}
		sf.ring = append(sf.ring, ev)
		sf.last = ev.Version
		if lo < 0 {
			lo = i
		}
		hi = i + 1
	}
	added := lo >= 0
	if len(sf.ring) >= 2*f.size {
		// Trim in one copy once the ring holds twice its size, so each
		// event is copied at most once: amortised O(1) per append.
		sf.ring = append(sf.ring[:0:0], sf.ring[len(sf.ring)-f.size:]...)
	}
	if !added {
		return nil
	}
	close(sf.wake)
	sf.wake = make(chan struct{})
	return evs[lo:hi]
}

// publish hands the committed events of one request to the feed, with the
// tickets it wrote (for the waiting order), in commit order. When another
// daemon committed in between, it first reads what it missed.
func (f *feed) publish(evs []Event, ws []write, h *heldJob) {
	for i := 0; i < len(evs); {
		id := evs[i].Site
		k := i
		for k < len(evs) && evs[k].Site == id {
			k++
		}
		hs := h
		if i > 0 {
			hs = nil // the held work is of the job's site, its first events
		}
		f.publishSite(id, evs[i:k], ws, hs)
		i = k
	}
}

// publishSite appends a site's committed events, with h, the work of the
// request that made them (nil: none to keep).
func (f *feed) publishSite(id string, evs []Event, ws []write, h *heldJob) {
	sf, err := f.lockSite(id)
	if err != nil {
		f.e.log.Warn("event feed: publish failed", "site", id, "err", err)
		return
	}
	defer f.mu.Unlock()
	sf.used = f.e.clock.mono()
	if evs[0].Version > sf.last+1 {
		// Another daemon committed in between: read what we missed.
		f.mu.Unlock()
		if err := f.catchUp(id, evs[0].Version); err != nil {
			f.e.log.Warn("event feed: catch up failed", "site", id, "err", err)
		}
		f.mu.Lock()
	}
	added := f.append(sf, evs)
	if h != nil {
		// Kept even when a poll overtook the publication and the events
		// are in the feed already: the work is this daemon's.
		f.keepHeld(sf, h)
		f.noteNumbers(id, sf, nil, h.tickets)
	}
	f.noteNumbers(id, sf, added, nil)
	if f.follower != nil {
		f.follower.notify(id, sf.last)
	}
	if len(added) > 0 {
		// When a poll overtook part of the publication (the store's
		// events came in pages), the writes do not tell the rest apart:
		// the order is dropped and built again.
		f.followOrder(sf, orderWork{evs: added, ws: ws, local: len(added) == len(evs)}, sf.ordGen)
	}
}

// Subscription delivers a site's committed events in version order.
type Subscription struct {
	f     *feed
	site  string
	after int64
	quiet bool
}

// Subscribe follows a site's events after version after (0: from the first).
func (e *Engine) Subscribe(site string, after int64) (*Subscription, error) {
	if _, err := e.Site(site); err != nil {
		return nil, err
	}
	e.feed.ahead(site, after)
	return &Subscription{f: e.feed, site: site, after: after}, nil
}

// Version is the last version delivered.
func (s *Subscription) Version() int64 { return s.after }

// Quiet says that this subscriber does not need other daemons' events
// fast (metrics, say): its waiting in Next does not make the follower poll
// the store at its fast interval.
func (s *Subscription) Quiet() { s.quiet = true }

// Reset moves the subscription to a version, e.g. that of a snapshot.
func (s *Subscription) Reset(version int64) { s.after = version }

// Next blocks until events after the last delivered one are committed and
// returns them in order. A subscriber too far behind gets ErrGapTooLarge.
func (s *Subscription) Next(ctx context.Context) ([]Event, error) {
	for {
		evs, wake, err := s.poll(ctx)
		if err != nil || len(evs) > 0 {
			return evs, err
		}
		if wake == nil {
			continue
		}
		if err := s.wait(ctx, wake); err != nil {
			return nil, err
		}
	}
}

// wait blocks until wake is closed, counted as a listener of the follower
// unless the subscription is quiet.
func (s *Subscription) wait(ctx context.Context, wake <-chan struct{}) error {
	if w := s.f.follower; w != nil && !s.quiet {
		w.listening(s.site, 1)
		defer w.listening(s.site, -1)
	}
	select {
	case <-wake:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.f.stop:
		return ErrClosed
	}
}

// Poll is Next without the wait: it returns the events committed after the
// last delivered one, none when there are none yet. The events of a
// request of this engine are in the feed once the request has returned, so
// a reader that polls after it sees them. A subscriber too far behind gets
// ErrGapTooLarge.
func (s *Subscription) Poll(ctx context.Context) ([]Event, error) {
	for {
		evs, wake, err := s.poll(ctx)
		if err != nil || len(evs) > 0 || wake != nil {
			return evs, err
		}
	}
}

// poll returns the events after the last delivered one from the feed, or
// from the store when the feed no longer holds them. With none, it returns
// the channel closed when some arrive, or nil when it should be asked again.
func (s *Subscription) poll(ctx context.Context) ([]Event, <-chan struct{}, error) {
	f := s.f
	sf, err := f.lockSite(s.site)
	if err != nil {
		return nil, nil, err
	}
	if s.after >= sf.last {
		wake := sf.wake
		f.mu.Unlock()
		return nil, wake, nil
	}
	first := sf.last + 1
	if len(sf.ring) > 0 {
		first = sf.ring[0].Version
	}
	if s.after+1 >= first {
		out := append([]Event(nil), sf.ring[s.after+1-first:]...)
		s.after = sf.last
		f.mu.Unlock()
		return out, nil, nil
	}
	gap := sf.last - s.after
	f.mu.Unlock()
	if gap > int64(f.maxReplay) {
		return nil, nil, fmt.Errorf("%w: %d events behind", ErrGapTooLarge, gap)
	}
	evs, err := f.e.Events(ctx, s.site, s.after, f.maxReplay)
	if err != nil {
		return nil, nil, err
	}
	if len(evs) > 0 {
		s.after = evs[len(evs)-1].Version
	}
	return evs, nil, nil
}
