package queue

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"
)

// ServiceStatus is the live picture of one service of a day. Its figures
// are defined once, here and in the reducer of package view, which computes
// the same from the event log:
//   - Issued, Called and AvgWait count the tickets of the day by the service
//     that issued them (Ticket.Service), whichever queue they are in now;
//     Called is the tickets called at least once, AvgWait their mean time
//     from issue to first call.
//   - Waiting, Served, NoShows and Cancelled count the tickets of the day
//     whose status is now WAITING, DONE, NO_SHOW or CANCELLED, by the queue
//     they are in (Ticket.Queue): a no-show that was re-entered is waiting
//     again, not a no-show. LongestWait is that of the ticket in the queue
//     waiting longest now (since its issue, re-entry or transfer), and
//     AvgService the mean time from start to done of the served ones.
type ServiceStatus struct {
	Code        string
	Waiting     int
	LongestWait time.Duration
	AvgWait     time.Duration
	AvgService  time.Duration
	Issued      int
	Called      int
	Served      int
	NoShows     int
	Cancelled   int
	Open        bool // taking tickets now
	Full        bool // daily cap reached
}

// CounterStatus is the live picture of one counter.
type CounterStatus struct {
	ID     string
	Mode   CounterMode
	Ticket *Ticket // called or served now
	Since  time.Time
	Served int // DONE today
}

// ResourceDay is the bookings of one resource on one service day (the day
// of their slots), by what became of them; the reducer of package view
// computes the same from the BOOKING_* events:
//   - Booked: HELD or BOOKED, holding a place and not checked in or missed
//     yet;
//   - CheckedIn, Missed: CHECKED_IN (a ticket) or MISSED;
//   - Cancelled: CANCELLED, or holds EXPIRED.
type ResourceDay struct {
	Resource  string
	Day       string
	Booked    int
	CheckedIn int
	Missed    int
	Cancelled int
}

// Snapshot is a site's state at one event version.
type Snapshot struct {
	Site     string
	Day      string
	Version  int64
	At       time.Time
	Services []ServiceStatus
	Counters []CounterStatus
	// Resources are the booking figures of every resource with bookings
	// on a day from Day on, by day then configuration order (a resource
	// no longer configured last); none for a site without resources.
	Resources []ResourceDay
}

// ResourceScope says which booking figures a snapshot counts: reading them
// costs a row per booking of the days it covers.
type ResourceScope int

const (
	// ResourcesFromDay counts the bookings of every day from the service
	// day on (what a view restored from the snapshot needs to carry on
	// past midnight).
	ResourcesFromDay ResourceScope = iota
	// ResourcesOfDay counts the bookings of the service day alone (what a
	// device's SNAPSHOT lists).
	ResourcesOfDay
	// ResourcesNone reads no booking (the HTTP snapshot shows none).
	ResourcesNone
)

// Snapshot reads a consistent picture of a site: every service and counter
// and the event version it reflects, and the booking figures from its day
// on.
func (e *Engine) Snapshot(ctx context.Context, site string) (Snapshot, error) {
	return e.SnapshotOf(ctx, site, ResourcesFromDay)
}

// MaxSnapshotResources is the most resources a snapshot reads the
// bookings of one by one (SnapshotOf's only); more, and it reads those of
// every resource.
const MaxSnapshotResources = 32

