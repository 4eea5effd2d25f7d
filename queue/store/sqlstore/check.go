package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/queue"
)

// CheckOpts tunes Check.
type CheckOpts struct {
	// Today returns the current service day of a site ("2006-01-02"):
	// tickets of earlier days must be in a terminal state. When nil, or when
	// it returns "", the newest day holding tickets of the site counts as
	// today.
	Today func(site string) string
	// DayOf returns the service day of a site at an instant (queue.Site.Day),
	// to place an ISSUED event whose ticket is missing on its day. When nil,
	// or when it returns "", the day of the ticket issued nearest before it
	// in the site's event log is used (after it, for the first).
	DayOf func(site string, at time.Time) string
	// HeldSince returns the oldest service day whose tickets a counter may
	// still hold (queue.Site.HeldSinceDay of now): a called or serving
	// ticket of that day or later is being finished after the rollover,
	// not left open. When it returns "", no day is exempt. When nil (no
	// configuration), the daemon's rule is applied with the default grace
	// (queue.DefaultHeldGrace) and the rollover read from the tickets: a
	// called or serving ticket of the day before today is held while Now
	// is less than the grace after today's first ticket (which was issued
	// at or after the rollover, so a ticket the daemon still holds is
	// never reported).
	HeldSince func(site string) string
	// Now is the clock of that default rule; nil means time.Now.
	Now func() time.Time
	// MaxViolations caps the violations listed per invariant (0: 20).
	MaxViolations int
	// Days, when above 0, checks only the last Days service days of each
	// site up to its today (the tickets of those days and the day before,
	// and the events from the first of those), so the check costs what
	// those days cost however long the history; 0 checks everything. It
	// needs a schema with purge floors (RetentionMigration); on an older
	// one everything is checked.
	Days int
}

// Report is what Check found.
type Report struct {
	Sites      int      // sites with tickets or events
	Tickets    int      // tickets in the database
	Events     int      // events in the database
	Violations []string // one line per broken invariant instance; empty when all hold
	// Losses are the repairs of lost work daemons made (a database that
	// lost acknowledged work): no violation, but what an operator must
	// know, printed with the report.
	Losses []queue.LossRecord
	// Outbox is the state of the notifications (nil on a schema without
	// an outbox). Its messages are no invariant: a dead one is reported,
	// not counted as a violation.
	Outbox *OutboxStatus
	// Window says what was checked: empty for everything, else the days.
	Window string
}

// OK reports whether no invariant was broken.
func (r Report) OK() bool { return len(r.Violations) == 0 }

// String prints the report, one violation per line.
func (r Report) String() string {
	var b strings.Builder
	if r.Window != "" {
		b.WriteString(r.Window + ": ")
	}
	fmt.Fprintf(&b, "%d sites, %d tickets, %d events: ", r.Sites, r.Tickets, r.Events)
	if r.OK() {
		b.WriteString("all invariants hold")
	} else {
		fmt.Fprintf(&b, "%d violations", len(r.Violations))
		for _, v := range r.Violations {
			b.WriteString("\n  " + v)
		}
	}
	if len(r.Losses) > 0 {
		fmt.Fprintf(&b, "\nthe database lost acknowledged work %d times; daemons repaired it:", len(r.Losses))
		for _, l := range r.Losses {
			b.WriteString("\n  " + l.String())
		}
	}
	if o := r.Outbox; o != nil && o.Pending+o.Dead > 0 {
		b.WriteString("\n" + o.String())
	}
	return b.String()
}

// check is one invariant: a query whose every row is a violation, and how
// to print a row: with format, its cols values in order, or with line.
type check struct {
	name   string
	query  string
	cols   int
	format string
	line   func(v []string) string
}

// text prints a violation row v.
func (c *check) text(v []string) string {
	if c.line != nil {
		return c.line(v)
	}
	return fmt.Sprintf(c.format, anys(v)...)
}

