package queue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file is what a daemon does when the store has lost work it
// acknowledged: a database restored from a backup, or a standby promoted
// before it had received the primary's last commits (asynchronous
// replication). The tickets of that work were printed; their numbers must
// not be given to anyone else.
//
// Each daemon keeps, per site, the highest event version it committed or
// followed (the feed's last) and the highest number of each service day
// (siteFeed.high), and the work of its own recent requests (siteFeed.held:
// events, the tickets and counters they wrote, their stored results). A
// batch whose events the store numbers at or below that version, or whose
// kiosk takes a number at or below that number, finds the store behind: it
// is rolled back (lostError) before anything is given out, and the site is
// restored first, in the next transaction of its committer:
//   - the versions the store lost are skipped (a gap that the loss record
//     explains), so no version is ever given to two different events;
//   - this daemon's requests whose events fell in the gap are applied again:
//     their tickets with their ids and numbers, counter states, stored
//     results (a retry still gets its first answer), and their events, with
//     new versions after the gap;
//   - every day counter moves past every number this daemon knows was given,
//     its own and those it followed;
//   - a LossRecord says what was lost and what came back (`check` prints it),
//     the loss is logged at ERROR and counted (Engine.Losses).
// Until that commits, the site's requests are refused as "store unavailable"
// (retryable); the requests of the batch that found the loss are then run
// again. Several daemons each restore what they hold: another daemon whose
// follower finds a recorded gap restores its own requests of it.

// LossRecord is one loss of acknowledged work a daemon found and repaired.
type LossRecord struct {
	Site   string
	At     time.Time
	Daemon string // the daemon that repaired it (Opts.Name)
	// StoreVersion is where the store stood, KnownVersion the newest version
	// the daemon had committed or followed; GapFrom..GapTo are the versions
	// skipped (none when GapFrom > GapTo).
	StoreVersion, KnownVersion int64
	GapFrom, GapTo             int64
	// Restored counts the requests, tickets and events applied again.
	Requests, Tickets, Events int
	// Numbers are the day counters moved past numbers known to be given,
	// as "service day: from -> to".
	Numbers []string
	// Lost names the acknowledged tickets the daemon could not restore
	// (it did not hold their work, or another ticket took their number).
	Lost []string
	// Reason is how the loss was found.
	Reason string
}

// String prints the record on one line.
func (r LossRecord) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "site %s at %s: store at version %d, daemon %s knew %d (%s)", r.Site, r.At.UTC().Format(time.RFC3339),
		r.StoreVersion, cmp.Or(r.Daemon, "?"), r.KnownVersion, r.Reason)
	if r.GapFrom <= r.GapTo && r.GapTo > 0 {
		fmt.Fprintf(&b, "; versions %d-%d skipped", r.GapFrom, r.GapTo)
	}
	fmt.Fprintf(&b, "; restored %d requests, %d tickets, %d events", r.Requests, r.Tickets, r.Events)
	if len(r.Numbers) > 0 {
		fmt.Fprintf(&b, "; numbers moved on: %s", strings.Join(r.Numbers, ", "))
	}
	if len(r.Lost) > 0 {
		fmt.Fprintf(&b, "; NOT restored: %s", strings.Join(r.Lost, ", "))
	}
	return b.String()
}

// LossTx is what a store offers to repair lost work, inside a transaction.
type LossTx interface {
	// SkipVersions moves a site's version on by n without events and
	// returns the new last version.
	SkipVersions(ctx context.Context, site string, n int64) (int64, error)
	// RestoreTickets stores tickets with the ids they had (InsertTickets),
	// and makes sure the store gives no later ticket one of those ids, nor
	// one up to past (ids other daemons gave that may come back).
	RestoreTickets(ctx context.Context, ts []*Ticket, past int64) error
	// RaiseSeq moves a service day's counter up to to, if it is below, and
	// returns where it stood.
	RaiseSeq(ctx context.Context, k DayKey, to int) (int, error)
	// RecordLoss stores a loss record.
	RecordLoss(ctx context.Context, r LossRecord) error
	// Losses lists a site's loss records with GapTo above after, oldest first.
	Losses(ctx context.Context, site string, after int64) ([]LossRecord, error)
}

