package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// atClock is the instant of local date (y, m, d) at offset off from
// midnight, read on the wall clock so a DST change moves no slot.
func atClock(y int, m time.Month, d int, off time.Duration, loc *time.Location) time.Time {
	return time.Date(y, m, d, int(off/time.Hour), int(off%time.Hour/time.Minute), int(off%time.Minute/time.Second), 0, loc)
}

// Horizon is the last local date (at noon) whose slots are open for
// booking at now: DaysAhead days after today from OpensAt local time, one
// day less before it.
func (sc *Schedule) Horizon(now time.Time, loc *time.Location) time.Time {
	l := now.In(loc)
	y, m, d := l.Date()
	ahead := sc.DaysAhead
	if l.Sub(atClock(y, m, d, 0, loc)) < sc.OpensAt {
		ahead--
	}
	return time.Date(y, m, d+ahead, 12, 0, 0, 0, loc)
}

// SlotsBetween lists the slots the schedule has starting after from, on
// the local dates up to last (inclusive), in order.
func (r *Resource) SlotsBetween(site string, from, last time.Time, loc *time.Location) []Slot {
	sc := &r.Schedule
	var out []Slot
	l := from.In(loc)
	for day := time.Date(l.Year(), l.Month(), l.Day(), 12, 0, 0, 0, loc); !day.After(last); day = day.AddDate(0, 0, 1) {
		if len(sc.Days) > 0 && !slices.Contains(sc.Days, day.Weekday()) {
			continue
		}
		y, m, d := day.Date()
		for off := sc.Open; off+sc.Slot <= sc.Close; off += sc.Slot {
			start := atClock(y, m, d, off, loc)
			if !start.After(from) {
				continue
			}
			out = append(out, Slot{Site: site, Resource: r.ID, Start: start, End: atClock(y, m, d, off+sc.Slot, loc), Capacity: sc.Capacity})
		}
	}
	return out
}

// GenerateSlots creates, for every resource, the slots its schedule has
// from now to its horizon that do not exist yet; closes the future slots
// the schedule no longer has (their bookings stand) and reopens or
// resizes those it has again. Rerun, it changes nothing. It returns how
// many slots it created or changed.
func (e *Engine) GenerateSlots(ctx context.Context) (int, error) {
	return e.generate(ctx, false)
}

// SlotRuns counts the slot generations that ran (at the start, at each
// day's opening time, on GenerateSlots) for a resource of site, or for
// any resource of it when resource is "", whether this daemon or another
// created the slots: a slot list read before the last of them may lack
// the slots it opened. Slot rows carry no event, so a cache of slot lists
// (package booking) compares this number instead. It is counted per
// resource so that the opening of one resource's day, and the hundreds of
// transactions of a large site's opening, leave the other resources'
// lists in the cache.
func (e *Engine) SlotRuns(site, resource string) uint64 {
	e.genMu.Lock()
	defer e.genMu.Unlock()
	return e.slotRuns[site+"/"+resource]
}

// SlotBatch is the most slots one transaction of a slot generation
// creates or changes: a resource's 14 days of short slots are several
// transactions, each well within the store timeout.
const SlotBatch = 1000

// SlotGroup is the most resources of few slots a transaction of a slot
// generation takes together (each costs statements of its own).
const SlotGroup = 16

// groupSlots is the most slots such a transaction creates: a resource of
// more than a quarter of it goes alone (in SlotBatch batches), as each
// did before, so that no transaction grows on a loaded machine.
const groupSlots = 256