var checks = []check{
	{
		name: "unique numbers",
		// The number, in no index of (site, service, day, seq), keeps
		// SQLite from reading that unique index, covering but with no
		// range of days, over the whole site: a window's days are a range
		// of tickets_number.
		query: "SELECT site, service, day, seq, COUNT(*), MAX(number) FROM tickets " +
			"GROUP BY site, service, day, seq HAVING COUNT(*) > 1 ORDER BY site, service, day, seq",
		cols:   6,
		format: "invariant 1: site %s service %s day %s: seq %s issued %s times (number %s)",
	},
	{
		name: "one ticket per counter",
		query: "SELECT site, counter, COUNT(*) FROM tickets WHERE status IN ('CALLED', 'SERVING') " +
			"GROUP BY site, counter HAVING COUNT(*) > 1 ORDER BY site, counter",
		cols:   3,
		format: "invariant 2: site %s counter %q holds %s called or serving tickets",
	},
	{
		name: "one counter per ticket",
		query: "SELECT site, ticket_id, COUNT(*) FROM counters WHERE ticket_id <> 0 " +
			"GROUP BY site, ticket_id HAVING COUNT(*) > 1 ORDER BY site, ticket_id",
		cols:   3,
		format: "invariant 2: site %s ticket id %s is held by %s counters",
	},
	{
		name: "counter holds a live ticket",
		query: "SELECT c.site, c.id, c.ticket_id, COALESCE(t.status, 'missing'), COALESCE(t.counter, '') " +
			"FROM counters c LEFT JOIN tickets t ON t.id = c.ticket_id " +
			"WHERE c.ticket_id <> 0 AND (t.id IS NULL OR t.status NOT IN ('CALLED', 'SERVING') OR t.counter <> c.id OR t.site <> c.site) " +
			"ORDER BY c.site, c.id",
		cols:   5,
		format: "invariant 2: site %s counter %s holds ticket id %s, which is %s at counter %q",
	},
	{
		name: "live ticket held by its counter",
		query: "SELECT t.site, t.number, t.day, t.status, t.counter FROM tickets t " +
			"WHERE t.status IN ('CALLED', 'SERVING') AND NOT EXISTS " +
			"(SELECT 1 FROM counters c WHERE c.site = t.site AND c.id = t.counter AND c.ticket_id = t.id) " +
			"ORDER BY t.id",
		cols:   5,
		format: "invariant 2: site %s ticket %s of %s is %s at counter %q, which does not hold it",
	},
	{
		name: "event versions start at 1 without gaps",
		// A gap that a repair of lost work skipped is recorded, not broken.
		query: "SELECT e.site, e.version FROM events e WHERE e.version > 1 AND NOT EXISTS " +
			"(SELECT 1 FROM events p WHERE p.site = e.site AND p.version = e.version - 1) AND NOT EXISTS " +
			"(SELECT 1 FROM lost_work l WHERE l.site = e.site AND l.gap_to = e.version - 1) ORDER BY e.site, e.version",
		cols:   2,
		format: "invariant 4: site %s: event version %s follows a gap",
	},
	{
		name:   "event versions positive",
		query:  "SELECT site, version FROM events WHERE version < 1 ORDER BY site, version",
		cols:   2,
		format: "invariant 4: site %s: event version %s is not positive",
	},
	{
		name: "site version is the newest event",
		query: "SELECT s.site, s.version, COALESCE(m.v, 0) FROM site_versions s " +
			"LEFT JOIN (SELECT site, MAX(version) AS v FROM events GROUP BY site) m ON m.site = s.site " +
			"WHERE s.version <> COALESCE(m.v, 0) AND NOT EXISTS (SELECT 1 FROM lost_work l WHERE l.site = s.site " +
			"AND l.gap_to = s.version AND l.gap_from <= COALESCE(m.v, 0) + 1) ORDER BY s.site",
		cols:   3,
		format: "invariant 4: site %s: site_versions says %s, newest event is %s",
	},
	{
		name: "events without a site version",
		query: "SELECT e.site, MAX(e.version) FROM events e WHERE NOT EXISTS " +
			"(SELECT 1 FROM site_versions s WHERE s.site = e.site) GROUP BY e.site ORDER BY e.site",
		cols:   2,
		format: "invariant 4: site %s: events up to version %s but no site_versions row",
	},
	{
		name: "every ticket was issued",
		query: "SELECT t.site, t.day, t.number, t.id FROM tickets t WHERE t.id NOT IN " +
			"(SELECT e.ticket_id FROM events e WHERE e.type = 'ISSUED') ORDER BY t.id",
		cols:   4,
		format: "invariant 3: site %s day %s: ticket %s (id %s) has no ISSUED event",
	},
}

