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
	// edit, when set, rewrites the queries of a check (rowsAsText) to
	// read its window of recent days.
	edit func(string) string
	// pending are the writes waiting to go as one statement, with
	// pendingArgs parameters (see later); versions are the versions of
	// the sites whose rows LockSites locked, as they stand in this
	// transaction, where the dialect merges writes: AppendEvents numbers
	// their events without reading them back.
	pending     []pendingWrite
	pendingArgs int
	versions    map[string]int64
	hold        bool // DeferWrites was called
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
	if _, err := t.execText(ctx, t.s.q.savepoint(verb, name)); err != nil {
		return t.wrap(strings.ToLower(verb)+" "+name, err)
	}
	return nil
}

// Savepoint starts a savepoint.
func (t *tx) Savepoint(ctx context.Context, name string) error {
	return t.savepointExec(ctx, "SAVEPOINT", name)
}

// RollbackTo undoes everything since the savepoint, which stays open. The
// site versions known may have been undone with it: they are read again.
func (t *tx) RollbackTo(ctx context.Context, name string) error {
	t.versions = nil
	return t.savepointExec(ctx, "ROLLBACK TO SAVEPOINT", name)
}

// Release ends a savepoint, keeping its changes.
func (t *tx) Release(ctx context.Context, name string) error {
	return t.savepointExec(ctx, "RELEASE SAVEPOINT", name)
}

// increment runs a statement that adds to a counter row (nextSeq,
// nextVersions) and returns the new value: RETURNING, or LAST_INSERT_ID()
// with OnDuplicateKey.
func (t *tx) increment(ctx context.Context, st Stmt) (int64, error) {
	if t.s.d.Upsert == OnDuplicateKey {
		res, err := t.exec(ctx, st)
		if err != nil {
			return 0, err
		}
		return res.LastInsertId()
	}
	var n int64
	err := t.queryRow(ctx, st).Scan(&n)
	return n, err
}

// NextSeq adds n (1 or more) to the last number of a service day and
// returns it.
func (t *tx) NextSeq(ctx context.Context, k queue.DayKey, n int) (int, error) {
	if n < 1 {
		return 0, fmt.Errorf("next seq: %d numbers, want 1 or more", n)
	}
	last, err := t.increment(ctx, t.s.q.nextSeq(k, n))
	if err != nil {
		return 0, t.wrap("next seq", err)
	}
	return int(last), nil
}

// GiveBackSeq takes n from the last number of a service day: the numbers
// this transaction took and did not use.
func (t *tx) GiveBackSeq(ctx context.Context, k queue.DayKey, n int) error {
	if n < 1 {
		return fmt.Errorf("give back seq: %d numbers, want 1 or more", n)
	}
	if _, err := t.increment(ctx, t.s.q.giveBackSeq(k, n)); err != nil {
		return t.wrap("give back seq", err)
	}
	return nil
}

