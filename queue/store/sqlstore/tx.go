package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nowserving/nowserving/queue"
)

const ticketCols = "id, site, service, queue, day, seq, number, class, status, rnk, sort_key, counter, target_counter, " +
	"call_count, noshow_count, issued_at, waiting_since, called_at, first_called_at, serving_at, finished_at, device, idem_key"

const eventCols = "site, version, type, ticket_id, number, service, class, status, counter, actor, detail, at, call_count, " +
	"issuer, day, from_status, from_queue, from_counter, waited_ms, service_ms"

// waiting is the WAITING status as an SQL literal: written into the queries
// (not bound) so PostgreSQL and SQLite use the partial indexes on it.
const waiting = "'" + string(queue.StatusWaiting) + "'"

// queries are the fixed statements, rebound for the dialect once.
type queries struct {
	nextSeq                                                   string
	insertTicket, updateTicket, ticket, ticketByNumber        string
	waiting, waitingAll, ahead, setSortKey, stats             string
	counter, counterLock, putCounter, counters, ensureCounter string
	streak, setStreak                                         string
	events, eventsAll, lastVersion                            string
}

func buildQueries(d *Dialect) queries {
	r := d.Rebind
	insertTicket := "INSERT INTO tickets (site, service, queue, day, seq, number, class, status, rnk, sort_key, " +
		"counter, target_counter, call_count, noshow_count, issued_at, waiting_since, called_at, first_called_at, serving_at, finished_at, " +
		"device, idem_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	if d.ReturningID {
		insertTicket += " RETURNING id"
	}
	waitingQ := "SELECT " + ticketCols + " FROM tickets WHERE site = ? AND day = ? AND queue = ? AND status = " + waiting +
		" AND target_counter = '' AND rnk = ? ORDER BY sort_key, id"
	counterQ := "SELECT mode, ticket_id, since FROM counters WHERE site = ? AND id = ?"
	eventsQ := "SELECT " + eventCols + " FROM events WHERE site = ? AND version > ? ORDER BY version"
	return queries{
		nextSeq:      d.increment("day_counters", []string{"site", "service", "day"}, "last"),
		insertTicket: r(insertTicket),
		updateTicket: r("UPDATE tickets SET queue = ?, class = ?, status = ?, rnk = ?, sort_key = ?, counter = ?, " +
			"target_counter = ?, call_count = ?, noshow_count = ?, waiting_since = ?, called_at = ?, first_called_at = ?, serving_at = ?, " +
			"finished_at = ? WHERE id = ? AND status = ?"),
		ticket: r("SELECT " + ticketCols + " FROM tickets WHERE id = ?"),
		ticketByNumber: r("SELECT " + ticketCols + " FROM tickets WHERE site = ? AND day = ? AND number = ?" +
			" ORDER BY issued_at DESC, id DESC LIMIT 1"),
		waiting:    r(waitingQ + " LIMIT ?"),
		waitingAll: r(waitingQ),
		ahead: r("SELECT COUNT(*) FROM tickets WHERE site = ? AND day = ? AND queue = ? AND status = " + waiting +
			" AND target_counter = '' AND (rnk < ? OR (rnk = ? AND (sort_key < ? OR (sort_key = ? AND id < ?))))"),
		setSortKey: r("UPDATE tickets SET sort_key = ? WHERE id = ? AND status = " + waiting),
		stats: r("SELECT queue, service, counter, status, COUNT(*), MIN(waiting_since), " +
			d.sum("CASE WHEN first_called_at > 0 THEN first_called_at - issued_at ELSE 0 END") + ", " +
			d.sum("CASE WHEN first_called_at > 0 THEN 1 ELSE 0 END") + ", " +
			d.sum("CASE WHEN serving_at > 0 AND finished_at > 0 THEN finished_at - serving_at ELSE 0 END") + ", " +
			d.sum("CASE WHEN serving_at > 0 AND finished_at > 0 THEN 1 ELSE 0 END") +
			" FROM tickets WHERE site = ? AND day = ? GROUP BY queue, service, counter, status ORDER BY queue, service, counter, status"),
		counter:       r(counterQ),
		counterLock:   r(counterQ + " FOR UPDATE"),
		putCounter:    d.upsert("counters", []string{"site", "id"}, []string{"mode", "ticket_id", "since"}),
		ensureCounter: d.insertIfMissing("counters", []string{"site", "id", "mode", "ticket_id", "since"}, "mode"),
		counters:      r("SELECT site, id, mode, ticket_id, since FROM counters WHERE site = ? ORDER BY id"),
		streak:        r("SELECT n FROM service_streaks WHERE site = ? AND service = ?"),
		setStreak:     d.upsert("service_streaks", []string{"site", "service"}, []string{"n"}),
		events:        r(eventsQ + " LIMIT ?"),
		eventsAll:     r(eventsQ),
		lastVersion:   r("SELECT version FROM site_versions WHERE site = ?"),
	}
}

