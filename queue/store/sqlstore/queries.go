package sqlstore

import (
	"strings"
	"time"

	"github.com/nowserving/nowserving/queue"
)

const ticketCols = "id, site, service, queue, day, seq, number, class, status, rnk, sort_key, counter, target_counter, " +
	"call_count, noshow_count, issued_at, waiting_since, called_at, first_called_at, serving_at, finished_at, device, idem_key"

const eventCols = "site, version, type, ticket_id, number, service, class, status, counter, actor, detail, at, call_count, " +
	"issuer, day, from_status, from_queue, from_counter, waited_ms, service_ms, booking_id, slot_id, resource, slot_at"

// eventArgs is the number of columns of eventCols.
const eventArgs = 24

const slotCols = "id, site, resource, start_at, end_at, capacity, booked, closed"

const bookingCols = "id, site, resource, slot_id, start_at, end_at, patient, code, status, held_until, ticket_id, number, " +
	"created_at, updated_at, device, idem_key"

// waiting is the WAITING status as an SQL literal: written into the queries
// (not bound) so PostgreSQL and SQLite use the partial indexes on it.
const waiting = "'" + string(queue.StatusWaiting) + "'"

// Stmt is one statement as a transaction sends it: the text, written for
// the dialect, and the arguments in placeholder order.
type Stmt struct {
	SQL  string
	Args []any
}

// queries builds the statements of one dialect. Every method is pure: it
// turns the parameters of one queue.Tx call into the Stmt the transaction
// sends, and the transaction only runs it and scans the result. The fixed
// texts are rebound once, in newQueries; Head, Find and the multi-row
// statements are built per call. Catalog lists them all.
type queries struct {
	d    *Dialect
	text struct {
		nextSeq, giveBackSeq                               string
		insertTicket, updateTicket, ticket, ticketByNumber string
		ticketIDs, nextSeqIDs                              string
		waiting, waitingAll, ahead, setSortKey, stats      string
		counter, counterLock, putCounter, ensureCounter    string
		counters, streak, setStreak                        string
		nextVersions, events, eventsAll, lastVersion       string
		slot, reshapeSlot, takePlace, releasePlace         string
		takeSlot                                           string
		lockPatient, insertBooking, updateBooking          string
		booking, bookingByCode                             string
		lastVersions                                       string
	}
}