// ErrLostWork is the refusal of a site's requests while its lost work is
// being restored: retryable, as a store that is unavailable.
var ErrLostWork = fmt.Errorf("%w: the database lost work it had acknowledged; restoring it", ErrUnavailable)

// lostError is what a batch that finds the store behind fails with.
type lostError struct {
	site   string
	known  int64
	reason string
	// gapFrom..gapTo, when set, are versions another daemon skipped: this
	// one applies its own requests of them again.
	gapFrom, gapTo int64
}

func (e *lostError) Error() string {
	return fmt.Sprintf("queue: site %s: store behind this daemon (%s): %v", e.site, e.reason, ErrLostWork)
}

func (e *lostError) Unwrap() error { return ErrLostWork }

// heldJob is the work of one committed request of this daemon, kept so that
// it can be applied again after the store lost it.
type heldJob struct {
	events   []Event
	tickets  []Ticket // the latest state of each ticket it wrote
	counters []CounterState
	save     *SavedRequest
}

// first and last are the versions of the job's events.
func (h *heldJob) first() int64 { return h.events[0].Version }
func (h *heldJob) last() int64  { return h.events[len(h.events)-1].Version }

// heldOf is the work of a committed job, nil when it wrote no events.
func heldOf(j *job) *heldJob {
	if len(j.events) == 0 {
		return nil
	}
	h := &heldJob{events: slices.Clone(j.events), counters: slices.Clone(j.counters)}
	byID := map[int64]int{}
	for _, w := range j.writes {
		switch {
		case w.t != nil:
			if i, ok := byID[w.t.ID]; ok {
				h.tickets[i] = *w.t
				continue
			}
			byID[w.t.ID] = len(h.tickets)
			h.tickets = append(h.tickets, *w.t)
		default: // a sort key moved
			if i, ok := byID[w.id]; ok {
				h.tickets[i].SortKey = w.key
			}
		}
	}
	if j.save != nil {
		s := *j.save
		h.save = &s
	}
	return h
}

// seqOf is the sequence of a ticket number of a service: the digits after
// its prefix; 0 when the number does not parse.
func seqOf(number, prefix string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(number, prefix))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// noteNumbers raises the site's highest numbers by the ISSUED events evs
// (and, for this daemon's own requests, the tickets they wrote). f.mu is
// held.
func (f *feed) noteNumbers(id string, sf *siteFeed, evs []Event, ts []Ticket) {
	var s *Site
	for _, ev := range evs {
		f.maxTicket = max(f.maxTicket, ev.TicketID)
		if ev.Type != EventIssued || ev.Number == "" {
			continue
		}
		if s == nil {
			if s = f.e.defs.Load().byID[id]; s == nil {
				return
			}
		}
		prefix := ""
		if svc, err := s.service(ev.Issuer); err == nil {
			prefix = svc.Prefix
		}
		sf.raise(DayKey{Site: id, Service: ev.Issuer, Day: ev.Day}, seqOf(ev.Number, prefix))
	}
	for _, t := range ts {
		f.maxTicket = max(f.maxTicket, t.ID)
		sf.raise(DayKey{Site: id, Service: t.Service, Day: t.Day}, t.Seq)
	}
}

// raise records that number seq of k was given.
func (sf *siteFeed) raise(k DayKey, seq int) {
	if seq <= 0 {
		return
	}
	if sf.high == nil {
		sf.high = map[DayKey]int{}
	}
	if seq > sf.high[k] {
		if _, ok := sf.high[k]; !ok {
			sf.pruneDays(k.Day)
		}
		sf.high[k] = seq
	}
}

// pruneDays forgets the numbers of days more than two days before day: a
// counter of a day long gone gives no numbers any more.
func (sf *siteFeed) pruneDays(day string) {
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return
	}
	cut := d.AddDate(0, 0, -2).Format(time.DateOnly)
	for k := range sf.high {
		if k.Day < cut {
			delete(sf.high, k)
		}
	}
}

// keepHeld adds a committed job's work to the site's held work, dropping
// the oldest beyond the feed's size in events. f.mu is held.
func (f *feed) keepHeld(sf *siteFeed, h *heldJob) {
	sf.held = append(sf.held, h)
	sf.heldEvents += len(h.events)
	drop := 0
	for sf.heldEvents > max(f.size, 1) && drop < len(sf.held)-1 {
		sf.heldEvents -= len(sf.held[drop].events)
		drop++
	}
	if drop > 0 {
		// Trimmed in one copy once a quarter of the slice is dropped.
		sf.held = sf.held[drop:]
		if cap(sf.held) > 4*len(sf.held)+64 {
			sf.held = slices.Clone(sf.held)
		}
	}
}