// tx is a queue.Tx over one database/sql transaction.
type tx struct {
	s     *Store
	tx    *sql.Tx
	write bool       // false inside View: no row locks
	cache *stmtCache // prepared statements of the pool, nil when the driver caches
	// dead is the first error that ended the transaction on the database's
	// side (ErrAborted, ErrUnavailable, the context ending). InnoDB rolls a
	// whole transaction back on a deadlock and the connection goes on in
	// autocommit, where a later SAVEPOINT succeeds silently and every later
	// statement commits on its own; so after it nothing but ROLLBACK runs.
	dead error
}

var _ queue.Tx = (*tx)(nil)

// ms is t in unix milliseconds, 0 for the zero time.
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// at is the time of unix milliseconds v in UTC, the zero time for 0.
func at(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// wrap classifies a driver error of a statement; one that ends the
// transaction marks it dead.
func (t *tx) wrap(action string, err error) error {
	err = t.s.wrap(action, err)
	if t.dead == nil && endsTx(err) {
		t.dead = err
	}
	return err
}

// endsTx reports whether a classified error leaves the transaction unusable.
func endsTx(err error) bool {
	return errors.Is(err, queue.ErrAborted) || errors.Is(err, queue.ErrUnavailable) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// alive returns nil while statements may run, else an error wrapping the
// one that ended the transaction.
func (t *tx) alive() error {
	if t.dead == nil {
		return nil
	}
	return fmt.Errorf("%s: transaction already ended: %w", t.s.d.Name, t.dead)
}

// validName accepts the savepoint names written into SQL: an ASCII letter or
// underscore, then letters, digits or underscores, at most 63 bytes.
func validName(name string) bool {
	if name == "" || len(name) > 63 {
		return false
	}
	for i, c := range []byte(name) {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

func (t *tx) savepointExec(ctx context.Context, verb, name string) error {
	if !validName(name) {
		return fmt.Errorf("%s: %s %q: %w: bad savepoint name", t.s.d.Name, strings.ToLower(verb), name, queue.ErrBadRequest)
	}
	if _, err := t.execText(ctx, verb+" "+name); err != nil {
		return t.wrap(strings.ToLower(verb)+" "+name, err)
	}
	return nil
}

// Savepoint starts a savepoint.
func (t *tx) Savepoint(ctx context.Context, name string) error {
	return t.savepointExec(ctx, "SAVEPOINT", name)
}

// RollbackTo undoes everything since the savepoint, which stays open.
func (t *tx) RollbackTo(ctx context.Context, name string) error {
	return t.savepointExec(ctx, "ROLLBACK TO SAVEPOINT", name)
}

// Release ends a savepoint, keeping its changes.
func (t *tx) Release(ctx context.Context, name string) error {
	return t.savepointExec(ctx, "RELEASE SAVEPOINT", name)
}

// increment runs an increment statement built by Dialect.increment and
// returns the new value.
func (t *tx) increment(ctx context.Context, q string, args ...any) (int64, error) {
	if t.s.d.Upsert == OnDuplicateKey {
		res, err := t.exec(ctx, q, args...)
		if err != nil {
			return 0, err
		}
		return res.LastInsertId()
	}
	var n int64
	err := t.queryRow(ctx, q, args...).Scan(&n)
	return n, err
}

// NextSeq allocates the next number of (site, service, day), from 1.
func (t *tx) NextSeq(ctx context.Context, site, service, day string) (int, error) {
	n, err := t.increment(ctx, t.s.q.nextSeq, site, service, day)
	if err != nil {
		return 0, t.wrap("next seq", err)
	}
	return int(n), nil
}

// InsertTicket stores a new ticket and sets its ID (and its Queue to its
// Service when empty). (site, service, day, seq) is unique: Service is the
// service that issued the number; transfers change Queue only.
func (t *tx) InsertTicket(ctx context.Context, tk *queue.Ticket) error {
	if tk.Queue == "" {
		tk.Queue = tk.Service
	}
	args := []any{tk.Site, tk.Service, tk.Queue, tk.Day, tk.Seq, tk.Number, string(tk.Class), string(tk.Status),
		tk.Rank, tk.SortKey, tk.Counter, tk.TargetCounter, tk.CallCount, tk.NoShowCount,
		ms(tk.IssuedAt), ms(tk.WaitingSince), ms(tk.CalledAt), ms(tk.FirstCalledAt), ms(tk.ServingAt), ms(tk.FinishedAt),
		tk.Device, tk.IdemKey}
	if t.s.d.ReturningID {
		if err := t.queryRow(ctx, t.s.q.insertTicket, args...).Scan(&tk.ID); err != nil {
			return t.wrap("insert ticket "+tk.Number, err)
		}
		return nil
	}
	res, err := t.exec(ctx, t.s.q.insertTicket, args...)
	if err != nil {
		return t.wrap("insert ticket "+tk.Number, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return t.wrap("insert ticket "+tk.Number, err)
	}
	tk.ID = id
	return nil
}

// UpdateTicket writes the mutable fields of tk (queue, class, status,
// rank, sort key, counters, call and no-show counts, waiting and later
// times) if the stored status is still from; otherwise queue.ErrConflict.
func (t *tx) UpdateTicket(ctx context.Context, tk *queue.Ticket, from queue.Status) error {
	res, err := t.exec(ctx, t.s.q.updateTicket, tk.Queue, string(tk.Class), string(tk.Status),
		tk.Rank, tk.SortKey, tk.Counter, tk.TargetCounter, tk.CallCount, tk.NoShowCount,
		ms(tk.WaitingSince), ms(tk.CalledAt), ms(tk.FirstCalledAt), ms(tk.ServingAt), ms(tk.FinishedAt), tk.ID, string(from))
	if err != nil {
		return t.wrap("update ticket "+tk.Number, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return t.wrap("update ticket "+tk.Number, err)
	}
	if n != 1 {
		return fmt.Errorf("%s: update ticket %s: no longer %s: %w", t.s.d.Name, tk.Number, from, queue.ErrConflict)
	}
	return nil
}

type scanner interface{ Scan(dest ...any) error }

func scanTicket(r scanner, tk *queue.Ticket) error {
	var class, status string
	var issued, waitingSince, called, firstCalled, serving, finished int64
	err := r.Scan(&tk.ID, &tk.Site, &tk.Service, &tk.Queue, &tk.Day, &tk.Seq, &tk.Number, &class, &status, &tk.Rank, &tk.SortKey,
		&tk.Counter, &tk.TargetCounter, &tk.CallCount, &tk.NoShowCount,
		&issued, &waitingSince, &called, &firstCalled, &serving, &finished, &tk.Device, &tk.IdemKey)
	if err != nil {
		return err
	}
	tk.Class, tk.Status = queue.Class(class), queue.Status(status)
	tk.IssuedAt, tk.WaitingSince, tk.CalledAt, tk.FirstCalledAt, tk.ServingAt, tk.FinishedAt =
		at(issued), at(waitingSince), at(called), at(firstCalled), at(serving), at(finished)
	return nil
}

// one reads at most one ticket; nil, nil when there is none.
func (t *tx) one(ctx context.Context, action, q string, args ...any) (*queue.Ticket, error) {
	tk := new(queue.Ticket)
	err := scanTicket(t.queryRow(ctx, q, args...), tk)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, t.wrap(action, err)
	}
	return tk, nil
}

func (t *tx) list(ctx context.Context, action, q string, args ...any) ([]queue.Ticket, error) {
	rows, err := t.query(ctx, q, args...)
	if err != nil {
		return nil, t.wrap(action, err)
	}
	defer rows.Close()
	var out []queue.Ticket
	for rows.Next() {
		var tk queue.Ticket
		if err := scanTicket(rows, &tk); err != nil {
			return nil, t.wrap(action, err)
		}
		out = append(out, tk)
	}
	if err := rows.Err(); err != nil {
		return nil, t.wrap(action, err)
	}
	return out, nil
}

// Ticket reads one ticket by id.
func (t *tx) Ticket(ctx context.Context, id int64) (*queue.Ticket, error) {
	tk, err := t.one(ctx, "read ticket", t.s.q.ticket, id)
	if err == nil && tk == nil {
		return nil, fmt.Errorf("%s: ticket %d: %w", t.s.d.Name, id, queue.ErrNotFound)
	}
	return tk, err
}

// TicketByNumber returns the most recently issued ticket of the day showing
// this number (prefixes of two services may collide).
func (t *tx) TicketByNumber(ctx context.Context, site, day, number string) (*queue.Ticket, error) {
	tk, err := t.one(ctx, "read ticket "+number, t.s.q.ticketByNumber, site, day, number)
	if err == nil && tk == nil {
		return nil, fmt.Errorf("%s: ticket %s on %s: %w", t.s.d.Name, number, day, queue.ErrNotFound)
	}
	return tk, err
}

func classArgs(cs []queue.Class) (string, []any) {
	args := make([]any, len(cs))
	for i, c := range cs {
		args[i] = string(c)
	}
	return strings.TrimSuffix(strings.Repeat("?, ", len(cs)), ", "), args
}

// Head returns the first waiting ticket q selects, nil if none. Its ORDER
// BY matches the tickets_head and tickets_wait indexes column for column.
func (t *tx) Head(ctx context.Context, q queue.HeadQuery) (*queue.Ticket, error) {
	var b strings.Builder
	b.WriteString("SELECT " + ticketCols + " FROM tickets WHERE site = ? AND day = ?")
	args := []any{q.Site, q.Day}
	if q.Service != "" {
		b.WriteString(" AND queue = ?")
		args = append(args, q.Service)
	}
	b.WriteString(" AND status = " + waiting + " AND target_counter = ?")
	args = append(args, q.Counter)
	if len(q.Classes) > 0 {
		ph, a := classArgs(q.Classes)
		b.WriteString(" AND class IN (" + ph + ")")
		args = append(args, a...)
	}
	if len(q.NotClasses) > 0 {
		ph, a := classArgs(q.NotClasses)
		b.WriteString(" AND class NOT IN (" + ph + ")")
		args = append(args, a...)
	}
	if q.WaitingBefore != 0 {
		b.WriteString(" AND waiting_since < ?")
		args = append(args, q.WaitingBefore)
	}
	if q.ByWait {
		b.WriteString(" ORDER BY waiting_since, id LIMIT 1")
	} else {
		b.WriteString(" ORDER BY rnk, sort_key, id LIMIT 1")
	}
	if q.Lock && t.write && t.s.d.RowLocks {
		b.WriteString(" FOR UPDATE")
		if t.s.d.SkipLocked {
			b.WriteString(" SKIP LOCKED")
		}
	}
	return t.one(ctx, "head of "+q.Service, t.s.d.Rebind(b.String()), args...)
}

// Waiting lists waiting tickets of one rank not transferred to a counter,
// by sort key; limit <= 0 lists them all.
func (t *tx) Waiting(ctx context.Context, site, day, service string, rank, limit int) ([]queue.Ticket, error) {
	if limit <= 0 {
		return t.list(ctx, "list waiting", t.s.q.waitingAll, site, day, service, rank)
	}
	return t.list(ctx, "list waiting", t.s.q.waiting, site, day, service, rank, limit)
}

// Ahead counts the waiting tickets of tk's queue and day, not transferred
// to a counter, ordered before tk by (rank, sort key, id).
func (t *tx) Ahead(ctx context.Context, tk *queue.Ticket) (int, error) {
	var n int
	err := t.queryRow(ctx, t.s.q.ahead, tk.Site, tk.Day, tk.Queue,
		tk.Rank, tk.Rank, tk.SortKey, tk.SortKey, tk.ID).Scan(&n)
	if err != nil {
		return 0, t.wrap("count ahead of "+tk.Number, err)
	}
	return n, nil
}

// SetSortKey moves a waiting ticket; a ticket no longer waiting is a
// conflict.
func (t *tx) SetSortKey(ctx context.Context, id, key int64) error {
	res, err := t.exec(ctx, t.s.q.setSortKey, key, id)
	if err != nil {
		return t.wrap("set sort key", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return t.wrap("set sort key", err)
	}
	if n != 1 {
		return fmt.Errorf("%s: set sort key of ticket %d: not waiting: %w", t.s.d.Name, id, queue.ErrConflict)
	}
	return nil
}

// Find lists the tickets f selects, by id.
func (t *tx) Find(ctx context.Context, f queue.Filter) ([]queue.Ticket, error) {
	var b strings.Builder
	b.WriteString("SELECT " + ticketCols + " FROM tickets WHERE site = ?")
	args := []any{f.Site}
	if f.Service != "" {
		b.WriteString(" AND queue = ?")
		args = append(args, f.Service)
	}
	if f.Day != "" {
		b.WriteString(" AND day = ?")
		args = append(args, f.Day)
	}
	if f.BeforeDay != "" {
		b.WriteString(" AND day < ?")
		args = append(args, f.BeforeDay)
	}
	if len(f.Statuses) > 0 {
		b.WriteString(" AND status IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(f.Statuses)), ", ") + ")")
		for _, s := range f.Statuses {
			args = append(args, string(s))
		}
	}
	if f.CalledBefore != 0 {
		b.WriteString(" AND called_at > 0 AND called_at < ?")
		args = append(args, f.CalledBefore)
	}
	b.WriteString(" ORDER BY id")
	if f.Limit > 0 {
		b.WriteString(" LIMIT ?")
		args = append(args, f.Limit)
	}
	return t.list(ctx, "find tickets", t.s.d.Rebind(b.String()), args...)
}

// Stats aggregates a site's service day by service, counter and status.
func (t *tx) Stats(ctx context.Context, site, day string) ([]queue.StatRow, error) {
	rows, err := t.query(ctx, t.s.q.stats, site, day)
	if err != nil {
		return nil, t.wrap("stats", err)
	}
	defer rows.Close()
	var out []queue.StatRow
	for rows.Next() {
		var r queue.StatRow
		var status string
		if err := rows.Scan(&r.Service, &r.Issuer, &r.Counter, &status, &r.N, &r.MinWaitingSince,
			&r.SumWait, &r.NWait, &r.SumService, &r.NService); err != nil {
			return nil, t.wrap("stats", err)
		}
		r.Status = queue.Status(status)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, t.wrap("stats", err)
	}
	return out, nil
}

// Counter reads a counter's state. In a read-write transaction on a
// database with row locks it locks the counter's row, creating it (open,
// idle) first when the counter was never written: locking a missing row
// locks nothing, and two transactions of one counter must not both see it
// idle. A counter never written is open and idle.
func (t *tx) Counter(ctx context.Context, site, id string) (queue.CounterState, error) {
	if !t.write || !t.s.d.RowLocks {
		c, _, err := t.readCounter(ctx, t.s.q.counter, site, id)
		return c, err
	}
	c, found, err := t.readCounter(ctx, t.s.q.counterLock, site, id)
	if err != nil || found {
		return c, err
	}
	if _, err := t.exec(ctx, t.s.q.ensureCounter, site, id, string(queue.CounterOpen), 0, 0); err != nil {
		return c, t.wrap("create counter "+id, err)
	}
	c, _, err = t.readCounter(ctx, t.s.q.counterLock, site, id)
	return c, err
}

func (t *tx) readCounter(ctx context.Context, q, site, id string) (queue.CounterState, bool, error) {
	c := queue.CounterState{Site: site, ID: id, Mode: queue.CounterOpen}
	var mode string
	var since int64
	err := t.queryRow(ctx, q, site, id).Scan(&mode, &c.TicketID, &since)
	if errors.Is(err, sql.ErrNoRows) {
		return c, false, nil
	}
	if err != nil {
		return c, false, t.wrap("read counter "+id, err)
	}
	c.Mode, c.Since = queue.CounterMode(mode), at(since)
	return c, true, nil
}

// PutCounter writes a counter's state.
func (t *tx) PutCounter(ctx context.Context, c queue.CounterState) error {
	if _, err := t.exec(ctx, t.s.q.putCounter, c.Site, c.ID, string(c.Mode), c.TicketID, ms(c.Since)); err != nil {
		return t.wrap("write counter "+c.ID, err)
	}
	return nil
}

// Counters lists the stored counter states of a site, by id.
func (t *tx) Counters(ctx context.Context, site string) ([]queue.CounterState, error) {
	rows, err := t.query(ctx, t.s.q.counters, site)
	if err != nil {
		return nil, t.wrap("list counters", err)
	}
	defer rows.Close()
	var out []queue.CounterState
	for rows.Next() {
		var c queue.CounterState
		var mode string
		var since int64
		if err := rows.Scan(&c.Site, &c.ID, &mode, &c.TicketID, &since); err != nil {
			return nil, t.wrap("list counters", err)
		}
		c.Mode, c.Since = queue.CounterMode(mode), at(since)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, t.wrap("list counters", err)
	}
	return out, nil
}

// Streak reads the ratio policy's streak of a service, 0 if never set.
func (t *tx) Streak(ctx context.Context, site, service string) (int, error) {
	var n int
	err := t.queryRow(ctx, t.s.q.streak, site, service).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, t.wrap("read streak", err)
	}
	return n, nil
}

// SetStreak writes the ratio policy's streak of a service.
func (t *tx) SetStreak(ctx context.Context, site, service string, n int) error {
	if _, err := t.exec(ctx, t.s.q.setStreak, site, service, n); err != nil {
		return t.wrap("write streak", err)
	}
	return nil
}

// Events lists up to limit events of a site after a version, in order;
// limit <= 0 lists them all.
func (t *tx) Events(ctx context.Context, site string, after int64, limit int) ([]queue.Event, error) {
	var rows *sql.Rows
	var err error
	if limit > 0 {
		rows, err = t.query(ctx, t.s.q.events, site, after, limit)
	} else {
		rows, err = t.query(ctx, t.s.q.eventsAll, site, after)
	}
	if err != nil {
		return nil, t.wrap("list events", err)
	}
	defer rows.Close()
	var out []queue.Event
	for rows.Next() {
		var e queue.Event
		var typ, class, status, from string
		var atMs, waited, service int64
		if err := rows.Scan(&e.Site, &e.Version, &typ, &e.TicketID, &e.Number, &e.Service, &class, &status,
			&e.Counter, &e.Actor, &e.Detail, &atMs, &e.CallCount,
			&e.Issuer, &e.Day, &from, &e.FromQueue, &e.FromCounter, &waited, &service); err != nil {
			return nil, t.wrap("list events", err)
		}
		e.Type, e.Class, e.Status, e.At = queue.EventType(typ), queue.Class(class), queue.Status(status), at(atMs)
		e.From, e.Waited, e.ServiceTime = queue.Status(from), time.Duration(waited)*time.Millisecond, time.Duration(service)*time.Millisecond
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, t.wrap("list events", err)
	}
	return out, nil
}

// LastVersion is the site's newest event version, 0 if none.
func (t *tx) LastVersion(ctx context.Context, site string) (int64, error) {
	var v int64
	err := t.queryRow(ctx, t.s.q.lastVersion, site).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, t.wrap("last version", err)
	}
	return v, nil
}