func newQueries(d *Dialect) *queries {
	r := d.Rebind
	q := &queries{d: d}
	t := &q.text
	t.nextSeq = d.increment("day_counters", []string{"site", "service", "day"}, "last")
	// Giving numbers back is an UPDATE of the row the transaction took
	// them from: the upsert would build its insert row (last = n < 0)
	// first, which an unsigned column refuses.
	if d.Upsert == OnDuplicateKey {
		t.giveBackSeq = "UPDATE day_counters SET last = LAST_INSERT_ID(last - ?) WHERE site = ? AND service = ? AND day = ?"
	} else {
		t.giveBackSeq = r("UPDATE day_counters SET last = last - ? WHERE site = ? AND service = ? AND day = ? RETURNING last")
	}
	t.insertTicket = "INSERT INTO tickets (" + insertCols + ") VALUES (" + placeholders(insertArgs) + ")"
	if d.ReturningID {
		t.insertTicket += " RETURNING id"
	}
	t.insertTicket = r(t.insertTicket)
	switch d.IDs {
	case IDsSequence:
		t.ticketIDs = r("SELECT nextval(pg_get_serial_sequence('tickets', 'id')) FROM generate_series(1, ?)")
		// The counter's upsert runs once, whatever the rows of the
		// SELECT that reads it (PostgreSQL runs a WITH's data-modifying
		// statement exactly once); its five parameters come first.
		t.nextSeqIDs = "WITH s AS (" + t.nextSeq + ")" +
			" SELECT s.last, nextval(pg_get_serial_sequence('tickets', 'id')) FROM s, generate_series(1, " + d.param(6) + ")"
	case IDsAfterMax:
		t.ticketIDs = "SELECT COALESCE(MAX(id), 0) FROM tickets"
	}
	t.updateTicket = r("UPDATE tickets SET queue = ?, class = ?, status = ?, rnk = ?, sort_key = ?, counter = ?, " +
		"target_counter = ?, call_count = ?, noshow_count = ?, waiting_since = ?, called_at = ?, first_called_at = ?, serving_at = ?, " +
		"finished_at = ? WHERE id = ? AND status = ?")
	t.ticket = r("SELECT " + ticketCols + " FROM tickets WHERE id = ?")
	t.ticketByNumber = r("SELECT " + ticketCols + " FROM tickets WHERE site = ? AND day = ? AND number = ?" +
		" ORDER BY issued_at DESC, id DESC LIMIT 1")
	waitingQ := "SELECT " + ticketCols + " FROM tickets WHERE site = ? AND day = ? AND queue = ? AND status = " + waiting +
		" AND target_counter = '' AND rnk = ? ORDER BY sort_key, id"
	t.waiting, t.waitingAll = r(waitingQ+" LIMIT ?"), r(waitingQ)
	t.ahead = r("SELECT COUNT(*) FROM tickets WHERE site = ? AND day = ? AND queue = ? AND status = " + waiting +
		" AND target_counter = '' AND (rnk < ? OR (rnk = ? AND (sort_key < ? OR (sort_key = ? AND id < ?))))")
	t.setSortKey = r("UPDATE tickets SET sort_key = ? WHERE id = ? AND status = " + waiting)
	t.stats = r("SELECT queue, service, counter, status, COUNT(*), MIN(waiting_since), " +
		d.sum("CASE WHEN first_called_at > 0 THEN first_called_at - issued_at ELSE 0 END") + ", " +
		d.sum("CASE WHEN first_called_at > 0 THEN 1 ELSE 0 END") + ", " +
		d.sum("CASE WHEN serving_at > 0 AND finished_at > 0 THEN finished_at - serving_at ELSE 0 END") + ", " +
		d.sum("CASE WHEN serving_at > 0 AND finished_at > 0 THEN 1 ELSE 0 END") +
		" FROM tickets WHERE site = ? AND day = ? GROUP BY queue, service, counter, status ORDER BY queue, service, counter, status")
	counterQ := "SELECT mode, ticket_id, since FROM counters WHERE site = ? AND id = ?"
	t.counter, t.counterLock = r(counterQ), r(counterQ+" FOR UPDATE")
	t.putCounter = d.upsert("counters", []string{"site", "id"}, []string{"mode", "ticket_id", "since"})
	t.ensureCounter = d.insertIfMissing("counters", []string{"site", "id", "mode", "ticket_id", "since"})
	t.counters = r("SELECT site, id, mode, ticket_id, since FROM counters WHERE site = ? ORDER BY id")
	t.streak = r("SELECT n FROM service_streaks WHERE site = ? AND service = ?")
	t.setStreak = d.upsert("service_streaks", []string{"site", "service"}, []string{"n"})
	if d.Upsert == OnDuplicateKey {
		t.nextVersions = "INSERT INTO site_versions (site, version) VALUES (?, LAST_INSERT_ID(?))" +
			" ON DUPLICATE KEY UPDATE version = LAST_INSERT_ID(version + ?)"
	} else {
		t.nextVersions = r("INSERT INTO site_versions (site, version) VALUES (?, ?) ON CONFLICT (site)" +
			" DO UPDATE SET version = site_versions.version + ? RETURNING version")
	}
	eventsQ := "SELECT " + eventCols + " FROM events WHERE site = ? AND version > ? ORDER BY version"
	t.events, t.eventsAll = r(eventsQ+" LIMIT ?"), r(eventsQ)
	t.lastVersion = r("SELECT version FROM site_versions WHERE site = ?")
	q.bookingTexts()
	t.lastVersions = "SELECT site, version FROM site_versions"
	return q
}