// SnapshotOf is Snapshot with the booking figures of scope only, and of
// the resources only names when it names any: a display at the door of
// two rooms costs a read of their bookings, not of the whole site's
// (only longer than MaxSnapshotResources costs the site's; Resources
// holds those named all the same).
func (e *Engine) SnapshotOf(ctx context.Context, site string, scope ResourceScope, only ...string) (Snapshot, error) {
	s, err := e.Site(site)
	if err != nil {
		return Snapshot{}, err
	}
	now := e.clock()
	snap, err := read(ctx, e, func(ctx context.Context, tx Tx) (Snapshot, error) {
		snap := Snapshot{Site: s.ID, Day: s.Day(now), At: now}
		v, err := tx.LastVersion(ctx, s.ID)
		if err != nil {
			return Snapshot{}, err
		}
		rows, err := tx.Stats(ctx, SiteDay{Site: s.ID, Day: snap.Day})
		if err != nil {
			return Snapshot{}, err
		}
		states, err := tx.Counters(ctx, s.ID)
		if err != nil {
			return Snapshot{}, err
		}
		snap.Version = v
		snap.Services = serviceStatus(s, rows, now)
		byID := map[string]CounterState{}
		for _, cs := range states {
			byID[cs.ID] = cs
		}
		for _, c := range s.Counters {
			cs, ok := byID[c.ID]
			st := CounterStatus{ID: c.ID, Mode: CounterOpen}
			if ok {
				st.Mode, st.Since = cs.Mode, cs.Since
				if cs.TicketID != 0 {
					t, err := tx.Ticket(ctx, cs.TicketID)
					if err != nil {
						return Snapshot{}, err
					}
					if t.Status == StatusCalled || t.Status == StatusServing {
						st.Ticket = t
					}
				}
			}
			for _, r := range rows {
				if r.Counter == c.ID && r.Status == StatusDone {
					st.Served += r.N
				}
			}
			snap.Counters = append(snap.Counters, st)
		}
		if scope == ResourcesNone {
			return snap, nil
		}
		snap.Resources, err = e.figures(ctx, tx, s, &snap, scope, only)
		return snap, err
	})
	if err != nil {
		return Snapshot{}, fmt.Errorf("queue: snapshot of %s: %w", s.ID, err)
	}
	return snap, nil
}

// resourceDays counts the bookings of site s by resource and slot day,
// from day on (of day alone when only), of the resources of ids (none:
// all).
func resourceDays(ctx context.Context, tx Tx, s *Site, day string, only bool, ids []string) ([]ResourceDay, error) {
	if len(s.Resources) == 0 {
		return nil, nil
	}
	d, err := time.ParseInLocation(time.DateOnly, day, s.Location)
	if err != nil {
		return nil, fmt.Errorf("queue: snapshot: service day %q: %w", day, err)
	}
	// Every slot of the day ends after its start, which is after this
	// (a day later than local midnight by the rollover, less a DST hour).
	f := BookingFilter{Site: s.ID, EndAfter: d.Add(s.Rollover - time.Hour),
		Statuses: []BookingStatus{BookingHeld, BookingBooked, BookingCancelled, BookingCheckedIn, BookingMissed, BookingExpired}}
	if only {
		// Every slot of a later day starts after this (its local
		// midnight by the rollover, plus a DST hour at most).
		f.StartBefore = d.AddDate(0, 0, 1).Add(s.Rollover + time.Hour)
	}
	bs, err := findResourceBookings(ctx, tx, f, ids)
	if err != nil {
		return nil, err
	}
	rank := map[string]int{}
	for i, r := range s.Resources {
		rank[r.ID] = i
	}
	byKey := map[[2]string]*ResourceDay{}
	var out []*ResourceDay
	for _, b := range bs {
		bd := s.Day(b.Start)
		if bd < day || (only && bd != day) {
			continue
		}
		k := [2]string{bd, b.Resource}
		r := byKey[k]
		if r == nil {
			r = &ResourceDay{Resource: b.Resource, Day: bd}
			byKey[k] = r
			out = append(out, r)
		}
		switch b.Status {
		case BookingHeld, BookingBooked:
			r.Booked++
		case BookingCheckedIn:
			r.CheckedIn++
		case BookingMissed:
			r.Missed++
		case BookingCancelled, BookingExpired:
			r.Cancelled++
		}
	}
	slices.SortFunc(out, func(a, b *ResourceDay) int {
		if c := strings.Compare(a.Day, b.Day); c != 0 {
			return c
		}
		ra, oka := rank[a.Resource]
		rb, okb := rank[b.Resource]
		switch {
		case oka && okb:
			return ra - rb
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Resource, b.Resource)
	})
	days := make([]ResourceDay, len(out))
	for i, r := range out {
		days[i] = *r
	}
	return days, nil
}

