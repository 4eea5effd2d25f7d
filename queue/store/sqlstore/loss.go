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

// The repair of lost work (queue.LossTx) runs once in a rare while, so its
// statements are built for the call and sent as text, outside the catalog
// of the engine's statements (as Check's are).

var _ queue.LossTx = (*tx)(nil)

// SkipVersions moves a site's version on by n without events.
func (t *tx) SkipVersions(ctx context.Context, site string, n int64) (int64, error) {
	last, err := t.increment(ctx, Stmt{t.s.q.text.nextVersions, []any{site, n, n}})
	if err != nil {
		return 0, t.wrap(fmt.Sprintf("skip %d versions of %s", n, site), err)
	}
	t.movedTo(site, last)
	return last, nil
}

// RaiseSeq moves a service day's counter up to to, if it is below; it
// returns where the counter stood.
func (t *tx) RaiseSeq(ctx context.Context, k queue.DayKey, to int) (int, error) {
	var cur int
	err := t.queryRow(ctx, Stmt{t.s.d.Rebind("SELECT last FROM day_counters WHERE site = ? AND service = ? AND day = ?"),
		[]any{k.Site, k.Service, k.Day}}).Scan(&cur)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, t.wrap("read day counter", err)
	}
	if cur >= to {
		return cur, nil
	}
	if _, err := t.NextSeq(ctx, k, to-cur); err != nil {
		return 0, err
	}
	return cur, nil
}

// RestoreTickets stores tickets with the ids they had, then makes sure
// the store gives no later ticket an id up to past or to the largest
// stored: PostgreSQL's sequence is moved there; MySQL's auto-increment is
// moved past past by a row inserted with that id and deleted again (InnoDB
// keeps the counter); SQLite's ids follow the largest stored (one daemon
// writes it, and it knows every id it gave).
func (t *tx) RestoreTickets(ctx context.Context, ts []*queue.Ticket, past int64) error {
	if len(ts) > 0 {
		if err := t.InsertTickets(ctx, ts); err != nil {
			return err
		}
	}
	switch t.s.d.IDs {
	case IDsSequence:
		_, err := t.execText(ctx, Stmt{"SELECT setval(pg_get_serial_sequence('tickets', 'id'), " +
			"GREATEST((SELECT MAX(id) FROM tickets), (SELECT last_value FROM pg_sequences WHERE schemaname = current_schema() " +
			"AND sequencename = split_part(pg_get_serial_sequence('tickets', 'id'), '.', 2)), $1::bigint, 1))", []any{past}})
		if err != nil {
			return t.wrap("move the ticket ids past the restored ones", err)
		}
	case IDsOnInsert:
		var top int64
		if err := t.queryRow(ctx, Stmt{SQL: "SELECT COALESCE(MAX(id), 0) FROM tickets"}).Scan(&top); err != nil {
			return t.wrap("move the ticket ids past the restored ones", err)
		}
		if past <= top {
			return nil
		}
		for _, st := range []Stmt{
			{t.s.d.Rebind("INSERT INTO tickets (id, site, service, queue, day, seq, number, class, status) VALUES (?, '', '', '', '', 0, '', '', 'CANCELLED')"), []any{past}},
			{t.s.d.Rebind("DELETE FROM tickets WHERE id = ?"), []any{past}},
		} {
			if _, err := t.execText(ctx, st); err != nil {
				return t.wrap("move the ticket ids past the restored ones", err)
			}
		}
	}
	return nil
}

// RecordLoss stores a loss record.
func (t *tx) RecordLoss(ctx context.Context, r queue.LossRecord) error {
	_, err := t.execText(ctx, Stmt{t.s.d.Rebind("INSERT INTO lost_work (site, at_ms, daemon, store_version, known_version, " +
		"gap_from, gap_to, requests, tickets, events, numbers, lost, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"),
		[]any{r.Site, r.At.UnixMilli(), r.Daemon, r.StoreVersion, r.KnownVersion, r.GapFrom, r.GapTo,
			r.Requests, r.Tickets, r.Events, strings.Join(r.Numbers, "\n"), strings.Join(r.Lost, "\n"), r.Reason}})
	if err != nil {
		return t.wrap("record lost work of "+r.Site, err)
	}
	return nil
}

// Losses lists a site's loss records (every site's when site is empty)
// whose gap ends after version after, oldest first.
func (t *tx) Losses(ctx context.Context, site string, after int64) ([]queue.LossRecord, error) {
	q := "SELECT site, at_ms, daemon, store_version, known_version, gap_from, gap_to, requests, tickets, events, " +
		"numbers, lost, reason FROM lost_work WHERE gap_to > ?"
	args := []any{after}
	if site != "" {
		q += " AND site = ?"
		args = append(args, site)
	}
	rows, err := t.queryText(ctx, Stmt{t.s.d.Rebind(q + " ORDER BY id"), args})
	if err != nil {
		return nil, t.wrap("list lost work", err)
	}
	defer rows.Close()
	var out []queue.LossRecord
	for rows.Next() {
		var r queue.LossRecord
		var at int64
		var numbers, lost string
		if err := rows.Scan(&r.Site, &at, &r.Daemon, &r.StoreVersion, &r.KnownVersion, &r.GapFrom, &r.GapTo,
			&r.Requests, &r.Tickets, &r.Events, &numbers, &lost, &r.Reason); err != nil {
			return nil, t.wrap("list lost work", err)
		}
		r.At = time.UnixMilli(at).UTC()
		r.Numbers, r.Lost = lines(numbers), lines(lost)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, t.wrap("list lost work", err)
	}
	return out, nil
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