// checkVersions fails a batch whose events the store numbered at or below
// the newest version this daemon knows of a site: the store is behind.
func (f *feed) checkVersions(jobs []*job) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, j := range jobs {
		if len(j.events) == 0 {
			continue
		}
		sf := f.sites[j.events[0].Site]
		if sf == nil {
			continue
		}
		if v := j.events[0].Version; v <= sf.last {
			return &lostError{site: j.events[0].Site, known: sf.last,
				reason: fmt.Sprintf("it gave version %d, this daemon has seen %d", v, sf.last)}
		}
	}
	return nil
}

// checkNumber fails a number the store gave that this daemon knows was
// given before: the store is behind.
func (f *feed) checkNumber(k DayKey, seq int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	sf := f.sites[k.Site]
	if sf == nil || seq > sf.high[k] {
		return nil
	}
	return &lostError{site: k.Site, known: sf.last,
		reason: fmt.Sprintf("it gave number %d of %s on %s, this daemon knows %d was given", seq, k.Service, k.Day, sf.high[k])}
}

// markLost flags a site for restoration before its next write, and logs it
// the first time.
func (f *feed) markLost(le *lostError) {
	f.mu.Lock()
	sf := f.sites[le.site]
	first := sf != nil && len(sf.lost) == 0
	if sf != nil && (first || le.gapTo > 0) {
		// A gap another daemon skipped is restored after what this
		// daemon found itself: each may hold requests of this one.
		sf.lost = append(sf.lost, le)
	}
	f.mu.Unlock()
	if first {
		f.e.losses.found.Add(1)
		f.e.log.Error("store lost acknowledged work: refusing new numbers of the site until it is restored",
			"site", le.site, "known_version", le.known, "reason", le.reason)
	}
}

// lostSites returns the sites of jobs flagged for restoration.
func (f *feed) lostSites(jobs []*job) []*lostError {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*lostError
	for _, j := range jobs {
		if sf := f.sites[j.site]; sf != nil {
			for _, le := range sf.lost {
				if !slices.Contains(out, le) {
					out = append(out, le)
				}
			}
		}
	}
	return out
}

// publishRestored clears a site's flag once its restoration committed, and
// publishes the events of the requests applied again: the feed holds the
// events of the versions skipped already (or, when it never had them,
// starts after them), the new ones follow.
func (f *feed) publishRestored(rs restoration) {
	r := rs.rec
	f.mu.Lock()
	sf := f.sites[r.Site]
	if sf == nil {
		f.mu.Unlock()
		return
	}
	sf.lost = slices.DeleteFunc(sf.lost, func(le *lostError) bool { return le == rs.le })
	if r.GapTo > sf.last {
		// Versions only a subscriber had seen: the feed starts after them.
		sf.ring, sf.last = nil, r.GapTo
	}
	// The held work of the skipped versions is now that of the new ones.
	sf.held = slices.DeleteFunc(sf.held, func(h *heldJob) bool { return h.first() >= r.GapFrom && h.last() <= r.GapTo })
	sf.heldEvents = 0
	for _, h := range sf.held {
		sf.heldEvents += len(h.events)
	}
	sf.dropOrder() // rebuilt from the store on its next use
	f.mu.Unlock()
	for _, h := range rs.again {
		f.publishSite(r.Site, h.events, nil, h)
	}
	if len(rs.again) == 0 && r.GapTo == 0 && len(r.Numbers) == 0 {
		f.e.log.Warn("store seemed behind this daemon, but was not", "site", r.Site, "reason", r.Reason)
		return
	}
	f.e.losses.restored.Add(1)
	f.e.losses.tickets.Add(int64(r.Tickets))
	f.e.losses.unrestored.Add(int64(len(r.Lost)))
	f.e.log.Error("store lost acknowledged work: restored", "site", r.Site, "record", r.String())
}

// restorePlan is what restoring a site takes, read under the feed's lock.
type restorePlan struct {
	known     int64
	maxTicket int64 // the largest ticket id seen
	held      []*heldJob
	high      map[DayKey]int
}

