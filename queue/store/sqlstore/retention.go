package sqlstore

import (
	"context"
	"strings"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// RetentionMigration is the schema version that creates the leases and
// purge_floors tables and the index the request purge reads.
const RetentionMigration = 8

// Lease asks TakeLease for the named job, for Holder, until Now+For.
type Lease struct {
	Name   string
	Holder string // the daemon (host and protocol address)
	Now    time.Time
	For    time.Duration
}

// TakeLease takes or renews the named lease: it succeeds when no daemon
// holds it, when it has run out, or when l.Holder holds it already, and
// then holds it until l.Now+l.For. It reports false, and changes nothing,
// while another daemon's lease runs. One conditional UPDATE decides, so
// two daemons asking at once cannot both get it.
func (s *Store) TakeLease(ctx context.Context, l Lease) (bool, error) {
	var got bool
	err := s.write(ctx, func(ctx context.Context, t *tx) error {
		if _, err := t.exec(ctx, Stmt{s.d.insertIfMissing("leases", []string{"name", "holder", "until_ms"}),
			[]any{l.Name, "", int64(0)}}); err != nil {
			if err := missingOK(t.wrap("take lease "+l.Name, err)); err != nil {
				return err
			}
		}
		var err error
		got, err = t.changed(ctx, "take lease "+l.Name, Stmt{s.d.Rebind("UPDATE leases SET holder = ?, until_ms = ? " +
			"WHERE name = ? AND (holder = ? OR until_ms < ?)"), []any{l.Holder, ms(l.Now.Add(l.For)), l.Name, l.Holder, ms(l.Now)}})
		return err
	})
	return got, err
}

// PurgeRequests deletes up to n stored request results saved before
// before, oldest first, and returns how many it deleted: fewer than n
// when no more are that old. A retry of a deleted request runs again as a
// new one.
func (s *Store) PurgeRequests(ctx context.Context, before time.Time, n int) (int, error) {
	return s.deleted(ctx, "purge requests", s.q.purgeRequests(ms(before), n))
}

// deleted runs one DELETE (or UPDATE) in a transaction of its own and
// returns the rows it changed.
func (s *Store) deleted(ctx context.Context, action string, st Stmt) (int, error) {
	var n int64
	err := s.write(ctx, func(ctx context.Context, t *tx) error {
		res, err := t.exec(ctx, st)
		if err != nil {
			return t.wrap(action, err)
		}
		n, err = res.RowsAffected()
		return t.wrap(action, err)
	})
	return int(n), err
}

// PurgeOutbox deletes up to n notifications (dead, or pending still)
// whose event happened before before, and returns how many.
func (s *Store) PurgeOutbox(ctx context.Context, before time.Time, n int) (int, error) {
	return s.deleted(ctx, "purge outbox", s.q.purgeOutbox(ms(before), n))
}

// BlankPatients replaces the patient reference of up to n bookings whose
// slot ended before before with "~" and the booking's code, keeping the
// row, and returns how many it blanked.
func (s *Store) BlankPatients(ctx context.Context, before time.Time, n int) (int, error) {
	return s.deleted(ctx, "blank patients", s.q.blankPatients(ms(before), n))
}

// PurgePatientLocks deletes up to n per-patient lock rows last taken
// before before, and returns how many.
func (s *Store) PurgePatientLocks(ctx context.Context, before time.Time, n int) (int, error) {
	return s.deleted(ctx, "purge patient locks", s.q.purgePatientLocks(ms(before), n))
}

// DayPurge asks for the detail of a site's finished service days: the
// rows of days before Day, and of rows without a day, those from before
// At, at most N a call. The caller keeps Day before the site's current
// day and the oldest day a counter may still hold (queue.Site.HeldSinceDay).
type DayPurge struct {
	Site string
	Day  string // "2006-01-02": days before it are purged
	At   time.Time
	N    int
}

// PurgeEvents deletes the oldest events of p.Site as long as they are of
// days before p.Day (an event with no day, before migration 0005 or of a
// counter or booking, counts by its time, before p.At), at most p.N, and
// returns how many. It deletes a prefix of the log by version and records
// where the log begins now in purge_floors (the version after the last
// deleted and p.Day), in the same transaction, so the log stays gapless
// from there and `check` starts there. It stops at the first event to
// keep: a ticket of an older day still being finished after the newer
// day's first ticket keeps its later events.
func (s *Store) PurgeEvents(ctx context.Context, p DayPurge) (int, error) {
	n := 0
	err := s.write(ctx, func(ctx context.Context, t *tx) error {
		n = 0
		type head struct {
			version int64
			day     string
			at      int64
		}
		// From the floor, not from the log's start: on a server database
		// the index still holds the entries of the rows the last batches
		// deleted until a vacuum, and each batch would walk all of them.
		floor, err := t.purgeFloor(ctx, p.Site)
		if err != nil {
			return err
		}
		evs, err := rowsOf(ctx, t, "purge events: read the oldest", s.q.oldestEvents(p.Site, floor.Version, p.N), func(r scanner, h *head) error {
			return r.Scan(&h.version, &h.day, &h.at)
		})
		if err != nil {
			return err
		}
		last := int64(0)
		for _, e := range evs {
			if (e.day != "" && e.day >= p.Day) || (e.day == "" && e.at >= ms(p.At)) {
				break
			}
			last = e.version
			n++
		}
		if n == 0 {
			return nil
		}
		if _, err := t.exec(ctx, s.q.deleteEventsTo(p.Site, last)); err != nil {
			return t.wrap("purge events", err)
		}
		floor.Version, floor.Day = last+1, max(floor.Day, p.Day)
		if _, err := t.exec(ctx, Stmt{s.d.upsert("purge_floors", []string{"site"}, []string{"version", "day"}),
			[]any{p.Site, floor.Version, floor.Day}}); err != nil {
			return t.wrap("purge events: record the floor", err)
		}
		return nil
	})
	return n, err
}

// PurgeFloor is where a site's kept detail begins (see PurgeEvents):
// Version is its oldest kept event, Day the first service day whose
// tickets kept all their events. The zero value: nothing was purged.
type PurgeFloor struct {
	Version int64
	Day     string
}

func (t *tx) purgeFloor(ctx context.Context, site string) (PurgeFloor, error) {
	fs, err := rowsOf(ctx, t, "read purge floor", Stmt{t.s.d.Rebind("SELECT version, day FROM purge_floors WHERE site = ?"), []any{site}},
		func(r scanner, f *PurgeFloor) error { return r.Scan(&f.Version, &f.Day) })
	if err != nil || len(fs) == 0 {
		return PurgeFloor{}, err
	}
	return fs[0], nil
}

// ticketMargin is how much earlier than the oldest kept event a ticket
// must have finished to be purged: events are stamped when their request
// runs and versioned when it commits, so their times may run a little out
// of version order.
const ticketMargin = time.Minute

// PurgeTickets deletes up to p.N tickets of p.Site of days before p.Day
// that are terminal (never one a counter holds) and finished a margin
// before the site's oldest kept event (so every event of theirs is gone
// already: a ticket leaves with its last event; before p.At when the site
// has no event left), and returns how many.
// The numbering rows of those days (day_counters) go with them.
func (s *Store) PurgeTickets(ctx context.Context, p DayPurge) (int, error) {
	n := 0
	err := s.write(ctx, func(ctx context.Context, t *tx) error {
		n = 0
		before := ms(p.At)
		floor, err := t.purgeFloor(ctx, p.Site)
		if err != nil {
			return err
		}
		oldest, err := rowsOf(ctx, t, "purge tickets: read the oldest event", s.q.oldestEvents(p.Site, floor.Version, 1), func(r scanner, at *int64) error {
			var v int64
			var day string
			return r.Scan(&v, &day, at)
		})
		if err != nil {
			return err
		}
		if len(oldest) > 0 {
			// The days' events decide: a ticket of an old day that
			// expired only now (the daemon was stopped for days) goes
			// once its EXPIRED has gone.
			before = oldest[0] - ticketMargin.Milliseconds()
		}
		res, err := t.exec(ctx, s.q.purgeTickets(p.Site, p.Day, before, p.N))
		if err != nil {
			return t.wrap("purge tickets", err)
		}
		d, err := res.RowsAffected()
		if err != nil {
			return t.wrap("purge tickets", err)
		}
		n = int(d)
		if n < p.N {
			// The days' tickets are gone: their counters too.
			if _, err := t.exec(ctx, s.q.purgeDayCounters(p.Site, p.Day, p.N)); err != nil {
				return t.wrap("purge day counters", err)
			}
		}
		return nil
	})
	return n, err
}

// PurgeBookings deletes up to n slots that ended before before, with
// their bookings, in one transaction (a slot's booked count stays its
// bookings'), and returns the bookings and slots deleted.
func (s *Store) PurgeBookings(ctx context.Context, before time.Time, n int) (bookings, slots int, err error) {
	err = s.write(ctx, func(ctx context.Context, t *tx) error {
		bookings, slots = 0, 0
		ids, err := rowsOf(ctx, t, "purge slots: read", s.q.oldSlots(ms(before), n), func(r scanner, id *int64) error { return r.Scan(id) })
		if err != nil || len(ids) == 0 {
			return err
		}
		for _, del := range []struct {
			st  Stmt
			out *int
		}{{s.q.deleteByIDs("bookings", "slot_id", ids), &bookings}, {s.q.deleteByIDs("slots", "id", ids), &slots}} {
			res, err := t.exec(ctx, del.st)
			if err != nil {
				return t.wrap("purge bookings", err)
			}
			d, err := res.RowsAffected()
			if err != nil {
				return t.wrap("purge bookings", err)
			}
			*del.out = int(d)
		}
		return nil
	})
	return bookings, slots, err
}

// floorEdits are the edits that make checks start at a site's purge
// floor (see PurgeEvents), by check name: the event log is gapless from
// the floor's version, the site's version may be that of an event purged,
// a ticket of a day before the floor's may have lost its first events (its
// ISSUED, the CALLED before its first kept event). Each edit replaces the
// first occurrence of a text of the check's query (the rest of the query,
// e.g. what else it accepts, stays); TestFloored holds each to its query.
var floorEdits = map[string][2]string{
	"event versions start at 1 without gaps": {
		"FROM events e WHERE e.version > 1 AND",
		"FROM events e LEFT JOIN purge_floors f ON f.site = e.site WHERE e.version > COALESCE(f.version, 1) AND"},
	"site version is the newest event": {
		"WHERE s.version <> COALESCE(m.v, 0)",
		"LEFT JOIN purge_floors f ON f.site = s.site WHERE s.version <> COALESCE(m.v, f.version - 1, 0)"},
	"every ticket was issued": {
		"FROM tickets t WHERE t.id NOT IN",
		"FROM tickets t LEFT JOIN purge_floors f ON f.site = t.site WHERE t.day >= COALESCE(f.day, '') AND t.id NOT IN"},
	calledWhileWaiting: {
		"WHERE x.type = 'CALLED' AND (x.ps IS NULL OR x.ps <> 'WAITING')",
		"LEFT JOIN purge_floors f ON f.site = x.site " +
			"WHERE x.type = 'CALLED' AND ((x.ps IS NULL AND x.day >= COALESCE(f.day, '')) OR x.ps <> 'WAITING')"},
}

// calledDay adds the event's day to the rows of the check of calls, for
// its floor edit.
var calledDay = [2]string{"SELECT site, version, type, ticket_id, number, counter, ", "SELECT site, version, type, ticket_id, number, counter, day, "}

// floored returns cs with the edits of floorEdits made; Check uses it on a
// schema that has purge_floors.
func floored(cs []check) []check {
	out := make([]check, len(cs))
	for i, c := range cs {
		if e, ok := floorEdits[c.name]; ok {
			if c.name == calledWhileWaiting {
				c.query = strings.Replace(c.query, calledDay[0], calledDay[1], 1)
			}
			c.query = strings.Replace(c.query, e[0], e[1], 1)
		}
		out[i] = c
	}
	return out
}

// DayPurgeOf is what a purge of site's detail older than window at now
// asks for, n rows a call: the days before the service day of now-window,
// and never the site's current day or a day whose tickets a counter may
// still hold (before HeldSinceDay of now); rows without a day, from before
// now-window.
func DayPurgeOf(site *queue.Site, now time.Time, window time.Duration, n int) DayPurge {
	at := now.Add(-window)
	return DayPurge{Site: site.ID, Day: min(site.Day(at), site.HeldSinceDay(now), site.Day(now)), At: at, N: n}
}

// Reclaim gives pages the purge freed back to the file system where the
// dialect does that (Dialect.Reclaim), a few a call, each call a short
// write of its own, until none is left or ctx ends; it returns how many
// pages the file had free before. On a SQLite file made before auto_vacuum
// was set (mode none), nothing is given back: a VACUUM turns it on.
func (s *Store) Reclaim(ctx context.Context) (int, error) {
	if s.d.Reclaim == "" {
		return 0, nil
	}
	var free int
	if err := s.writer.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&free); err != nil {
		return 0, s.wrap("reclaim: free pages", err)
	}
	for left := free; left > 0; {
		if _, err := s.writer.ExecContext(ctx, s.d.Reclaim); err != nil {
			return free, s.wrap("reclaim", err)
		}
		var now int
		if err := s.writer.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&now); err != nil {
			return free, s.wrap("reclaim: free pages", err)
		}
		if now >= left {
			break // auto_vacuum is off: nothing to give back
		}
		left = now
	}
	return free, nil
}