// sqlList quotes values for an IN list: constants of the queue package, never
// input.
func sqlList[T ~string](vs ...T) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = "'" + string(v) + "'"
	}
	return strings.Join(q, ", ")
}

// The event types as the checks of the event log group them, from what the
// engine emits (queue/ops.go):
//   - counterOnly: COUNTER_OPENED and COUNTER_PAUSED name a counter and no
//     ticket (ticket_id 0); every other type names its ticket.
//   - holding: CALLED (claim sets the counter's ticket), RECALLED and SERVING
//     (the counter keeps it) leave the event's counter holding its ticket.
//   - releasing: DONE, NO_SHOW, TRANSFERRED (they free the counter acting),
//     CANCELLED and EXPIRED (they free the ticket's counter, which holds it
//     while it is called or serving) and REENTERED with a counter (a call
//     time-out requeueing the ticket frees it) leave the event's counter
//     idle. A CANCELLED or EXPIRED of a waiting ticket, and the REENTERED of
//     a no-show, carry no counter: a waiting ticket has none.
//
// PRINT_FAILED (no counter) and the counter-only events change no counter's
// ticket. A call-next that completes a served ticket writes its DONE before
// the CALLED of the next one, so the newest of a counter's holding or
// releasing events says what it holds.
var (
	counterOnly = sqlList(queue.EventCounterOpened, queue.EventCounterPaused,
		queue.EventBookingHeld, queue.EventBookingBooked, queue.EventBookingCancelled, queue.EventBookingMissed, queue.EventBookingExpired)
	holding   = sqlList(queue.EventCalled, queue.EventRecalled, queue.EventServing)
	releasing = sqlList(queue.EventDone, queue.EventNoShow, queue.EventTransferred,
		queue.EventCancelled, queue.EventExpired, queue.EventReentered)
)

// lastCounterEvent is, per (site, counter), the version of the newest event
// that set or cleared the counter's ticket.
var lastCounterEvent = "SELECT site, counter, MAX(version) AS v FROM events WHERE counter <> '' AND type IN (" +
	holding + ", " + releasing + ") GROUP BY site, counter"

// calledWhileWaiting names the check of calls (see floored).
const calledWhileWaiting = "a ticket is called only while waiting"