func (f *feed) planRestore(le *lostError) restorePlan {
	f.mu.Lock()
	defer f.mu.Unlock()
	sf := f.sites[le.site]
	if sf == nil {
		return restorePlan{known: le.known}
	}
	return restorePlan{known: max(sf.last, le.known), maxTicket: f.maxTicket, held: slices.Clone(sf.held), high: maps.Clone(sf.high)}
}

// restore repairs a site whose store is behind, in the batch's transaction,
// before its requests run. It returns what it did (the batch publishes the
// events of the requests it applied again), or false when the store is not
// behind after all (a read that lagged).
func (e *Engine) restore(ctx context.Context, tx Tx, le *lostError) (restoration, bool, error) {
	lt := LossTx(tx)
	p := e.feed.planRestore(le)
	stored, err := tx.LastVersion(ctx, le.site)
	if err != nil {
		return restoration{}, false, fmt.Errorf("queue: restore %s: %w", le.site, err)
	}
	rec := LossRecord{Site: le.site, At: e.clock(), Daemon: e.name, StoreVersion: stored, KnownVersion: p.known, Reason: le.reason}
	lo, hi := stored+1, p.known
	if le.gapTo > 0 {
		// Another daemon skipped the versions the store lost: this one
		// applies again its own requests of them.
		lo, hi = le.gapFrom, le.gapTo
	} else if hi >= lo {
		if _, err := lt.SkipVersions(ctx, le.site, hi-stored); err != nil {
			return restoration{}, false, fmt.Errorf("queue: restore %s: skip versions %d-%d: %w", le.site, lo, hi, err)
		}
		rec.GapFrom, rec.GapTo = lo, hi
	}
	// This daemon's requests whose events the store lost, copied: their
	// events get new versions.
	var again []*heldJob
	for _, h := range p.held {
		if h.first() >= lo && h.last() <= hi {
			c := *h
			c.events = slices.Clone(h.events)
			again = append(again, &c)
		}
	}
	again, err = e.reapply(ctx, tx, lt, again, p.maxTicket, &rec)
	if err != nil {
		return restoration{}, false, err
	}
	if err := raiseNumbers(ctx, lt, p.high, &rec); err != nil {
		return restoration{}, false, fmt.Errorf("queue: restore %s: %w", le.site, err)
	}
	if rec.GapTo == 0 && rec.Requests == 0 && len(rec.Numbers) == 0 && len(rec.Lost) == 0 {
		return restoration{le: le, rec: rec}, true, nil // nothing was lost after all
	}
	if err := lt.RecordLoss(ctx, rec); err != nil {
		return restoration{}, false, fmt.Errorf("queue: restore %s: record the loss: %w", le.site, err)
	}
	return restoration{le: le, rec: rec, again: again}, true, nil
}

// reapply stores the work of held requests again: their tickets (inserted
// with their ids where missing, else moved on to the held state), counter
// states, stored results and events (appended anew, after the gap). It
// returns the requests applied again: not those whose ticket could not
// come back.
func (e *Engine) reapply(ctx context.Context, tx Tx, lt LossTx, again []*heldJob, past int64, rec *LossRecord) ([]*heldJob, error) {
	failed, err := restoreTickets(ctx, tx, lt, again, past, rec)
	if err != nil {
		return nil, err
	}
	again = slices.DeleteFunc(again, func(h *heldJob) bool {
		return slices.ContainsFunc(h.tickets, func(t Ticket) bool { return slices.Contains(failed, t.ID) })
	})
	counters := map[string]CounterState{}
	var saves []SavedRequest
	var keys []RequestKey
	var evs []*Event
	for _, h := range again {
		for _, c := range h.counters {
			counters[c.ID] = c
		}
		if h.save != nil {
			saves = append(saves, *h.save)
			keys = append(keys, h.save.RequestKey)
		}
		for i := range h.events {
			ev := h.events[i]
			evs = append(evs, &ev)
		}
	}
	ids := make([]string, 0, len(counters))
	for id := range counters {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if err := tx.PutCounter(ctx, counters[id]); err != nil {
			return nil, fmt.Errorf("queue: restore %s: counter %s: %w", rec.Site, id, err)
		}
	}
	if len(keys) > 0 {
		have, err := tx.LookupRequests(ctx, keys)
		if err != nil {
			return nil, fmt.Errorf("queue: restore %s: look up requests: %w", rec.Site, err)
		}
		saves = slices.DeleteFunc(saves, func(s SavedRequest) bool { _, ok := have[s.RequestKey]; return ok })
		if err := tx.SaveRequests(ctx, saves); err != nil {
			return nil, fmt.Errorf("queue: restore %s: save requests: %w", rec.Site, err)
		}
	}
	if len(evs) > 0 {
		if err := tx.AppendEvents(ctx, rec.Site, evs); err != nil {
			return nil, fmt.Errorf("queue: restore %s: append %d events: %w", rec.Site, len(evs), err)
		}
		// The held work carries the versions given again, for publishing.
		k := 0
		for _, h := range again {
			for i := range h.events {
				h.events[i].Version = evs[k].Version
				k++
			}
		}
	}
	rec.Requests, rec.Events = len(again), len(evs)
	return again, nil
}

