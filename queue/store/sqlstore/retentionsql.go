package sqlstore

import (
	"strings"

	"github.com/nowserving/nowserving/queue"
)

// limited returns the statement that runs change (an UPDATE's "SET ..."
// or "" for a DELETE) on at most n rows of table matching where, in the
// order of order, with args for where's placeholders. MySQL takes ORDER BY
// and LIMIT on UPDATE and DELETE itself (and no LIMIT in an IN subquery);
// PostgreSQL has neither, so there the rows are picked by key in a
// subquery.
func (q *queries) limited(table, set, where, order string, keys []string, args []any, n int) Stmt {
	head := "DELETE FROM " + table
	if set != "" {
		head = "UPDATE " + table + " SET " + set
	}
	args = append(args, n)
	if q.d.Upsert == OnDuplicateKey {
		return Stmt{head + " WHERE " + where + " ORDER BY " + order + " LIMIT ?", args}
	}
	k := strings.Join(keys, ", ")
	if len(keys) > 1 {
		k = "(" + k + ")"
	}
	return Stmt{q.d.Rebind(head + " WHERE " + k + " IN (SELECT " + strings.Join(keys, ", ") + " FROM " + table +
		" WHERE " + where + " ORDER BY " + order + " LIMIT ?)"), args}
}

// purgeRequests deletes up to n request results saved before before,
// oldest first, by requests_at.
func (q *queries) purgeRequests(before int64, n int) Stmt {
	return q.limited("requests", "", "at < ?", "at", []string{"device", "idem_key"}, []any{before}, n)
}

// purgeOutbox deletes up to n notifications whose event happened before
// before (delivered ones are gone already: these are dead or still
// pending).
func (q *queries) purgeOutbox(before int64, n int) Stmt {
	return q.limited("outbox", "", "created_at < ?", "id", []string{"id"}, []any{before}, n)
}

// blankedPatient is what a booking's patient becomes past
// retention.personal: "~" and the booking's code, which is unique in its
// site as (slot, patient) must stay among the bookings holding a place.
func (q *queries) blankedPatient() string {
	if q.d.Upsert == OnDuplicateKey {
		return "CONCAT('~', code)"
	}
	return "'~' || code"
}

// blankPatients blanks the patient of up to n bookings whose slot ended
// before before.
func (q *queries) blankPatients(before int64, n int) Stmt {
	b := q.blankedPatient()
	return q.limited("bookings", "patient = "+b, "end_at < ? AND patient <> "+b, "id", []string{"id"}, []any{before}, n)
}

// purgePatientLocks deletes up to n patient lock rows last taken before
// before (the next booking of the patient takes a new one).
func (q *queries) purgePatientLocks(before int64, n int) Stmt {
	return q.limited("patient_locks", "", "at < ?", "at", []string{"site", "patient"}, []any{before}, n)
}

// oldestEvents reads the version, day and time of a site's n oldest
// events from version from on (the purge floor: none is older).
func (q *queries) oldestEvents(site string, from int64, n int) Stmt {
	return Stmt{q.d.Rebind("SELECT version, day, at FROM events WHERE site = ? AND version >= ? ORDER BY version LIMIT ?"), []any{site, from, n}}
}

// deleteEventsTo deletes a site's events up to version last.
func (q *queries) deleteEventsTo(site string, last int64) Stmt {
	return Stmt{q.d.Rebind("DELETE FROM events WHERE site = ? AND version <= ?"), []any{site, last}}
}

// terminal is the terminal ticket states as an SQL list.
var terminal = sqlList(queue.StatusDone, queue.StatusNoShow, queue.StatusCancelled, queue.StatusExpired)

// purgeTickets deletes up to n terminal tickets of a site's days before
// day that finished before before. By day, so the range is read on
// tickets_number (site, day, number): when nothing is due, the pass reads
// the few tickets still kept of old days, not the table by id.
func (q *queries) purgeTickets(site, day string, before int64, n int) Stmt {
	return q.limited("tickets", "", "site = ? AND day < ? AND finished_at < ? AND status IN ("+terminal+")", "day",
		[]string{"id"}, []any{site, day, before}, n)
}

// purgeDayCounters deletes up to n numbering rows of a site's days before
// day.
func (q *queries) purgeDayCounters(site, day string, n int) Stmt {
	return q.limited("day_counters", "", "site = ? AND day < ?", "day", []string{"site", "service", "day"}, []any{site, day}, n)
}

// oldSlots reads the ids of up to n slots that ended before before.
func (q *queries) oldSlots(before int64, n int) Stmt {
	return Stmt{q.d.Rebind("SELECT id FROM slots WHERE end_at < ? ORDER BY id LIMIT ?"), []any{before, n}}
}

// deleteByIDs deletes the rows of table whose col is one of ids.
func (q *queries) deleteByIDs(table, col string, ids []int64) Stmt {
	return Stmt{q.d.Rebind("DELETE FROM " + table + " WHERE " + col + " IN (" + placeholders(len(ids)) + ")"), anys(ids)}
}