// eventChecks hold the event log against the tickets and counters it
// describes: what a device was told (an ISSUED number, a call) must be true
// of the database, and replaying the log must give the counters' state.
var eventChecks = []check{
	{
		name: "every event's ticket exists",
		query: "SELECT e.site, e.version, e.type, e.number, e.ticket_id, COALESCE(t.site, '') FROM events e " +
			"LEFT JOIN tickets t ON t.id = e.ticket_id " +
			"WHERE e.type NOT IN (" + counterOnly + ") AND (t.id IS NULL OR t.site <> e.site) ORDER BY e.site, e.version",
		cols: 6,
		line: func(v []string) string {
			// A number told to a kiosk whose ticket is gone breaks invariant
			// 3; any other event about a missing ticket cannot be replayed.
			inv := "4"
			if v[2] == string(queue.EventIssued) {
				inv = "3"
			}
			what := "which does not exist"
			switch {
			case v[4] == "0":
				what = "no ticket"
			case v[5] != "":
				what = "which belongs to site " + v[5]
			}
			return fmt.Sprintf("invariant %s: site %s: %s event version %s of %s names ticket id %s, %s", inv, v[0], v[2], v[1], v[3], v[4], what)
		},
	},
	{
		name: "events agree with their ticket",
		query: "SELECT e.site, e.version, e.type, e.number, e.service, t.id, t.number, t.service FROM events e " +
			"JOIN tickets t ON t.id = e.ticket_id AND t.site = e.site " +
			"WHERE e.number <> t.number OR (e.type = 'ISSUED' AND e.service <> t.service) ORDER BY e.site, e.version",
		cols:   8,
		format: "invariant 4: site %[1]s: %[3]s event version %[2]s says %[4]s of service %[5]s, but ticket id %[6]s is %[7]s of service %[8]s",
	},
	{
		name: "every ticket issued once",
		// From the events, each ticket looked up by id: the events have
		// no index on ticket_id to look up a ticket's from.
		query: "SELECT t.site, t.day, t.number, t.id, COUNT(*), MIN(e.version), MAX(e.version) FROM events e " +
			"JOIN tickets t ON t.id = e.ticket_id AND t.site = e.site WHERE e.type = 'ISSUED' " +
			"GROUP BY t.site, t.day, t.number, t.id HAVING COUNT(*) > 1 ORDER BY t.id",
		cols:   7,
		format: "invariant 3: site %s day %s: ticket %s (id %s) has %s ISSUED events (versions %s to %s)",
	},
	{
		// An ISSUED event's service is the issuing one (a ticket waits in
		// the queue of its service until transferred; a transfer keeps the
		// number and writes TRANSFERRED, not ISSUED), and its day is its
		// ticket's. ISSUED events without a ticket are placed on their day
		// by checkOrphanNumbers.
		name: "every number announced once",
		query: "SELECT e.site, e.service, t.day, e.number, COUNT(*), MIN(e.version), MAX(e.version) FROM events e " +
			"JOIN tickets t ON t.id = e.ticket_id AND t.site = e.site WHERE e.type = 'ISSUED' " +
			"GROUP BY e.site, e.service, t.day, e.number HAVING COUNT(*) > 1 ORDER BY e.site, e.service, t.day, e.number",
		cols:   7,
		format: "invariant 1: site %s service %s day %s: number %s announced %s times (ISSUED events versions %s to %s)",
	},
	{
		// The machine (queue/machine.go) calls only a WAITING ticket: a
		// CALLED event must follow, among its ticket's events by version,
		// one that left it WAITING (ISSUED, REENTERED after a no-show or a
		// call time-out, TRANSFERRED). A recall writes RECALLED and leaves
		// the ticket CALLED, so a CALLED after a CALLED or RECALLED, with no
		// re-entry or transfer between, is a ticket called twice; so is one
		// after SERVING, DONE or any end. PRINT_FAILED repeats the status
		// and is skipped. LAG over (site, ticket) is one sort of the log,
		// where a correlated look-up would need an index on ticket_id.
		name: calledWhileWaiting,
		query: "SELECT x.site, x.number, x.ticket_id, x.version, x.counter, COALESCE(x.pv, 0), COALESCE(x.pt, ''), COALESCE(x.ps, ''), COALESCE(x.pc, '') FROM (" +
			"SELECT site, version, type, ticket_id, number, counter, " +
			"LAG(version) OVER (PARTITION BY site, ticket_id ORDER BY version) AS pv, " +
			"LAG(type) OVER (PARTITION BY site, ticket_id ORDER BY version) AS pt, " +
			"LAG(status) OVER (PARTITION BY site, ticket_id ORDER BY version) AS ps, " +
			"LAG(counter) OVER (PARTITION BY site, ticket_id ORDER BY version) AS pc " +
			"FROM events WHERE ticket_id <> 0 AND type <> 'PRINT_FAILED' AND type <> '" + string(queue.EventBookingCheckedIn) + "') x " +
			"WHERE x.type = 'CALLED' AND (x.ps IS NULL OR x.ps <> 'WAITING') ORDER BY x.site, x.version",
		cols: 9,
		line: func(v []string) string {
			if v[6] == "" {
				return fmt.Sprintf("invariant 2: site %s ticket %s (id %s): CALLED at counter %q (event version %s) with no earlier event of the ticket", v[0], v[1], v[2], v[4], v[3])
			}
			return fmt.Sprintf("invariant 2: site %s ticket %s (id %s): CALLED at counter %q (event version %s) while %s after its %s at counter %q (version %s): called twice without a re-entry or transfer between",
				v[0], v[1], v[2], v[4], v[3], v[7], v[6], v[8], v[5])
		},
	},
	{
		// A counter row holds the ticket of its newest holding event, and
		// none when that event is a releasing one or there is none (see
		// holding and releasing).
		name: "counters agree with their events",
		query: "SELECT c.site, c.id, c.ticket_id, COALESCE(h.number, ''), COALESCE(e.version, 0), COALESCE(e.type, ''), COALESCE(e.ticket_id, 0), COALESCE(e.number, '') " +
			"FROM counters c LEFT JOIN tickets h ON h.id = c.ticket_id " +
			"LEFT JOIN (" + lastCounterEvent + ") l ON l.site = c.site AND l.counter = c.id " +
			"LEFT JOIN events e ON e.site = l.site AND e.version = l.v " +
			"WHERE c.ticket_id <> CASE WHEN e.type IN (" + holding + ") THEN e.ticket_id ELSE 0 END ORDER BY c.site, c.id",
		cols: 8,
		line: func(v []string) string {
			held := "is idle"
			if v[2] != "0" {
				held = fmt.Sprintf("holds ticket %s (id %s)", v[3], v[2])
			}
			last := "no event ever called a ticket there"
			if v[5] != "" {
				last = fmt.Sprintf("its last event is %s of %s (id %s, version %s)", v[5], v[7], v[6], v[4])
			}
			return fmt.Sprintf("invariant 4: site %s counter %q %s, but %s", v[0], v[1], held, last)
		},
	},
	{
		name: "counters the events leave holding exist",
		query: "SELECT l.site, l.counter, e.type, e.number, e.ticket_id, e.version FROM (" + lastCounterEvent + ") l " +
			"JOIN events e ON e.site = l.site AND e.version = l.v WHERE e.type IN (" + holding + ") " +
			"AND NOT EXISTS (SELECT 1 FROM counters c WHERE c.site = l.site AND c.id = l.counter) ORDER BY l.site, l.counter",
		cols:   6,
		format: "invariant 4: site %s counter %q has no row, but its last event is %s of %s (id %s, version %s)",
	},
}