// InsertTicket stores a new ticket and sets its ID (and its Queue to its
// Service when empty). (site, service, day, seq) is unique: Service is the
// service that issued the number; transfers change Queue only.
func (t *tx) InsertTicket(ctx context.Context, tk *queue.Ticket) error {
	if tk.Queue == "" {
		tk.Queue = tk.Service
	}
	st := t.s.q.insertTicket(tk)
	if t.s.d.ReturningID {
		if err := t.queryRow(ctx, st).Scan(&tk.ID); err != nil {
			return t.wrap("insert ticket "+tk.Number, err)
		}
		return nil
	}
	res, err := t.exec(ctx, st)
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

// TicketIDs reserves n ticket ids for InsertTickets, where the dialect can
// (Dialect.IDs); errors.ErrUnsupported where ids come only with an insert.
func (t *tx) TicketIDs(ctx context.Context, n int) ([]int64, error) {
	var ids []int64
	switch t.s.d.IDs {
	case IDsOnInsert:
		return nil, fmt.Errorf("%s: ticket ids before the insert: %w", t.s.d.Name, errors.ErrUnsupported)
	case IDsAfterMax:
		var last int64
		if err := t.queryRow(ctx, t.s.q.ticketIDs(n)).Scan(&last); err != nil {
			return nil, t.wrap("ticket ids", err)
		}
		for i := range int64(n) {
			ids = append(ids, last+1+i)
		}
	default:
		var err error
		ids, err = rowsOf(ctx, t, "ticket ids", t.s.q.ticketIDs(n), func(row scanner, id *int64) error { return row.Scan(id) })
		if err != nil {
			return nil, err
		}
	}
	if len(ids) != n {
		return nil, fmt.Errorf("%s: ticket ids: %d of %d", t.s.d.Name, len(ids), n)
	}
	return ids, nil
}

// NextSeqIDs adds n to the last number of a service day and reserves ids
// ticket ids, in one statement where ids come from a sequence; elsewhere
// errors.ErrUnsupported.
func (t *tx) NextSeqIDs(ctx context.Context, k queue.DayKey, n, ids int) (int, []int64, error) {
	if t.s.d.IDs != IDsSequence {
		return 0, nil, fmt.Errorf("%s: numbers and ticket ids at once: %w", t.s.d.Name, errors.ErrUnsupported)
	}
	if n < 1 || ids < 1 {
		return 0, nil, fmt.Errorf("next seq and ids: %d numbers, %d ids, want 1 or more of each", n, ids)
	}
	var last int64
	got, err := rowsOf(ctx, t, "next seq and ticket ids", t.s.q.nextSeqIDs(k, n, ids), func(row scanner, id *int64) error {
		return row.Scan(&last, id)
	})
	if err != nil {
		return 0, nil, err
	}
	if len(got) != ids {
		return 0, nil, fmt.Errorf("%s: next seq and ticket ids: %d of %d ids", t.s.d.Name, len(got), ids)
	}
	return int(last), got, nil
}

// InsertTickets stores new tickets whose ID (from TicketIDs) and Queue are
// set, in multi-row inserts.
func (t *tx) InsertTickets(ctx context.Context, ts []*queue.Ticket) error {
	if t.merging() {
		return t.later(ctx, pendingWrite{st: t.s.q.insertTickets(ts), action: fmt.Sprintf("insert %d tickets", len(ts))})
	}
	return t.pieces(len(ts), func(from, to int) error {
		if _, err := t.exec(ctx, t.s.q.insertTickets(ts[from:to])); err != nil {
			return t.wrap(fmt.Sprintf("insert %d tickets", to-from), err)
		}
		return nil
	})
}

// UpdateTicket writes the mutable fields of tk (queue, class, status,
// rank, sort key, counters, call and no-show counts, waiting and later
// times) if the stored status is still from; otherwise queue.ErrConflict.
func (t *tx) UpdateTicket(ctx context.Context, tk *queue.Ticket, from queue.Status) error {
	res, err := t.exec(ctx, t.s.q.updateTicket(tk, from))
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
func (t *tx) one(ctx context.Context, action string, st Stmt) (*queue.Ticket, error) {
	return atMostOne(ctx, t, action, st, scanTicket)
}

// atMostOne runs st and reads the one row of its answer into a T with
// scan; nil, nil when there is none.
func atMostOne[T any](ctx context.Context, t *tx, action string, st Stmt, scan func(scanner, *T) error) (*T, error) {
	v := new(T)
	err := scan(t.queryRow(ctx, st), v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, t.wrap(action, err)
	}
	return v, nil
}

// value runs st and reads the one column of its one row; the zero T when
// there is no row.
func value[T any](ctx context.Context, t *tx, action string, st Stmt) (T, error) {
	v, err := atMostOne(ctx, t, action, st, func(r scanner, v *T) error { return r.Scan(v) })
	if v == nil {
		var zero T
		return zero, err
	}
	return *v, nil
}

func (t *tx) list(ctx context.Context, action string, st Stmt) ([]queue.Ticket, error) {
	return rowsOf(ctx, t, action, st, scanTicket)
}

// rowsOf runs st and reads every row of its answer into a T with scan;
// action names the call in its errors.
func rowsOf[T any](ctx context.Context, t *tx, action string, st Stmt, scan func(scanner, *T) error) ([]T, error) {
	rows, err := t.query(ctx, st)
	if err != nil {
		return nil, t.wrap(action, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if err := scan(rows, &v); err != nil {
			return nil, t.wrap(action, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, t.wrap(action, err)
	}
	return out, nil
}

// Ticket reads one ticket by id.
func (t *tx) Ticket(ctx context.Context, id int64) (*queue.Ticket, error) {
	tk, err := t.one(ctx, "read ticket", t.s.q.ticket(id))
	if err == nil && tk == nil {
		return nil, fmt.Errorf("%s: ticket %d: %w", t.s.d.Name, id, queue.ErrNotFound)
	}
	return tk, err
}

// TicketByNumber returns the most recently issued ticket of the day showing
// this number (prefixes of two services may collide).
func (t *tx) TicketByNumber(ctx context.Context, k queue.NumberKey) (*queue.Ticket, error) {
	tk, err := t.one(ctx, "read ticket "+k.Number, t.s.q.ticketByNumber(k))
	if err == nil && tk == nil {
		return nil, fmt.Errorf("%s: ticket %s on %s: %w", t.s.d.Name, k.Number, k.Day, queue.ErrNotFound)
	}
	return tk, err
}

// Head returns the first waiting ticket q selects, nil if none; the row is
// locked when q.Lock asks for it inside Update.
func (t *tx) Head(ctx context.Context, q queue.HeadQuery) (*queue.Ticket, error) {
	return t.one(ctx, "head of "+q.Service, t.s.q.head(q, q.Lock && t.write))
}

// Waiting lists waiting tickets of one rank not transferred to a counter,
// by sort key; limit <= 0 lists them all.
func (t *tx) Waiting(ctx context.Context, q queue.WaitingQuery) ([]queue.Ticket, error) {
	return t.list(ctx, "list waiting", t.s.q.waiting(q))
}

// Ahead counts the waiting tickets of tk's queue and day, not transferred
// to a counter, ordered before tk by (rank, sort key, id).
func (t *tx) Ahead(ctx context.Context, tk *queue.Ticket) (int, error) {
	var n int
	err := t.queryRow(ctx, t.s.q.ahead(tk)).Scan(&n)
	if err != nil {
		return 0, t.wrap("count ahead of "+tk.Number, err)
	}
	return n, nil
}

// SetSortKey moves a waiting ticket; a ticket no longer waiting is a
// conflict.
func (t *tx) SetSortKey(ctx context.Context, id, key int64) error {
	res, err := t.exec(ctx, t.s.q.setSortKey(id, key))
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
	return t.list(ctx, "find tickets", t.s.q.find(f))
}

// Stats aggregates a site's service day by service, counter and status.
func (t *tx) Stats(ctx context.Context, d queue.SiteDay) ([]queue.StatRow, error) {
	return rowsOf(ctx, t, "stats", t.s.q.stats(d), func(row scanner, r *queue.StatRow) error {
		var status string
		if err := row.Scan(&r.Service, &r.Issuer, &r.Counter, &status, &r.N, &r.MinWaitingSince,
			&r.SumWait, &r.NWait, &r.SumService, &r.NService); err != nil {
			return err
		}
		r.Status = queue.Status(status)
		return nil
	})
}

// Counter reads a counter's state. In a read-write transaction on a
// database with row locks it locks the counter's row, creating it (open,
// idle) first when the counter was never written: locking a missing row
// locks nothing, and two transactions of one counter must not both see it
// idle. A counter never written is open and idle.
func (t *tx) Counter(ctx context.Context, k queue.CounterKey) (queue.CounterState, error) {
	if !t.write || !t.s.d.RowLocks {
		c, _, err := t.readCounter(ctx, k, false)
		return c, err
	}
	c, found, err := t.readCounter(ctx, k, true)
	if err != nil || found {
		return c, err
	}
	if _, err := t.exec(ctx, t.s.q.ensureCounter(k)); err != nil {
		if err := missingOK(t.wrap("create counter "+k.ID, err)); err != nil {
			return c, err
		}
	}
	c, _, err = t.readCounter(ctx, k, true)
	return c, err
}

// missingOK is the error of an insertIfMissing statement: nil when it
// found the row there (MySQL's duplicate key).
func missingOK(err error) error {
	if errors.Is(err, queue.ErrDuplicate) {
		return nil
	}
	return err
}

func (t *tx) readCounter(ctx context.Context, k queue.CounterKey, lock bool) (queue.CounterState, bool, error) {
	c := queue.CounterState{Site: k.Site, ID: k.ID, Mode: queue.CounterOpen}
	var mode string
	var since int64
	err := t.queryRow(ctx, t.s.q.counter(k, lock)).Scan(&mode, &c.TicketID, &since)
	if errors.Is(err, sql.ErrNoRows) {
		return c, false, nil
	}
	if err != nil {
		return c, false, t.wrap("read counter "+k.ID, err)
	}
	c.Mode, c.Since = queue.CounterMode(mode), at(since)
	return c, true, nil
}

// PutCounter writes a counter's state.
func (t *tx) PutCounter(ctx context.Context, c queue.CounterState) error {
	if _, err := t.exec(ctx, t.s.q.putCounter(c)); err != nil {
		return t.wrap("write counter "+c.ID, err)
	}
	return nil
}

// Counters lists the stored counter states of a site, by id.
func (t *tx) Counters(ctx context.Context, site string) ([]queue.CounterState, error) {
	return rowsOf(ctx, t, "list counters", t.s.q.counters(site), func(row scanner, c *queue.CounterState) error {
		var mode string
		var since int64
		if err := row.Scan(&c.Site, &c.ID, &mode, &c.TicketID, &since); err != nil {
			return err
		}
		c.Mode, c.Since = queue.CounterMode(mode), at(since)
		return nil
	})
}

// Streak reads the ratio policy's streak of a service, 0 if never set.
func (t *tx) Streak(ctx context.Context, k queue.ServiceKey) (int, error) {
	return value[int](ctx, t, "read streak", t.s.q.streak(k))
}

// SetStreak writes the ratio policy's streak of a service.
func (t *tx) SetStreak(ctx context.Context, k queue.ServiceKey, n int) error {
	if _, err := t.exec(ctx, t.s.q.setStreak(k, n)); err != nil {
		return t.wrap("write streak", err)
	}
	return nil
}

// Events lists up to q.Limit events of a site after a version, in order;
// a Limit <= 0 lists them all.
func (t *tx) Events(ctx context.Context, q queue.EventsQuery) ([]queue.Event, error) {
	return rowsOf(ctx, t, "list events", t.s.q.events(q), func(row scanner, e *queue.Event) error {
		var typ, class, status, from string
		var atMs, waited, service, slotAt int64
		if err := row.Scan(&e.Site, &e.Version, &typ, &e.TicketID, &e.Number, &e.Service, &class, &status,
			&e.Counter, &e.Actor, &e.Detail, &atMs, &e.CallCount,
			&e.Issuer, &e.Day, &from, &e.FromQueue, &e.FromCounter, &waited, &service,
			&e.BookingID, &e.Slot, &e.Resource, &slotAt); err != nil {
			return err
		}
		e.Type, e.Class, e.Status, e.At = queue.EventType(typ), queue.Class(class), queue.Status(status), at(atMs)
		e.From, e.Waited, e.ServiceTime = queue.Status(from), time.Duration(waited)*time.Millisecond, time.Duration(service)*time.Millisecond
		e.SlotAt = at(slotAt)
		return nil
	})
}

// LastVersion is the site's newest event version, 0 if none.
func (t *tx) LastVersion(ctx context.Context, site string) (int64, error) {
	return value[int64](ctx, t, "last version", t.s.q.lastVersion(site))
}

// LastVersions is the newest event version of every site with events.
func (t *tx) LastVersions(ctx context.Context) (map[string]int64, error) {
	rows, err := t.query(ctx, t.s.q.lastVersions())
	if err != nil {
		return nil, t.wrap("last versions", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var site string
		var v int64
		if err := rows.Scan(&site, &v); err != nil {
			return nil, t.wrap("last versions", err)
		}
		out[site] = v
	}
	if err := rows.Err(); err != nil {
		return nil, t.wrap("last versions", err)
	}
	return out, nil
}