// generate runs GenerateSlots for every resource or, onlyDue set, for
// those whose horizon moved since the last run (at the opening time of
// day, and at the first run). Resources of few slots go together, up to
// SlotGroup of them and groupSlots slots a transaction (a site of
// thousands of rooms with a slot or two each is not thousands of
// transactions); one of more slots goes alone, SlotBatch slots a
// transaction. A sweep's run (onlyDue) under a
// ctx with a deadline stops before the next transaction would outrun it,
// and returns what it did without an error: the resources left are still
// due, and the next sweep goes on with them. A run that did anything logs
// its progress.
func (e *Engine) generate(ctx context.Context, onlyDue bool) (int, error) {
	g := genRun{e: e, onlyDue: onlyDue}
	defer func() { g.p.log(e, g.total) }()
	defs := e.defs.Load()
	for _, id := range defs.order {
		s := defs.byID[id]
		for i := range s.Resources {
			r := &s.Resources[i]
			now := e.clock()
			last := r.Schedule.Horizon(now, s.Location)
			key := s.ID + "/" + r.ID
			e.genMu.Lock()
			due := !onlyDue || !e.generated[key].Equal(last)
			e.genMu.Unlock()
			if !due {
				continue
			}
			g.p.due++
			part := genPart{s: s, r: r, key: key, now: now, last: last, want: r.SlotsBetween(s.ID, now, last, s.Location)}
			if g.slots+len(part.want) > groupSlots || len(part.want) > groupSlots/4 || len(g.group) == SlotGroup ||
				(len(g.group) > 0 && g.group[0].s != s) {
				if err := g.flush(ctx); err != nil {
					return g.total, err
				}
			}
			g.group = append(g.group, part)
			g.slots += len(part.want)
		}
	}
	return g.total, g.flush(ctx)
}

// genRun is one run of generate: the resources waiting to go together
// (of one site, slots wanted in all), and what the run did.
type genRun struct {
	e       *Engine
	onlyDue bool
	group   []genPart
	slots   int
	total   int
	p       genProgress
}

// genPart is a resource due: its slots wanted from now to last.
type genPart struct {
	s         *Site
	r         *Resource
	key       string
	now, last time.Time
	want      []Slot
}

// flush generates the resources of the group: several in one
// transaction, or one of many slots in its batches.
func (g *genRun) flush(ctx context.Context) error {
	group := g.group
	g.group, g.slots = nil, 0
	if len(group) == 0 {
		return nil
	}
	if g.onlyDue && (g.p.paused || g.p.outOfTime(ctx)) {
		g.p.paused = true // counted as left for the next run
		return nil
	}
	e := g.e
	start := e.clock.mono()
	var n int
	var err error
	if len(group) == 1 {
		n, err = e.generateResource(ctx, &group[0])
	} else {
		n, err = e.generateParts(ctx, group)
	}
	g.total += n
	if err != nil {
		if ctx.Err() != nil && g.onlyDue && errors.Is(err, ctx.Err()) {
			// The sweep's own deadline, not the store's: the
			// batches done stay done, the next run resumes.
			g.p.paused = true
			return nil
		}
		return err
	}
	g.p.done += len(group)
	g.p.longest = max(g.p.longest, e.clock.since(start))
	e.genMu.Lock()
	for _, pt := range group {
		e.generated[pt.key] = pt.last
		e.slotRuns[pt.key]++
		e.slotRuns[pt.s.ID+"/"]++
	}
	e.genMu.Unlock()
	return nil
}

// genProgress is what one generate run did, for its log line.
type genProgress struct {
	due, done int           // resources due, and done
	longest   time.Duration // the longest transaction (or resource) so far
	paused    bool          // stopped before ctx's deadline
}

// outOfTime reports whether ctx's deadline leaves less than twice the
// longest transaction so far (one store timeout before the first).
func (p *genProgress) outOfTime(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	if !ok {
		return false
	}
	need := 2 * p.longest
	if p.done == 0 {
		need = 0 // the first resource always runs: each run does some
	}
	return clock(nil).until(dl) < need // the deadline is the machine's
}

func (p *genProgress) log(e *Engine, slots int) {
	switch {
	case p.paused:
		e.log.Info("slot generation: resuming at the next sweep", "resources_done", p.done, "resources_left", p.due-p.done, "slots", slots)
	case p.done > 0 && slots > 0:
		e.log.Info("slot generation: done", "resources", p.done, "slots", slots)
	}
}

// slotRange is the slots of resource r of site s starting in [from, to),
// with those of them r's schedule has (want).
type slotRange struct {
	s        *Site
	r        *Resource
	want     []Slot
	from, to time.Time
}

// slots is the range pt brings in line: after now, to the end of its
// last day.
func (pt *genPart) slots() slotRange {
	return slotRange{s: pt.s, r: pt.r, want: pt.want, from: pt.now.Add(time.Millisecond), to: pt.last.AddDate(0, 0, 1)}
}