// bookingTexts rebinds the fixed statements of appointments.
func (q *queries) bookingTexts() {
	d, r, t := q.d, q.d.Rebind, &q.text
	t.slot = r("SELECT " + slotCols + " FROM slots WHERE id = ?")
	t.reshapeSlot = r("UPDATE slots SET capacity = ?, closed = ?, end_at = ? WHERE id = ? AND booked <= ?")
	// The one statement that takes a place: never read-then-write.
	t.takePlace = r("UPDATE slots SET booked = booked + 1 WHERE id = ? AND booked < capacity AND closed = 0 AND start_at > ?")
	if d.MergeWrites {
		// The lock row is written from u's answer: after the slot's
		// lock, and only where a place was taken.
		t.takeSlot = r("WITH u AS (UPDATE slots SET booked = booked + 1 WHERE id = ? AND site = ? AND booked < capacity AND closed = 0" +
			" AND start_at > ? RETURNING id), l AS (INSERT INTO patient_locks (site, patient, at)" +
			" SELECT CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT) FROM u ON CONFLICT (site, patient) DO UPDATE SET at = excluded.at)" +
			" SELECT " + slotCols + ", EXISTS (SELECT 1 FROM u) FROM slots WHERE id = " + d.param(1))
	}
	t.releasePlace = r("UPDATE slots SET booked = booked - 1 WHERE id = ? AND booked > 0")
	t.lockPatient = d.upsert("patient_locks", []string{"site", "patient"}, []string{"at"})
	t.insertBooking = "INSERT INTO bookings (site, resource, slot_id, start_at, end_at, patient, code, status, held_until, " +
		"ticket_id, number, created_at, updated_at, device, idem_key) VALUES (" + placeholders(15) + ")"
	if d.ReturningID {
		t.insertBooking += " RETURNING id"
	}
	t.insertBooking = r(t.insertBooking)
	t.updateBooking = r("UPDATE bookings SET status = ?, held_until = ?, ticket_id = ?, number = ?, updated_at = ? WHERE id = ? AND status = ?")
	t.booking = r("SELECT " + bookingCols + " FROM bookings WHERE id = ?")
	t.bookingByCode = r("SELECT " + bookingCols + " FROM bookings WHERE site = ? AND code = ?")
}

// placeholders is n ? placeholders separated by commas.
func placeholders(n int) string { return repeatJoin("?", ", ", n) }

// anys is v as statement arguments.
func anys[T any](v []T) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = x
	}
	return out
}

// repeatJoin is n copies of part separated by sep.
func repeatJoin(part, sep string, n int) string {
	return strings.TrimSuffix(strings.Repeat(part+sep, n), sep)
}

// savepoint is SAVEPOINT, ROLLBACK TO SAVEPOINT or RELEASE SAVEPOINT
// (verb) of a name validName accepted.
func (q *queries) savepoint(verb, name string) Stmt {
	return Stmt{SQL: verb + " " + name}
}

// lookupRequests reads the stored results of several requests at once.
func (q *queries) lookupRequests(keys []queue.RequestKey) Stmt {
	args := make([]any, 0, 2*len(keys))
	for _, k := range keys {
		args = append(args, k.Device, k.Key)
	}
	return Stmt{q.d.Rebind("SELECT device, idem_key, op, result FROM requests WHERE " +
		repeatJoin("(device = ? AND idem_key = ?)", " OR ", len(keys))), args}
}

// saveRequests records several request results in one multi-row insert.
func (q *queries) saveRequests(reqs []queue.SavedRequest) Stmt {
	args := make([]any, 0, 5*len(reqs))
	for _, r := range reqs {
		res := r.Result
		if res == nil {
			res = []byte{}
		}
		args = append(args, r.Device, r.Key, r.Op, res, r.AtMs)
	}
	return Stmt{q.d.Rebind("INSERT INTO requests (device, idem_key, op, result, at) VALUES " +
		repeatJoin("(?, ?, ?, ?, ?)", ", ", len(reqs))), args}
}

// nextSeq adds n to a service day's number, inserting it at n, or (n < 0)
// takes -n off it; see Dialect.increment for how the new value comes back.
func (q *queries) nextSeq(k queue.DayKey, n int) Stmt {
	return Stmt{q.text.nextSeq, []any{k.Site, k.Service, k.Day, n, n}}
}

// giveBackSeq takes n from the last number of k.
func (q *queries) giveBackSeq(k queue.DayKey, n int) Stmt {
	return Stmt{q.text.giveBackSeq, []any{n, k.Site, k.Service, k.Day}}
}

// insertCols are the columns a new ticket is inserted with (but its id),
// insertArgs how many.
const (
	insertCols = "site, service, queue, day, seq, number, class, status, rnk, sort_key, " +
		"counter, target_counter, call_count, noshow_count, issued_at, waiting_since, called_at, first_called_at, serving_at, finished_at, " +
		"device, idem_key"
	insertArgs = 22
)

