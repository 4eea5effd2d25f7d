package queue

import (
	"context"
	"fmt"
	"time"
)

// order is one site's waiting tickets in memory, in call order per queue
// and service day, and its counters' modes: what a position (people ahead,
// estimated wait) is made of, answered in O(log n) instead of a COUNT over
// the waiting rows.
//
// It follows the site's event feed, version by version, in order (the
// feed's lock guards it; the reads from the store run without it): the tickets a request of this engine wrote come with its
// events (write); for events another daemon committed, the tickets they
// name are read again from the store, and the band a placement renumbers
// (a revisit issued, a re-entry, a transfer to a service) is read whole.
// Every ticket change has an event, so once the feed has appended a
// version the order reflects it. When a read fails the order is dropped
// and built again from the store on its next use; until then positions
// come from the store.
type order struct {
	site   *Site
	queues map[queueDay]*tree
	spots  map[int64]queueSpot
	modes  map[string]CounterMode // counters written so far; others are open
}

type queueDay struct{ day, queue string }

type queueSpot struct {
	qd queueDay
	s  spot
}

// write is a ticket a request wrote: the whole ticket (t), or only a new
// sort key (SetSortKey, when t is nil).
type write struct {
	t       *Ticket
	id, key int64
}

// buildOrder reads the waiting tickets and counter modes of a site. It
// runs without the feed's lock, after the feed appended its last version,
// so the order reflects at least every version the feed had; the feed
// applies what it appended meanwhile after it (feed.rebuild).
func buildOrder(ctx context.Context, tx Tx, s *Site) (*order, error) {
	ws, err := tx.Find(ctx, Filter{Site: s.ID, Statuses: []Status{StatusWaiting}})
	if err != nil {
		return nil, fmt.Errorf("queue: build waiting order of %s: %w", s.ID, err)
	}
	cs, err := tx.Counters(ctx, s.ID)
	if err != nil {
		return nil, fmt.Errorf("queue: build waiting order of %s: %w", s.ID, err)
	}
	o := &order{site: s, queues: map[queueDay]*tree{}, spots: map[int64]queueSpot{}, modes: map[string]CounterMode{}}
	for i := range ws {
		o.put(&ws[i])
	}
	for _, c := range cs {
		o.modes[c.ID] = c.Mode
	}
	return o, nil
}

// put records t as it is now: in its queue if it waits there (not for a
// given counter), nowhere otherwise.
func (o *order) put(t *Ticket) {
	o.remove(t.ID)
	if t.Status != StatusWaiting || t.TargetCounter != "" {
		return
	}
	qs := queueSpot{qd: queueDay{t.Day, t.Queue}, s: spot{rank: t.Rank, key: t.SortKey, id: t.ID}}
	tr := o.queues[qs.qd]
	if tr == nil {
		tr = &tree{}
		o.queues[qs.qd] = tr
	}
	tr.insert(qs.s)
	o.spots[t.ID] = qs
}

func (o *order) remove(id int64) {
	qs, ok := o.spots[id]
	if !ok {
		return
	}
	delete(o.spots, id)
	tr := o.queues[qs.qd]
	tr.delete(qs.s)
	if tr.len() == 0 {
		delete(o.queues, qs.qd)
	}
}

// setKey moves a waiting ticket to a new sort key.
func (o *order) setKey(id, key int64) {
	qs, ok := o.spots[id]
	if !ok {
		return
	}
	tr := o.queues[qs.qd]
	tr.delete(qs.s)
	qs.s.key = key
	tr.insert(qs.s)
	o.spots[id] = qs
}

// band replaces the tickets of one rank of a queue by ws, read from the
// store: a placement may have renumbered them all.
func (o *order) band(qd queueDay, rank int, ws []Ticket) {
	if tr := o.queues[qd]; tr != nil {
		var ids []int64
		walk(tr.root, func(s spot) {
			if s.rank == rank {
				ids = append(ids, s.id)
			}
		})
		for _, id := range ids {
			o.remove(id)
		}
	}
	for i := range ws {
		o.put(&ws[i])
	}
}

func walk(n *node, fn func(spot)) {
	if n == nil {
		return
	}
	walk(n.left, fn)
	fn(n.s)
	walk(n.right, fn)
}

// local applies what a request of this engine wrote, with its events.
func (o *order) local(evs []Event, ws []write) {
	for _, w := range ws {
		if w.t != nil {
			o.put(w.t)
		} else {
			o.setKey(w.id, w.key)
		}
	}
	o.counterModes(evs)
}

func (o *order) counterModes(evs []Event) {
	for i := range evs {
		switch evs[i].Type {
		case EventCounterPaused:
			o.modes[evs[i].Counter] = CounterPaused
		case EventCounterOpened:
			o.modes[evs[i].Counter] = CounterOpen
		}
	}
}

// placed reports whether an event may have renumbered its ticket's band
// (see place).
func placed(ev *Event) bool {
	switch ev.Type {
	case EventReentered, EventTransferred:
		return ev.Status == StatusWaiting
	case EventIssued:
		return ev.Class == ClassRevisit
	}
	return false
}