// placeStatuses are the booking states that hold a place in their slot.
var placeStatuses = sqlList(queue.PlaceStatuses...)

// bookingChecks are the invariants of appointments: a slot's count of
// places is the number of its bookings holding one, never above its
// capacity; a patient holds at most one place in a slot; a checked-in
// booking names the ticket it became. Patients are printed as
// queue.PatientHash, never in clear.
var bookingChecks = []check{
	{
		name: "slot places match their bookings",
		query: "SELECT s.site, s.resource, s.id, s.start_at, s.booked, s.capacity, COALESCE(b.n, 0) FROM slots s " +
			"LEFT JOIN (SELECT slot_id, COUNT(*) AS n FROM bookings WHERE status IN (" + placeStatuses + ") GROUP BY slot_id) b " +
			"ON b.slot_id = s.id WHERE s.booked <> COALESCE(b.n, 0) OR s.booked > s.capacity ORDER BY s.id",
		cols: 7,
		line: func(v []string) string {
			return fmt.Sprintf("bookings: site %s resource %s slot %s (start %s): booked %s of capacity %s, but %s bookings hold a place",
				v[0], v[1], v[2], msText(v[3]), v[4], v[5], v[6])
		},
	},
	{
		name: "one place per patient per slot",
		query: "SELECT site, slot_id, patient, COUNT(*) FROM bookings WHERE status IN (" + placeStatuses + ") " +
			"GROUP BY site, slot_id, patient HAVING COUNT(*) > 1 ORDER BY site, slot_id",
		cols: 4,
		line: func(v []string) string {
			return fmt.Sprintf("bookings: site %s slot %s: patient %s holds %s places", v[0], v[1], queue.PatientHash(v[2]), v[3])
		},
	},
	{
		name: "a checked-in booking has its ticket",
		query: "SELECT b.site, b.id, b.ticket_id, b.number, COALESCE(t.number, ''), COALESCE(t.site, '') FROM bookings b " +
			"LEFT JOIN tickets t ON t.id = b.ticket_id WHERE b.status = '" + string(queue.BookingCheckedIn) + "' " +
			"AND (t.id IS NULL OR t.site <> b.site OR t.number <> b.number) ORDER BY b.id",
		cols: 6,
		line: func(v []string) string {
			what := "which does not exist"
			if v[4] != "" {
				what = fmt.Sprintf("which is %s of site %s", v[4], v[5])
			}
			return fmt.Sprintf("bookings: site %s booking %s is checked in as ticket %s (id %s), %s", v[0], v[1], v[3], v[2], what)
		},
	},
}

// msText prints unix milliseconds written as text in UTC.
func msText(v string) string {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return v
	}
	return time.UnixMilli(n).UTC().Format("2006-01-02 15:04Z")
}