// figures are the booking figures of a snapshot of site s at snap's day
// and version: those of the last snapshot of the site taken with all of
// them at the same day, scope and version when there is one (a booking
// changes only with an event, which moves the version), else read; a
// snapshot that names few resources reads theirs alone. The consoles
// walking the pages of a site of thousands of resources, or the
// displays subscribing after a restart, cost one read of the day's
// bookings, not one each.
func (e *Engine) figures(ctx context.Context, tx Tx, s *Site, snap *Snapshot, scope ResourceScope, only []string) ([]ResourceDay, error) {
	key := figuresKey{site: s.ID, day: snap.Day, scope: scope, version: snap.Version,
		losses: e.losses.found.Load() + e.losses.restored.Load()}
	e.figMu.Lock()
	days, ok := e.figs[key]
	e.figMu.Unlock()
	if ok {
		return keepResources(days, only), nil
	}
	if len(only) > 0 && len(only) <= MaxSnapshotResources {
		return resourceDays(ctx, tx, s, snap.Day, scope == ResourcesOfDay, only)
	}
	days, err := resourceDays(ctx, tx, s, snap.Day, scope == ResourcesOfDay, nil)
	if err != nil {
		return nil, err
	}
	e.figMu.Lock()
	if e.figs == nil {
		e.figs = map[figuresKey][]ResourceDay{}
	}
	for k := range e.figs {
		if k.site == key.site && k.scope == key.scope {
			delete(e.figs, k) // one per site and scope: the latest
		}
	}
	e.figs[key] = days
	e.figMu.Unlock()
	return keepResources(days, only), nil
}

// figuresKey says what a snapshot's booking figures are of: a lost-work
// repair (which may give versions again) starts afresh.
type figuresKey struct {
	site, day string
	scope     ResourceScope
	version   int64
	losses    int64
}

// keepResources is a copy of the figures of days of the resources of
// only (all of them when none).
func keepResources(days []ResourceDay, only []string) []ResourceDay {
	if len(only) == 0 {
		return slices.Clone(days)
	}
	keep := make(map[string]bool, len(only))
	for _, id := range only {
		keep[id] = true
	}
	var out []ResourceDay
	for _, d := range days {
		if keep[d.Resource] {
			out = append(out, d)
		}
	}
	return out
}

// findResourceBookings is FindBookings of f for the resources of ids (all
// of them when none): one read per resource when they are few, else one
// of all, filtered.
func findResourceBookings(ctx context.Context, tx Tx, f BookingFilter, ids []string) ([]Booking, error) {
	if len(ids) == 0 {
		return tx.FindBookings(ctx, f)
	}
	if len(ids) > MaxSnapshotResources {
		return nil, fmt.Errorf("queue: bookings of %d resources: read those of all", len(ids))
	}
	var out []Booking
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		f.Resource = id
		bs, err := tx.FindBookings(ctx, f)
		if err != nil {
			return nil, err
		}
		out = append(out, bs...)
	}
	return out, nil
}

func serviceStatus(s *Site, rows []StatRow, now time.Time) []ServiceStatus {
	out := make([]ServiceStatus, 0, len(s.Services))
	for _, sv := range s.Services {
		st := ServiceStatus{Code: sv.Code, Open: sv.OpenAt(now, s.Location)}
		var sumWait, sumSvc int64
		var nSvc int
		for _, r := range rows {
			if r.Issuer == sv.Code {
				st.Issued += r.N
				sumWait += r.SumWait
				st.Called += r.NWait
			}
			if r.Service != sv.Code {
				continue
			}
			switch r.Status {
			case StatusWaiting:
				st.Waiting += r.N
				if r.MinWaitingSince > 0 {
					w := now.Sub(time.UnixMilli(r.MinWaitingSince))
					st.LongestWait = max(st.LongestWait, w)
				}
			case StatusDone:
				st.Served += r.N
				sumSvc += r.SumService
				nSvc += r.NService
			case StatusNoShow:
				st.NoShows += r.N
			case StatusCancelled:
				st.Cancelled += r.N
			}
		}
		if st.Called > 0 {
			st.AvgWait = time.Duration(sumWait/int64(st.Called)) * time.Millisecond
		}
		if nSvc > 0 {
			st.AvgService = time.Duration(sumSvc/int64(nSvc)) * time.Millisecond
		}
		st.Full = sv.DailyCap > 0 && st.Issued >= sv.DailyCap
		out = append(out, st)
	}
	return out
}

// Position is where a ticket stands in its queue.
type Position struct {
	Ticket Ticket
	Ahead  int           // waiting tickets to be called before it
	Wait   time.Duration // estimated wait
	// Appointment is the slot start of the booking a check-in turned into
	// this ticket (CheckIn sets it); zero otherwise.
	Appointment time.Time
}

// Position finds a ticket of today by number and estimates its wait: the
// people ahead times the service's average service time, shared by the open
// counters serving it.
func (e *Engine) Position(ctx context.Context, site, number string) (Position, error) {
	s, err := e.Site(site)
	if err != nil {
		return Position{}, err
	}
	return read(ctx, e, func(ctx context.Context, tx Tx) (Position, error) {
		t, err := byNumber(ctx, tx, todays(s, number, e.clock()))
		if err != nil {
			return Position{}, err
		}
		return e.position(ctx, tx, s, t)
	})
}