// remoteRead is what the order reads from the store to follow events
// another daemon committed: the tickets they name as they are now (nil:
// not found), and the bands a placement may have renumbered; err, when
// the read failed.
type remoteRead struct {
	tickets map[int64]*Ticket
	bands   []bandRead
	err     error
}

type bandKey struct {
	qd   queueDay
	rank int
}

type bandRead struct {
	k  bandKey
	ws []Ticket
}

// readRemote reads what following evs, events of site s, takes. It needs
// no order: the feed reads it without its lock, before it appends evs.
func readRemote(ctx context.Context, tx Tx, s *Site, evs []Event) (remoteRead, error) {
	cur, err := tickets(ctx, tx, s.ID, evs)
	if err != nil {
		return remoteRead{}, err
	}
	rd := remoteRead{tickets: cur}
	seen := map[bandKey]bool{}
	for i := range evs {
		ev := &evs[i]
		if !placed(ev) {
			continue
		}
		k := bandKey{queueDay{ev.Day, ev.Service}, s.rank(ev.Class)}
		if seen[k] {
			continue
		}
		seen[k] = true
		ws, err := tx.Waiting(ctx, WaitingQuery{Site: s.ID, Day: k.qd.day, Service: k.qd.queue, Rank: k.rank})
		if err != nil {
			return remoteRead{}, fmt.Errorf("queue: follow a placement in %s: %w", k.qd.queue, err)
		}
		rd.bands = append(rd.bands, bandRead{k, ws})
	}
	return rd, nil
}

// remote applies events another daemon committed, with what readRemote
// read for them: each ticket as it was read, and the bands a placement may
// have renumbered. Applied in version order, each ticket ends as its last
// event left it.
func (o *order) remote(evs []Event, rd remoteRead) {
	done := make(map[int64]bool, len(rd.tickets))
	for i := range evs {
		ev := &evs[i]
		switch t, read := rd.tickets[ev.TicketID]; {
		case ev.TicketID == 0 || done[ev.TicketID]:
		case read:
			// As it is now: once, at its first event.
			done[ev.TicketID] = true
			if t == nil {
				o.remove(ev.TicketID)
			} else {
				o.put(t)
			}
		default:
			// Out of the waiting order at this event, and no later
			// event of the batch puts it back (it would be read).
			o.remove(ev.TicketID)
		}
	}
	for _, b := range rd.bands {
		o.band(b.k.qd, b.k.rank, b.ws)
	}
	o.counterModes(evs)
}

// tickets reads, in one query, the tickets of evs that an event leaves
// waiting (or whose status it does not tell): by ID, nil for one not
// found. A ticket whose every event here leaves it out of the waiting
// order (called, served, cancelled...) needs no read.
func tickets(ctx context.Context, tx Tx, site string, evs []Event) (map[int64]*Ticket, error) {
	var ids []int64
	want := map[int64]bool{}
	for i := range evs {
		ev := &evs[i]
		if ev.TicketID == 0 || want[ev.TicketID] || (ev.Status != "" && ev.Status != StatusWaiting) {
			continue
		}
		want[ev.TicketID] = true
		ids = append(ids, ev.TicketID)
	}
	out := make(map[int64]*Ticket, len(ids))
	for len(ids) > 0 {
		n := min(len(ids), 500) // bounded statements
		ts, err := tx.Find(ctx, Filter{Site: site, IDs: ids[:n]})
		if err != nil {
			return nil, fmt.Errorf("queue: follow %d tickets in the waiting order: %w", n, err)
		}
		for _, id := range ids[:n] {
			out[id] = nil
		}
		for i := range ts {
			out[ts[i].ID] = &ts[i]
		}
		ids = ids[n:]
	}
	return out, nil
}

// position is where t stands: people ahead in its queue and the estimated
// wait, the people ahead times the service's average service time shared
// by the open counters serving it.
func (o *order) position(t *Ticket) (Position, error) {
	p := Position{Ticket: *t}
	if t.Status != StatusWaiting {
		return p, nil
	}
	if tr := o.queues[queueDay{t.Day, t.Queue}]; tr != nil {
		p.Ahead = tr.before(spot{rank: t.Rank, key: t.SortKey, id: t.ID})
	}
	sv, err := o.site.service(t.Queue)
	if err != nil {
		return p, err
	}
	p.Wait = estimate(o.site, sv, p.Ahead, func(id string) bool { m, ok := o.modes[id]; return ok && m != CounterOpen })
	return p, nil
}

// estimate is the wait of n people ahead in service sv: n times its average
// service time, shared by the counters serving it that are not paused.
func estimate(s *Site, sv *Service, n int, paused func(counter string) bool) time.Duration {
	if n == 0 || sv.AvgService == 0 {
		return 0
	}
	open := 0
	for _, c := range s.Counters {
		for _, cs := range c.Services {
			if cs.Service == sv.Code && !paused(c.ID) {
				open++
				break
			}
		}
	}
	return time.Duration(n) * sv.AvgService / time.Duration(max(open, 1))
}