// Check verifies the invariants of DESIGN §6 on the database, inside one
// read-only snapshot: unique (site, service, day, seq); a counter holds at
// most one ticket and a called or serving ticket is held by exactly its
// counter; per-site event versions are 1..N without gaps and site_versions
// matches; every ticket has exactly one ISSUED event; every event names a
// ticket that exists, with its number; a number is announced (ISSUED) once
// per (site, service, day), counting ISSUED events whose ticket is gone; a
// ticket is called only while waiting (never twice without a re-entry or
// transfer between); each counter holds what its newest event says; every
// ticket of a finished day is in a terminal state; and the booking
// invariants (bookingChecks). Violations are listed in
// the report; the error is for a database that could not be read.
func (s *Store) Check(ctx context.Context, opts CheckOpts) (Report, error) {
	limit := positive.Or(opts.MaxViolations, 20)
	var r Report
	v, verr := s.Version(ctx)
	floors := verr == nil && v >= RetentionMigration
	err := s.view(ctx, &sql.TxOptions{ReadOnly: true, Isolation: s.d.Snapshot}, func(ctx context.Context, t *tx) error {
		r = Report{}
		passes := []*checkWindow{nil}
		if floors {
			var err error
			if passes, err = t.checkPassesOf(ctx, opts); err != nil {
				return err
			}
		}
		if opts.Days > 0 && floors {
			r.Window = fmt.Sprintf("the last %d service days", opts.Days)
			t.edit = passes[0].edit
		}
		if err := t.countRows(ctx, &r); err != nil {
			return err
		}
		c := violations{r: &r, limit: limit, seen: map[string]bool{}, per: map[string]int{}}
		for i, w := range passes {
			t.edit = nil
			if w != nil {
				t.edit = w.edit
			}
			if err := t.checkPass(ctx, opts, floors, i == len(passes)-1, &c); err != nil {
				return err
			}
		}
		var err error
		r.Losses, err = t.Losses(ctx, "", -1)
		return err
	})
	if err != nil {
		return Report{}, err
	}
	if verr == nil && v >= OutboxMigration {
		st, err := s.OutboxStatus(ctx, 5)
		if err != nil {
			return Report{}, fmt.Errorf("check: %w", err)
		}
		r.Outbox = &st
	}
	return r, nil
}

// checkPassesOf are the passes of a check: one, of the window of its
// days, or those of every day (checkPasses).
func (t *tx) checkPassesOf(ctx context.Context, opts CheckOpts) ([]*checkWindow, error) {
	if opts.Days <= 0 {
		return t.checkPasses(ctx, opts)
	}
	w, err := t.checkWindowOf(ctx, opts, opts.Days)
	return []*checkWindow{w}, err
}

// countRows counts the sites, tickets and events check reads (t.edit's
// window of recent days, else all).
func (t *tx) countRows(ctx context.Context, r *Report) error {
	for _, c := range []struct {
		q string
		n *int
	}{{"SELECT COUNT(*) FROM tickets", &r.Tickets}, {"SELECT COUNT(*) FROM events", &r.Events},
		{"SELECT COUNT(*) FROM (SELECT site FROM tickets UNION SELECT site FROM events) x", &r.Sites}} {
		rows, err := t.rowsAsText(ctx, c.q, 1, 1, nil)
		if err != nil {
			return t.wrap("check: count", err)
		}
		*c.n, _ = strconv.Atoi(cmpOr(rows, "0"))
	}
	return nil
}

// nowChecks are the checks of what holds now (the counters, the site's
// version, the bookings, none of them by day): a check of every day in
// chunks runs them in its last pass only.
var nowChecks = map[string]bool{"one counter per ticket": true, "counter holds a live ticket": true,
	"site version is the newest event": true, "counters agree with their events": true,
	"counters the events leave holding exist": true}

// checkPass runs the checks on t.edit's window (the last of the passes:
// with the checks of what holds now).
func (t *tx) checkPass(ctx context.Context, opts CheckOpts, floors, last bool, c *violations) error {
	all := slices.Concat(checks, eventChecks)
	if last {
		all = append(all, bookingChecks...)
	}
	if floors {
		all = floored(all)
	}
	for _, ch := range all {
		if !last && nowChecks[ch.name] {
			continue
		}
		lines, err := t.rowsAsText(ctx, t.s.d.checkQuery(ch.query), ch.cols, c.limit, nil)
		if err != nil {
			return t.wrap("check: "+ch.name, err)
		}
		for _, v := range lines {
			c.add(ch.name, ch.text(v))
		}
	}
	var r Report
	if err := t.checkOrphanNumbers(ctx, opts, c.limit, &r); err != nil {
		return err
	}
	for _, v := range r.Violations {
		c.add("orphan numbers", v)
	}
	r.Violations = nil
	if err := t.checkDays(ctx, opts, c.limit, &r); err != nil {
		return err
	}
	for _, v := range r.Violations {
		c.add("finished days", v)
	}
	return nil
}