// generateResource brings the slots of pt in line with its schedule,
// SlotBatch slots a transaction.
func (e *Engine) generateResource(ctx context.Context, pt *genPart) (int, error) {
	all := pt.slots()
	from, total := all.from, 0
	for i := 0; ; i += SlotBatch {
		to, chunk := all.to, all.want[min(i, len(all.want)):]
		if len(chunk) > SlotBatch {
			chunk, to = chunk[:SlotBatch], chunk[SlotBatch].Start
		}
		n, err := e.generateRange(ctx, slotRange{s: all.s, r: all.r, want: chunk, from: from, to: to})
		total += n
		if err != nil || to.Equal(all.to) {
			return total, err
		}
		from = to
	}
}

// generateRange is generateResource's transaction for the slots of sr.
func (e *Engine) generateRange(ctx context.Context, sr slotRange) (int, error) {
	return submit(ctx, e, &job{site: sr.s.ID, lane: laneBulk}, func(ctx context.Context, tx Tx, j *job) (int, error) {
		return e.reshapeRange(ctx, tx, sr)
	})
}

// generateParts generates the resources of parts, of one site and few
// slots each, in one transaction.
func (e *Engine) generateParts(ctx context.Context, parts []genPart) (int, error) {
	return submit(ctx, e, &job{site: parts[0].s.ID, lane: laneBulk}, func(ctx context.Context, tx Tx, j *job) (int, error) {
		n := 0
		for _, pt := range parts {
			m, err := e.reshapeRange(ctx, tx, pt.slots())
			if err != nil {
				return 0, err
			}
			n += m
		}
		return n, nil
	})
}

// reshapeRange brings the slots of sr in line with sr.want, in tx: it
// creates those of want missing, closes those want lacks and reopens or
// resizes the others. It returns how many it changed.
func (e *Engine) reshapeRange(ctx context.Context, tx Tx, sr slotRange) (int, error) {
	s, r, want := sr.s, sr.r, sr.want
	have, err := tx.Slots(ctx, SlotQuery{Site: s.ID, Resource: r.ID, From: sr.from, To: sr.to})
	if err != nil {
		return 0, fmt.Errorf("queue: read slots of %s: %w", r.ID, err)
	}
	wanted := make(map[int64]Slot, len(want))
	for _, w := range want {
		wanted[w.Start.UnixMilli()] = w
	}
	exists := make(map[int64]bool, len(have))
	for _, h := range have {
		exists[h.Start.UnixMilli()] = true
	}
	// Only the missing ones are sent (the store still skips a slot
	// another daemon created meanwhile).
	var missing []Slot
	for _, w := range want {
		if !exists[w.Start.UnixMilli()] {
			missing = append(missing, w)
		}
	}
	n, err := tx.InsertSlots(ctx, missing)
	if err != nil {
		return 0, fmt.Errorf("queue: create slots of %s: %w", r.ID, err)
	}
	for _, h := range have {
		w, ok := wanted[h.Start.UnixMilli()]
		next := h
		if ok {
			next.Capacity, next.Closed, next.End = w.Capacity, false, w.End
		} else {
			next.Closed = true
		}
		if next.Capacity == h.Capacity && next.Closed == h.Closed && next.End.Equal(h.End) {
			continue
		}
		changed, err := tx.ReshapeSlot(ctx, next)
		if err != nil {
			return 0, fmt.Errorf("queue: reshape slot %d of %s: %w", h.ID, r.ID, err)
		}
		if changed {
			n++
		} else {
			e.log.Warn("slot keeps its capacity: more bookings than the new schedule allows",
				"site", s.ID, "resource", r.ID, "slot", h.ID, "booked", h.Booked, "capacity", next.Capacity)
		}
	}
	return n, nil
}

// Slots lists the slots of a site on a local date ("2006-01-02"), of one
// resource or, resource empty, of every resource.
func (e *Engine) Slots(ctx context.Context, site, resource, date string) ([]Slot, error) {
	s, err := e.Site(site)
	if err != nil {
		return nil, err
	}
	if resource != "" {
		if _, err := s.resource(resource); err != nil {
			return nil, err
		}
	}
	d, err := time.ParseInLocation(time.DateOnly, date, s.Location)
	if err != nil {
		return nil, fmt.Errorf("%w: date %q: want YYYY-MM-DD", ErrBadRequest, date)
	}
	y, m, dd := d.Date()
	q := SlotQuery{Site: s.ID, Resource: resource, From: atClock(y, m, dd, 0, s.Location), To: atClock(y, m, dd+1, 0, s.Location)}
	return read(ctx, e, func(ctx context.Context, tx Tx) ([]Slot, error) {
		return tx.Slots(ctx, q)
	})
}