// restoreTickets stores the latest held state of each ticket the held
// requests wrote: inserted with its id where missing, moved on where the
// store holds an older state. It returns the ids of those that could not
// come back (listed in rec.Lost): their number or id was taken.
func restoreTickets(ctx context.Context, tx Tx, lt LossTx, again []*heldJob, past int64, rec *LossRecord) ([]int64, error) {
	latest := map[int64]*Ticket{}
	var order []int64
	for _, h := range again {
		for i := range h.tickets {
			t := &h.tickets[i]
			if _, ok := latest[t.ID]; !ok {
				order = append(order, t.ID)
			}
			latest[t.ID] = t
		}
	}
	var missing []*Ticket
	var failed []int64
	for _, id := range order {
		t := latest[id]
		cur, err := tx.Ticket(ctx, id)
		switch {
		case errors.Is(err, ErrNotFound):
			if other, err := tx.TicketByNumber(ctx, NumberKey{Site: t.Site, Day: t.Day, Number: t.Number}); err == nil && other.Service == t.Service {
				rec.Lost = append(rec.Lost, fmt.Sprintf("%s %s (its number was given again to ticket id %d)", t.Day, t.Number, other.ID))
				failed = append(failed, id)
				continue
			}
			missing = append(missing, t)
		case err != nil:
			return nil, fmt.Errorf("queue: restore %s: read ticket %s: %w", rec.Site, t.Number, err)
		case cur.Number != t.Number || cur.Day != t.Day:
			rec.Lost = append(rec.Lost, fmt.Sprintf("%s %s (its id %d now holds %s)", t.Day, t.Number, id, cur.Number))
			failed = append(failed, id)
		case laterState(cur, t):
			if err := tx.UpdateTicket(ctx, t, cur.Status); err != nil {
				return nil, fmt.Errorf("queue: restore %s: ticket %s: %w", rec.Site, t.Number, err)
			}
			rec.Tickets++
		}
	}
	if len(missing) > 0 || past > 0 {
		if err := lt.RestoreTickets(ctx, missing, past); err != nil {
			return nil, fmt.Errorf("queue: restore %s: %d tickets: %w", rec.Site, len(missing), err)
		}
		rec.Tickets += len(missing)
	}
	return failed, nil
}

// laterState reports whether held is a later state of the stored ticket
// cur: further on in its life, or called more often.
func laterState(cur, held *Ticket) bool {
	rank := func(s Status) int {
		switch s {
		case StatusWaiting:
			return 0
		case StatusCalled:
			return 1
		case StatusServing:
			return 2
		}
		return 3
	}
	if rank(held.Status) != rank(cur.Status) {
		return rank(held.Status) > rank(cur.Status)
	}
	return held.Status != cur.Status || held.CallCount > cur.CallCount || held.NoShowCount > cur.NoShowCount
}

// raiseNumbers moves each day counter past the highest number known to be
// given of it.
func raiseNumbers(ctx context.Context, lt LossTx, high map[DayKey]int, rec *LossRecord) error {
	ks := make([]DayKey, 0, len(high))
	for k := range high {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b DayKey) int { return strings.Compare(a.Day+a.Service, b.Day+b.Service) })
	for _, k := range ks {
		cur, err := lt.RaiseSeq(ctx, k, high[k])
		if err != nil {
			return fmt.Errorf("day counter of %s %s: %w", k.Service, k.Day, err)
		}
		if cur >= high[k] {
			continue
		}
		rec.Numbers = append(rec.Numbers, fmt.Sprintf("%s %s: %d -> %d", k.Service, k.Day, cur, high[k]))
	}
	return nil
}