// insertTicket stores a new ticket (tk.Queue already set), returning its
// id where the dialect has RETURNING.
func (q *queries) insertTicket(tk *queue.Ticket) Stmt {
	return Stmt{q.text.insertTicket, []any{tk.Site, tk.Service, tk.Queue, tk.Day, tk.Seq, tk.Number, string(tk.Class), string(tk.Status),
		tk.Rank, tk.SortKey, tk.Counter, tk.TargetCounter, tk.CallCount, tk.NoShowCount,
		ms(tk.IssuedAt), ms(tk.WaitingSince), ms(tk.CalledAt), ms(tk.FirstCalledAt), ms(tk.ServingAt), ms(tk.FinishedAt),
		tk.Device, tk.IdemKey}}
}

// nextSeqIDs adds n to a service day's number and reserves ids ticket
// ids from the tickets' sequence (IDsSequence only): a row per id, each
// with the new last number.
func (q *queries) nextSeqIDs(k queue.DayKey, n, ids int) Stmt {
	return Stmt{q.text.nextSeqIDs, []any{k.Site, k.Service, k.Day, n, n, ids}}
}

// ticketIDs reserves n ticket ids (see Dialect.IDs).
func (q *queries) ticketIDs(n int) Stmt {
	if q.d.IDs == IDsAfterMax {
		return Stmt{SQL: q.text.ticketIDs}
	}
	return Stmt{q.text.ticketIDs, []any{n}}
}

// insertTickets stores new tickets, their ID and Queue set, in one
// multi-row insert.
func (q *queries) insertTickets(ts []*queue.Ticket) Stmt {
	args := make([]any, 0, (1+insertArgs)*len(ts))
	for _, tk := range ts {
		args = append(append(args, tk.ID), q.insertTicket(tk).Args...)
	}
	return Stmt{q.d.Rebind("INSERT INTO tickets (id, " + insertCols + ") VALUES " +
		repeatJoin("("+placeholders(1+insertArgs)+")", ", ", len(ts))), args}
}

// updateTicket writes the mutable fields of tk if its status is still from.
func (q *queries) updateTicket(tk *queue.Ticket, from queue.Status) Stmt {
	return Stmt{q.text.updateTicket, []any{tk.Queue, string(tk.Class), string(tk.Status),
		tk.Rank, tk.SortKey, tk.Counter, tk.TargetCounter, tk.CallCount, tk.NoShowCount,
		ms(tk.WaitingSince), ms(tk.CalledAt), ms(tk.FirstCalledAt), ms(tk.ServingAt), ms(tk.FinishedAt), tk.ID, string(from)}}
}

func (q *queries) ticket(id int64) Stmt { return Stmt{q.text.ticket, []any{id}} }

// ticketByNumber reads the most recently issued ticket of the day showing
// the number.
func (q *queries) ticketByNumber(k queue.NumberKey) Stmt {
	return Stmt{q.text.ticketByNumber, []any{k.Site, k.Day, k.Number}}
}

// head selects the first waiting ticket hq selects. Its ORDER BY matches
// the tickets_head and tickets_wait indexes column for column. lock asks
// for the row lock (hq.Lock inside a read-write transaction); the dialect
// decides whether it has one and whether it skips locked rows.
func (q *queries) head(hq queue.HeadQuery, lock bool) Stmt {
	var c clause
	c.add("SELECT "+ticketCols+" FROM tickets WHERE site = ? AND day = ?", hq.Site, hq.Day)
	and(&c, " AND queue = ?", hq.Service)
	c.add(" AND status = "+waiting+" AND target_counter = ?", hq.Counter)
	addIn(&c, " AND class IN", hq.Classes)
	addIn(&c, " AND class NOT IN", hq.NotClasses)
	and(&c, " AND waiting_since < ?", hq.WaitingBefore)
	if hq.ByWait {
		c.add(" ORDER BY waiting_since, id LIMIT 1")
	} else {
		c.add(" ORDER BY rnk, sort_key, id LIMIT 1")
	}
	if lock && q.d.RowLocks {
		c.add(" FOR UPDATE")
		if q.d.SkipLocked {
			c.add(" SKIP LOCKED")
		}
	}
	return c.stmt(q.d)
}

