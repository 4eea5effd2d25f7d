package sqlstore

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"
	"unicode"

	"github.com/nowserving/nowserving/queue"
)

const outboxCols = "id, event_id, receiver, site, version, type, body, attempts, created_at, last_at, last_error"

// pending and dead are the outbox states as SQL literals: written into the
// queries (not bound) so PostgreSQL and SQLite use the partial indexes.
const (
	pending = "'" + string(OutboxPending) + "'"
	dead    = "'" + string(OutboxDead) + "'"
)

// insertOutbox stores the outbox rows of a batch of events in one
// multi-row insert, each due when its event happened.
func (q *queries) insertOutbox(rows []outboxRow) Stmt {
	args := make([]any, 0, 8*len(rows))
	for _, r := range rows {
		at := ms(r.e.At)
		args = append(args, r.eventID, r.receiver, r.e.Site, r.e.Version, string(r.e.Type), string(r.body), at, at)
	}
	return Stmt{q.d.Rebind("INSERT INTO outbox (event_id, receiver, site, version, type, body, due_at, created_at) VALUES " +
		repeatJoin("("+placeholders(8)+")", ", ", len(rows))), args}
}

// outboxDue selects up to n pending rows due at now, oldest first; lock
// locks them, skipping rows another claimer holds, where the dialect can.
func (q *queries) outboxDue(now int64, n int, lock bool) Stmt {
	s := "SELECT " + outboxCols + " FROM outbox WHERE state = " + pending + " AND due_at <= ? ORDER BY due_at, id LIMIT ?"
	if lock && q.d.RowLocks {
		s += " FOR UPDATE"
		if q.d.SkipLocked {
			s += " SKIP LOCKED"
		}
	}
	return Stmt{q.d.Rebind(s), []any{now, n}}
}

// claimOutbox takes one row read by outboxDue if it is still as read:
// pending, due, with attempts made.
func (q *queries) claimOutbox(id int64, attempts int, until, now int64) Stmt {
	return Stmt{q.d.Rebind("UPDATE outbox SET attempts = attempts + 1, due_at = ?, last_at = ? " +
		"WHERE id = ? AND attempts = ? AND state = " + pending + " AND due_at <= ?"), []any{until, now, id, attempts, now}}
}

// finishOutbox records an attempt's outcome if the row is still under
// that attempt's claim.
func (q *queries) finishOutbox(r OutboxResult) Stmt {
	const held = " WHERE id = ? AND attempts = ? AND state = " + pending
	switch r.Outcome {
	case Delivered:
		return Stmt{q.d.Rebind("DELETE FROM outbox" + held), []any{r.ID, r.Attempt}}
	case Release:
		return Stmt{q.d.Rebind("UPDATE outbox SET attempts = attempts - 1, due_at = ?" + held), []any{ms(r.Due), r.ID, r.Attempt}}
	}
	state := OutboxPending
	if r.Outcome == Dead {
		state = OutboxDead
	}
	return Stmt{q.d.Rebind("UPDATE outbox SET state = ?, due_at = ?, last_at = ?, last_error = ?" + held),
		[]any{string(state), ms(r.Due), ms(r.At), truncate(r.Err, maxOutboxError), r.ID, r.Attempt}}
}

// requeueOutbox makes dead rows (of one receiver, or all) pending again.
func (q *queries) requeueOutbox(receiver string, now int64) Stmt {
	s := "UPDATE outbox SET state = " + pending + ", attempts = 0, due_at = ? WHERE state = " + dead
	args := []any{now}
	if receiver != "" {
		s += " AND receiver = ?"
		args = append(args, receiver)
	}
	return Stmt{q.d.Rebind(s), args}
}

// outboxCounts counts the rows by state, with the oldest event time.
func (q *queries) outboxCounts() Stmt {
	return Stmt{"SELECT state, COUNT(*), MIN(created_at) FROM outbox GROUP BY state ORDER BY state", nil}
}

// outboxDead lists the n dead rows that failed last, newest first.
func (q *queries) outboxDead(n int) Stmt {
	return Stmt{q.d.Rebind("SELECT " + outboxCols + " FROM outbox WHERE state = " + dead +
		" ORDER BY last_at DESC, id DESC LIMIT ?"), []any{n}}
}

// EventBody is the JSON of an outbox message: "id" (the event's stable
// id), then every field of e that is set, under its name in snake_case
// ("ticket_id", "from_queue"); times in RFC 3339 (UTC), durations in
// milliseconds under the name with "_ms" ("waited_ms"). Keys are sorted.
// Fields queue.Event gains later appear without a change here.
func EventBody(id string, e *queue.Event) ([]byte, error) {
	m := map[string]any{"id": id}
	v := reflect.ValueOf(e).Elem()
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		if !f.IsExported() || fv.IsZero() {
			continue
		}
		key := snake(f.Name)
		switch x := fv.Interface().(type) {
		case time.Time:
			m[key] = x.UTC().Format(time.RFC3339Nano)
		case time.Duration:
			m[key+"_ms"] = x.Milliseconds()
		default:
			m[key] = x
		}
	}
	return json.Marshal(m)
}

// snake turns a Go field name into snake_case: TicketID -> ticket_id,
// FromQueue -> from_queue, HTTPCode -> http_code.
func snake(name string) string {
	rs := []rune(name)
	var b strings.Builder
	for i, r := range rs {
		if i > 0 && unicode.IsUpper(r) {
			prevLower := unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || (unicode.IsUpper(rs[i-1]) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