// LossStats counts what the daemon found and repaired (for /metrics).
type LossStats struct {
	Found, Restored, Tickets, Unrestored int64
}

// Losses returns the counts of lost work found and restored so far.
func (e *Engine) Losses() LossStats {
	return LossStats{Found: e.losses.found.Load(), Restored: e.losses.restored.Load(),
		Tickets: e.losses.tickets.Load(), Unrestored: e.losses.unrestored.Load()}
}

// restoreSoon restores a site flagged lost without waiting for its next
// write: an empty request through its committer.
func (e *Engine) restoreSoon(site string) {
	go func() {
		_, err := submit(context.Background(), e, &job{site: site, lane: laneCounter}, func(context.Context, Tx, *job) (struct{}, error) { return struct{}{}, nil })
		if err != nil && !errors.Is(err, ErrClosed) {
			e.log.Warn("store lost acknowledged work: restore failed, trying again at the next write", "site", site, "err", err)
		}
	}()
}

// behind flags the sites whose store version vs is below what the feed had
// before the read (before): the store lost work.
func (f *feed) behind(before, vs map[string]int64) {
	for id, last := range before {
		if v := vs[id]; v < last {
			f.markLost(&lostError{site: id, known: last,
				reason: fmt.Sprintf("the store's version %d is below the %d this daemon saw", v, last)})
			f.e.restoreSoon(id)
		}
	}
}

// othersLost takes the gaps other daemons skipped, not seen before, as
// lost work of this daemon's too: its requests of those versions are
// applied again.
func (f *feed) othersLost(recs []LossRecord) {
	for _, r := range recs {
		if r.Daemon == f.e.name || r.GapTo == 0 {
			continue
		}
		k := fmt.Sprintf("%s/%s/%d-%d", r.Site, r.Daemon, r.GapFrom, r.GapTo)
		f.mu.Lock()
		seen := f.lossSeen[k]
		if f.lossSeen == nil {
			f.lossSeen = map[string]bool{}
		}
		f.lossSeen[k] = true
		first := !f.lossStarted
		f.mu.Unlock()
		if seen || first {
			continue // the records found at start hold nothing of this daemon's
		}
		f.markLost(&lostError{site: r.Site, known: r.GapTo, gapFrom: r.GapFrom, gapTo: r.GapTo,
			reason: fmt.Sprintf("daemon %s found versions %d-%d lost and skipped them", r.Daemon, r.GapFrom, r.GapTo)})
		f.e.restoreSoon(r.Site)
	}
	f.mu.Lock()
	f.lossStarted = true
	f.mu.Unlock()
}

// lasts is the feed's last version of every site it follows.
func (f *feed) lasts() map[string]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]int64, len(f.sites))
	for id, sf := range f.sites {
		out[id] = sf.last
	}
	return out
}

// SeenVersion tells the engine that a device (a display, a console) has
// seen a site's events up to version v: beyond the store's, that is
// evidence that the store lost work, and the site is repaired (lost.go)
// before versions up to v are given to other events.
func (e *Engine) SeenVersion(site string, v int64) {
	if _, err := e.Site(site); err == nil {
		e.feed.ahead(site, v)
	}
}

// ahead takes a subscriber's last version beyond the store's as evidence
// of lost work: a display or console saw versions the store no longer has.
func (f *feed) ahead(site string, after int64) {
	if after <= 0 {
		return
	}
	sf, err := f.lockSite(site)
	if err != nil {
		return
	}
	if after <= sf.last {
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()
	// The feed may only be behind the store: look there first.
	if err := f.catchUp(site, 0); err != nil {
		return
	}
	f.mu.Lock()
	ahead := after > sf.last
	last := sf.last
	f.mu.Unlock()
	if ahead {
		f.markLost(&lostError{site: site, known: after,
			reason: fmt.Sprintf("a subscriber had seen version %d, the store has %d", after, last)})
		f.e.restoreSoon(site)
	}
}