// clause builds the text and the arguments of a statement side by side.
type clause struct {
	b    strings.Builder
	args []any
}

// add appends text and the arguments of its placeholders.
func (c *clause) add(text string, args ...any) {
	c.b.WriteString(text)
	c.args = append(c.args, args...)
}

// and appends cond, a condition with one placeholder, bound to v, unless
// v is the zero value (a filter's field left unset).
func and[T comparable](c *clause, cond string, v T) {
	var zero T
	if v != zero {
		c.add(cond, v)
	}
}

// byID orders a listing by id and keeps its first limit rows (all of them
// when limit <= 0).
func (c *clause) byID(limit int) {
	c.add(" ORDER BY id")
	if limit > 0 {
		c.add(" LIMIT ?", limit)
	}
}

// addIn appends prefix and a parenthesised placeholder list of vs, bound
// as plain strings; nothing when vs is empty (a filter left unset).
func addIn[T ~string](c *clause, prefix string, vs []T) {
	in(c, prefix, vs, func(v T) any { return string(v) })
}

// in appends prefix and a parenthesised placeholder list of vs, each
// bound as arg gives it; nothing when vs is empty.
func in[T any](c *clause, prefix string, vs []T, arg func(T) any) {
	if len(vs) == 0 {
		return
	}
	c.b.WriteString(prefix + " (" + placeholders(len(vs)) + ")")
	for _, v := range vs {
		c.args = append(c.args, arg(v))
	}
}

// stmt is the statement built, rebound for d.
func (c *clause) stmt(d *Dialect) Stmt { return Stmt{d.Rebind(c.b.String()), c.args} }

// waiting lists waiting tickets of one queue and rank not transferred to a
// counter, by sort key; wq.Limit <= 0 lists them all.
func (q *queries) waiting(wq queue.WaitingQuery) Stmt {
	if wq.Limit <= 0 {
		return Stmt{q.text.waitingAll, []any{wq.Site, wq.Day, wq.Service, wq.Rank}}
	}
	return Stmt{q.text.waiting, []any{wq.Site, wq.Day, wq.Service, wq.Rank, wq.Limit}}
}

// ahead counts the waiting tickets of tk's queue and day, not transferred
// to a counter, ordered before tk by (rank, sort key, id).
func (q *queries) ahead(tk *queue.Ticket) Stmt {
	return Stmt{q.text.ahead, []any{tk.Site, tk.Day, tk.Queue, tk.Rank, tk.Rank, tk.SortKey, tk.SortKey, tk.ID}}
}

// setSortKey moves a ticket that is still waiting.
func (q *queries) setSortKey(id, key int64) Stmt {
	return Stmt{q.text.setSortKey, []any{key, id}}
}

// find lists the tickets f selects, by id.
func (q *queries) find(f queue.Filter) Stmt {
	var c clause
	c.add("SELECT "+ticketCols+" FROM tickets WHERE site = ?", f.Site)
	and(&c, " AND queue = ?", f.Service)
	and(&c, " AND day = ?", f.Day)
	and(&c, " AND day < ?", f.BeforeDay)
	addIn(&c, " AND status IN", f.Statuses)
	and(&c, " AND called_at > 0 AND called_at < ?", f.CalledBefore)
	in(&c, " AND id IN", f.IDs, func(id int64) any { return id })
	c.byID(f.Limit)
	return c.stmt(q.d)
}

// stats aggregates a site's service day by queue, issuing service, counter
// and status.
func (q *queries) stats(d queue.SiteDay) Stmt {
	return Stmt{q.text.stats, []any{d.Site, d.Day}}
}

// counter reads a counter's state; lock locks its row (FOR UPDATE) where
// the dialect has row locks.
func (q *queries) counter(k queue.CounterKey, lock bool) Stmt {
	if lock && q.d.RowLocks {
		return Stmt{q.text.counterLock, []any{k.Site, k.ID}}
	}
	return Stmt{q.text.counter, []any{k.Site, k.ID}}
}

// ensureCounter inserts a counter open and idle unless it exists, so that
// there is a row to lock.
func (q *queries) ensureCounter(k queue.CounterKey) Stmt {
	return Stmt{q.text.ensureCounter, []any{k.Site, k.ID, string(queue.CounterOpen), 0, 0}}
}