// violations gathers the violations of the passes of a check into r: a
// line once (chunks overlap by a day), at most limit of a check.
type violations struct {
	r     *Report
	limit int
	seen  map[string]bool
	per   map[string]int
}

func (c *violations) add(check, line string) {
	if c.seen[line] || c.per[check] >= c.limit {
		return
	}
	c.seen[line] = true
	c.per[check]++
	c.r.Violations = append(c.r.Violations, line)
}

// maxOrphans caps the ISSUED events without a ticket that
// checkOrphanNumbers compares (each costs two or three indexed look-ups);
// every one of them is already a violation of "every event's ticket exists".
const maxOrphans = 1000

// checkOrphanNumbers is the rest of invariant 1 on the event log: an ISSUED
// event whose ticket is gone (its insert rolled back, the event committed)
// still told a kiosk its number, and the day counter, rolled back with the
// ticket, gave the number again. Events carry no day, so each such event is
// placed on the service day of its time (opts.DayOf), or, without one, on the
// day of the ticket issued nearest before it in the site's log (after it, for
// the first), and compared with the tickets and the other orphans of that
// (site, service, day, number).
func (t *tx) checkOrphanNumbers(ctx context.Context, opts CheckOpts, limit int, r *Report) error {
	orphans, err := t.rowsAsText(ctx, "SELECT e.site, e.version, e.service, e.number, e.ticket_id, e.at FROM events e "+
		"WHERE e.type = 'ISSUED' AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.id = e.ticket_id AND t.site = e.site) "+
		"ORDER BY e.site, e.version", 6, maxOrphans, nil)
	if err != nil {
		return t.wrap("check: ISSUED events without a ticket", err)
	}
	d := t.s.d
	before := d.Rebind("SELECT t.day FROM events p JOIN tickets t ON t.id = p.ticket_id AND t.site = p.site " +
		"WHERE p.site = ? AND p.type = 'ISSUED' AND p.version < ? ORDER BY p.version DESC LIMIT 1")
	after := d.Rebind("SELECT t.day FROM events p JOIN tickets t ON t.id = p.ticket_id AND t.site = p.site " +
		"WHERE p.site = ? AND p.type = 'ISSUED' AND p.version > ? ORDER BY p.version LIMIT 1")
	same := d.Rebind("SELECT id FROM tickets WHERE site = ? AND day = ? AND number = ? AND service = ? ORDER BY id")
	seen := map[[4]string]string{} // (site, service, day, number) -> version of the first orphan
	found := 0
	for _, o := range orphans {
		if found == limit {
			break
		}
		site, version, service, number, id := o[0], o[1], o[2], o[3], o[4]
		v, err := strconv.ParseInt(version, 10, 64)
		if err != nil {
			return fmt.Errorf("%s: check: version %q of an ISSUED event: %w", t.s.d.Name, version, err)
		}
		day := ""
		if atMs, err := strconv.ParseInt(o[5], 10, 64); err == nil && atMs != 0 && opts.DayOf != nil {
			day = opts.DayOf(site, at(atMs))
		}
		for _, q := range []string{before, after} {
			if day != "" {
				break
			}
			days, err := t.rowsAsText(ctx, q, 1, 1, []any{site, v})
			if err != nil {
				return t.wrap("check: day of an ISSUED event without a ticket", err)
			}
			if len(days) > 0 {
				day = days[0][0]
			}
		}
		if day == "" {
			continue // no ticket of the site to share its number with
		}
		head := fmt.Sprintf("invariant 1: site %s service %s day %s: number %s announced twice: ISSUED event version %s (ticket id %s, missing)", site, service, day, number, version, id)
		key := [4]string{site, service, day, number}
		if first, ok := seen[key]; ok {
			r.Violations = append(r.Violations, fmt.Sprintf("%s and ISSUED event version %s, also without its ticket", head, first))
			found++
			continue
		}
		seen[key] = version
		ids, err := t.rowsAsText(ctx, same, 1, limit-found, []any{site, day, number, service})
		if err != nil {
			return t.wrap("check: tickets sharing the number of an ISSUED event without a ticket", err)
		}
		for _, other := range ids {
			r.Violations = append(r.Violations, fmt.Sprintf("%s and ticket id %s", head, other[0]))
			found++
		}
	}
	return nil
}