// TicketPosition is Position for a ticket already read, e.g. just
// returned by a request of this engine: from the waiting order in memory,
// which has every request of this engine that returned and what other
// daemons committed up to the feed's last read; from the store (the
// ticket read again) when the order is not available.
func (e *Engine) TicketPosition(ctx context.Context, t Ticket) (Position, error) {
	s, err := e.Site(t.Site)
	if err != nil {
		return Position{}, err
	}
	if p, ok := e.feed.position(s.ID, &t, 0); ok {
		return p, nil
	}
	return e.storeTicketPosition(ctx, s, t)
}

// storeTicketPosition reads t again and counts its position in the store.
func (e *Engine) storeTicketPosition(ctx context.Context, s *Site, t Ticket) (Position, error) {
	return read(ctx, e, func(ctx context.Context, tx Tx) (Position, error) {
		cur, err := tx.Ticket(ctx, t.ID)
		if err != nil {
			return Position{}, err
		}
		return e.storePosition(ctx, tx, s, cur)
	})
}

// OrderPosition is where t stands by the waiting order in memory alone
// (what TicketPosition answers when it can); false when the order is not
// available. The store conformance suite checks it against the store's
// count.
func (e *Engine) OrderPosition(t Ticket) (Position, bool) {
	return e.feed.position(t.Site, &t, 0)
}

// position is where t, read in tx, stands: from the waiting order when
// it is available, else from the store.
func (e *Engine) position(ctx context.Context, tx Tx, s *Site, t *Ticket) (Position, error) {
	if p, ok := e.feed.position(s.ID, t, 0); ok {
		return p, nil
	}
	return e.storePosition(ctx, tx, s, t)
}

// storePosition is position counted in the store: a COUNT over the
// waiting tickets ahead, and the counters' modes.
func (e *Engine) storePosition(ctx context.Context, tx Tx, s *Site, t *Ticket) (Position, error) {
	p := Position{Ticket: *t}
	if t.Status != StatusWaiting {
		return p, nil
	}
	n, err := tx.Ahead(ctx, t)
	if err != nil {
		return p, fmt.Errorf("queue: position of %s: %w", t.Number, err)
	}
	p.Ahead = n
	sv, err := s.service(t.Queue)
	if err != nil {
		return p, err
	}
	if n == 0 || sv.AvgService == 0 {
		return p, nil // no wait, whichever counters are open
	}
	states, err := tx.Counters(ctx, s.ID)
	if err != nil {
		return p, fmt.Errorf("queue: position of %s: %w", t.Number, err)
	}
	paused := map[string]bool{}
	for _, cs := range states {
		paused[cs.ID] = cs.Mode != CounterOpen
	}
	p.Wait = estimate(s, sv, n, func(id string) bool { return paused[id] })
	return p, nil
}

// Events lists up to limit committed events of a site after a version.
func (e *Engine) Events(ctx context.Context, site string, after int64, limit int) ([]Event, error) {
	evs, err := read(ctx, e, func(ctx context.Context, tx Tx) ([]Event, error) {
		return tx.Events(ctx, EventsQuery{Site: site, After: after, Limit: limit})
	})
	if err != nil {
		return nil, fmt.Errorf("queue: events of %s after %d: %w", site, after, err)
	}
	return evs, nil
}

// EventPages yields a site's events after a version in pages of up to
// page events, each read in a transaction of its own (within the store
// timeout, however long the log), until a short page; a read that fails,
// or ctx ending between pages, is yielded as the error and ends it.
func (e *Engine) EventPages(ctx context.Context, site string, after int64, page int) iter.Seq2[[]Event, error] {
	return func(yield func([]Event, error) bool) {
		for {
			evs, err := e.Events(ctx, site, after, page)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(evs, nil) || len(evs) < page {
				return
			}
			after = evs[len(evs)-1].Version
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
		}
	}
}

// LastVersion is the newest committed event version of a site.
func (e *Engine) LastVersion(ctx context.Context, site string) (int64, error) {
	v, err := read(ctx, e, func(ctx context.Context, tx Tx) (int64, error) {
		return tx.LastVersion(ctx, site)
	})
	if err != nil {
		return 0, fmt.Errorf("queue: last version of %s: %w", site, err)
	}
	return v, nil
}