// putCounter writes a counter's state, inserting or updating its row.
func (q *queries) putCounter(c queue.CounterState) Stmt {
	return Stmt{q.text.putCounter, []any{c.Site, c.ID, string(c.Mode), c.TicketID, ms(c.Since)}}
}

func (q *queries) counters(site string) Stmt { return Stmt{q.text.counters, []any{site}} }

func (q *queries) streak(k queue.ServiceKey) Stmt {
	return Stmt{q.text.streak, []any{k.Site, k.Service}}
}

func (q *queries) setStreak(k queue.ServiceKey, n int) Stmt {
	return Stmt{q.text.setStreak, []any{k.Site, k.Service, n}}
}

// lockSites locks the version rows of sites (creating them at 0) without
// changing them, in the order given; returning (OnConflict only) gives
// back each site and its version.
func (q *queries) lockSites(sites []string, returning bool) Stmt {
	args := anys(sites)
	rows := repeatJoin("(?, 0)", ", ", len(sites))
	if q.d.Upsert == OnDuplicateKey {
		return Stmt{"INSERT INTO site_versions (site, version) VALUES " + rows +
			" ON DUPLICATE KEY UPDATE version = version + 0", args}
	}
	text := "INSERT INTO site_versions (site, version) VALUES " + rows +
		" ON CONFLICT (site) DO UPDATE SET version = site_versions.version"
	if returning {
		text += " RETURNING site, version"
	}
	return Stmt{q.d.Rebind(text), args}
}

// bumpVersion adds n to the version of a site whose row exists (locked by
// lockSites).
func (q *queries) bumpVersion(site string, n int64) Stmt {
	return Stmt{q.d.Rebind("UPDATE site_versions SET version = version + ? WHERE site = ?"), []any{n, site}}
}

// nextVersions adds n to a site's version, inserting it at n, and gives
// back the new value (RETURNING, or LAST_INSERT_ID() with OnDuplicateKey).
func (q *queries) nextVersions(site string, n int64) Stmt {
	return Stmt{q.text.nextVersions, []any{site, n, n}}
}

// insertEvents stores evs, their Site and Version already set, in one
// multi-row insert.
func (q *queries) insertEvents(evs []*queue.Event) Stmt {
	args := make([]any, 0, eventArgs*len(evs))
	for _, e := range evs {
		args = append(args, e.Site, e.Version, string(e.Type), e.TicketID, e.Number, e.Service,
			string(e.Class), string(e.Status), e.Counter, e.Actor, e.Detail, ms(e.At), e.CallCount,
			e.Issuer, e.Day, string(e.From), e.FromQueue, e.FromCounter, e.Waited.Milliseconds(), e.ServiceTime.Milliseconds(),
			e.BookingID, e.Slot, e.Resource, ms(e.SlotAt))
	}
	return Stmt{q.d.Rebind("INSERT INTO events (" + eventCols + ") VALUES " +
		repeatJoin("("+placeholders(eventArgs)+")", ", ", len(evs))), args}
}

// events lists a site's events after a version; eq.Limit <= 0 lists them
// all.
func (q *queries) events(eq queue.EventsQuery) Stmt {
	if eq.Limit > 0 {
		return Stmt{q.text.events, []any{eq.Site, eq.After, eq.Limit}}
	}
	return Stmt{q.text.eventsAll, []any{eq.Site, eq.After}}
}

func (q *queries) lastVersion(site string) Stmt {
	return Stmt{q.text.lastVersion, []any{site}}
}

// insertSlots creates the slots not there yet, in one multi-row insert
// that skips the (site, resource, start) that exist.
func (q *queries) insertSlots(slots []queue.Slot) Stmt {
	args := make([]any, 0, 6*len(slots))
	for _, sl := range slots {
		args = append(args, sl.Site, sl.Resource, ms(sl.Start), ms(sl.End), sl.Capacity, boolInt(sl.Closed))
	}
	text := "INSERT INTO slots (site, resource, start_at, end_at, capacity, closed) VALUES " +
		repeatJoin("(?, ?, ?, ?, ?, ?)", ", ", len(slots))
	if q.d.Upsert == OnDuplicateKey {
		text += " ON DUPLICATE KEY UPDATE id = id"
	} else {
		text += " ON CONFLICT (site, resource, start_at) DO NOTHING"
	}
	return Stmt{q.d.Rebind(text), args}
}