// checkDays is invariant 5: every ticket of a day before the site's current
// day is terminal, but for those a counter still holds within the site's
// grace after the rollover (opts.HeldSince).
func (t *tx) checkDays(ctx context.Context, opts CheckOpts, limit int, r *Report) error {
	days, err := t.rowsAsText(ctx, "SELECT site, MAX(day) FROM tickets GROUP BY site ORDER BY site", 2, 0, nil)
	if err != nil {
		return t.wrap("check: days", err)
	}
	var terminal []any
	for _, st := range queue.AllStatuses {
		if st.Terminal() {
			terminal = append(terminal, string(st))
		}
	}
	q := t.s.d.Rebind("SELECT site, day, number, status FROM tickets WHERE site = ? AND day < ? AND status NOT IN (" +
		strings.TrimSuffix(strings.Repeat("?, ", len(terminal)), ", ") + ") ORDER BY day, id")
	for _, sd := range days {
		site, today := sd[0], sd[1]
		if opts.Today != nil {
			if d := opts.Today(site); d != "" {
				today = d
			}
		}
		lines, err := t.rowsAsText(ctx, q, 4, limit, append([]any{site, today}, terminal...))
		if err != nil {
			return t.wrap("check: open tickets of finished days", err)
		}
		held := ""
		if opts.HeldSince != nil {
			held = opts.HeldSince(site)
		} else if held, err = t.heldByDefault(ctx, site, today, opts.Now); err != nil {
			return t.wrap("check: held tickets", err)
		}
		for _, v := range lines {
			if held != "" && v[1] >= held && (v[3] == string(queue.StatusCalled) || v[3] == string(queue.StatusServing)) {
				continue // a counter finishes it after the rollover
			}
			r.Violations = append(r.Violations,
				fmt.Sprintf("invariant 5: site %s day %s (finished): ticket %s is still %s", v[0], v[1], v[2], v[3]))
		}
	}
	return nil
}

// heldByDefault is CheckOpts.HeldSince without a configuration: the day
// before today while now is within queue.DefaultHeldGrace of today's first
// ticket, else "".
func (t *tx) heldByDefault(ctx context.Context, site, today string, now func() time.Time) (string, error) {
	if now == nil {
		now = time.Now
	}
	first, err := t.rowsAsText(ctx, t.s.d.Rebind("SELECT MIN(issued_at) FROM tickets WHERE site = ? AND day = ?"), 1, 0, []any{site, today})
	if err != nil || len(first) == 0 {
		return "", err
	}
	at, err := strconv.ParseInt(first[0][0], 10, 64)
	if err != nil || !now().Add(-queue.DefaultHeldGrace).Before(time.UnixMilli(at)) {
		return "", nil // no ticket today (MIN is NULL), or past the grace
	}
	prev, err := t.rowsAsText(ctx, t.s.d.Rebind("SELECT MAX(day) FROM tickets WHERE site = ? AND day < ?"), 1, 0, []any{site, today})
	if err != nil || len(prev) == 0 {
		return "", err
	}
	return prev[0][0], nil
}

// rowsAsText runs q (edited by t.edit, the window of a check of recent
// days) and returns up to limit rows (0: all) of cols columns
// as text.
func (t *tx) rowsAsText(ctx context.Context, q string, cols, limit int, args []any) ([][]string, error) {
	if t.edit != nil {
		q = t.edit(q)
	}
	rows, err := t.queryText(ctx, Stmt{q, args})
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		if limit > 0 && len(out) == limit {
			break
		}
		line, err := ScanText(rows, cols)
		if err != nil {
			return nil, err
		}
		out = append(out, line)
	}
	return out, rows.Err()
}

// ScanText reads the row rows is at, of n columns, as text: a NULL reads
// as "".
func ScanText(rows *sql.Rows, n int) ([]string, error) {
	vals := make([]sql.NullString, n)
	ptrs := make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	line := make([]string, n)
	for i, v := range vals {
		line[i] = v.String
	}
	return line, nil
}