// boolInt is b as the 0 or 1 a boolean column holds.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// slots lists the slots of a site starting in [From, To), by start and
// resource.
func (q *queries) slots(sq queue.SlotQuery) Stmt {
	var c clause
	c.add("SELECT "+slotCols+" FROM slots WHERE site = ?", sq.Site)
	and(&c, " AND resource = ?", sq.Resource)
	c.add(" AND start_at >= ? AND start_at < ? ORDER BY start_at, resource", ms(sq.From), ms(sq.To))
	return c.stmt(q.d)
}

func (q *queries) slot(id int64) Stmt { return Stmt{q.text.slot, []any{id}} }

// reshapeSlot sets a slot's capacity, closed flag and end, unless the
// capacity falls below its bookings.
func (q *queries) reshapeSlot(sl queue.Slot) Stmt {
	return Stmt{q.text.reshapeSlot, []any{sl.Capacity, boolInt(sl.Closed), ms(sl.End), sl.ID, sl.Capacity}}
}

// takePlace adds one booking to an open slot with a place left that starts
// after now.
func (q *queries) takePlace(id int64, now time.Time) Stmt {
	return Stmt{q.text.takePlace, []any{id, ms(now)}}
}

// takeSlot reads a slot and takes a place in it (as takePlace, and only
// in a slot of site) in one statement: the UPDATE in a data-modifying WITH,
// the SELECT reading the row as it stood before it, and whether it took
// one (MergeWrites dialects).
func (q *queries) takeSlot(k queue.PatientKey, id int64, now time.Time) Stmt {
	return Stmt{q.text.takeSlot, []any{id, k.Site, ms(now), k.Site, k.Patient, ms(now)}}
}

func (q *queries) releasePlace(id int64) Stmt { return Stmt{q.text.releasePlace, []any{id}} }

// lockPatient upserts the patient's lock row, locking it.
func (q *queries) lockPatient(k queue.PatientKey, now time.Time) Stmt {
	return Stmt{q.text.lockPatient, []any{k.Site, k.Patient, ms(now)}}
}

func (q *queries) insertBooking(b *queue.Booking) Stmt {
	return Stmt{q.text.insertBooking, []any{b.Site, b.Resource, b.Slot, ms(b.Start), ms(b.End), b.Patient, b.Code, string(b.Status),
		ms(b.HeldUntil), b.TicketID, b.Number, ms(b.CreatedAt), ms(b.UpdatedAt), b.Device, b.IdemKey}}
}

// updateBooking writes b's mutable fields if its status is still from.
func (q *queries) updateBooking(b *queue.Booking, from queue.BookingStatus) Stmt {
	return Stmt{q.text.updateBooking, []any{string(b.Status), ms(b.HeldUntil), b.TicketID, b.Number, ms(b.UpdatedAt), b.ID, string(from)}}
}

func (q *queries) booking(id int64) Stmt { return Stmt{q.text.booking, []any{id}} }

func (q *queries) bookingByCode(site, code string) Stmt {
	return Stmt{q.text.bookingByCode, []any{site, code}}
}

// findBookings lists the bookings f selects, by id.
func (q *queries) findBookings(f queue.BookingFilter) Stmt {
	var c clause
	c.add("SELECT "+bookingCols+" FROM bookings WHERE site = ?", f.Site)
	and(&c, " AND patient = ?", f.Patient)
	and(&c, " AND slot_id = ?", f.Slot)
	and(&c, " AND resource = ?", f.Resource)
	addIn(&c, " AND status IN", f.Statuses)
	and(&c, " AND start_at < ?", ms(f.StartBefore))
	and(&c, " AND end_at > ?", ms(f.EndAfter))
	and(&c, " AND end_at < ?", ms(f.EndBefore))
	and(&c, " AND held_until > 0 AND held_until < ?", ms(f.HeldBefore))
	c.byID(f.Limit)
	return c.stmt(q.d)
}

func (q *queries) lastVersions() Stmt {
	return Stmt{q.text.lastVersions, nil}
}
