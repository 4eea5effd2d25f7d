package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nowserving/nowserving/queue"
)

// OutboxMigration is the schema version that creates the outbox table.
const OutboxMigration = 7

// OutboxRoute routes events to one receiver of notifications: AppendEvents
// writes an outbox row for the receiver, in the event's transaction, for
// every event whose type Match accepts.
type OutboxRoute struct {
	// Receiver names the receiver (a webhook, a command) in the rows.
	Receiver string
	// Match reports whether events of a type go to the receiver.
	Match func(queue.EventType) bool
}

// OutboxState is the state of an outbox row: pending (waiting for its
// first or next attempt, or being delivered under a claim) or dead (given
// up after the configured attempts). A delivered row is deleted.
type OutboxState string

// Outbox row states.
const (
	OutboxPending OutboxState = "pending"
	OutboxDead    OutboxState = "dead"
)

// OutboxMessage is one row of the outbox: an event on its way to one
// receiver.
type OutboxMessage struct {
	ID int64 // the row
	// EventID is the event's stable id, the same on every attempt and for
	// every receiver of the event: receivers drop what they saw before.
	EventID  string
	Receiver string
	Site     string
	Version  int64
	Type     queue.EventType
	// Body is the JSON sent (see EventBody), fixed when the event was
	// written.
	Body []byte
	// Attempt is, on a claimed message, the number of this attempt (1 for
	// the first); on a dead one, the attempts made.
	Attempt   int
	Created   time.Time // when the event happened
	LastAt    time.Time // when the last attempt started
	LastError string    // why the last attempt failed
}

// OutboxClaim asks ClaimOutbox for up to N messages due at Now, each held
// for Lease: the claimer must report the outcome before the lease ends, or
// the message becomes due again (for this or another daemon).
type OutboxClaim struct {
	Now   time.Time
	Lease time.Duration
	N     int
}

// OutboxOutcome is what became of an attempt.
type OutboxOutcome int

// The outcomes of an attempt.
const (
	// Delivered removes the message.
	Delivered OutboxOutcome = iota
	// Retry sets the message due again at OutboxResult.Due.
	Retry
	// Dead gives the message up: it stays, state dead, for an operator.
	Dead
	// Release hands an attempt back unmade (the daemon is stopping): the
	// message is due again at OutboxResult.Due and the attempt not counted.
	Release
)

// OutboxResult reports the outcome of one claimed attempt.
type OutboxResult struct {
	ID      int64
	Attempt int // the claimed attempt (OutboxMessage.Attempt)
	Outcome OutboxOutcome
	Due     time.Time // Retry, Release: when it is due again
	At      time.Time // when the attempt ended
	Err     string    // Retry, Dead: why it failed
}

// OutboxStatus is the state of the outbox as a whole (every daemon's).
type OutboxStatus struct {
	Pending int
	Dead    int
	// OldestPending is when the event of the oldest pending message
	// happened; zero when none is pending.
	OldestPending time.Time
	// LastDead are the most recently failed dead messages, newest first.
	LastDead []OutboxMessage
}

// String says what is pending and what is dead, a dead message a line
// (the last attempt's time and error), e.g.
//
//	outbox: 2 pending (oldest from 2026-11-30T01:00:00Z), 1 dead
//	  dead: his BOOKING_BOOKED site hq v42 (event 7d44b6a2-...) after 12 attempts, last 2026-11-30T01:47:10Z: ...
func (st OutboxStatus) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "outbox: %d pending", st.Pending)
	if !st.OldestPending.IsZero() {
		fmt.Fprintf(&b, " (oldest from %s)", st.OldestPending.Format(time.RFC3339))
	}
	fmt.Fprintf(&b, ", %d dead", st.Dead)
	for _, m := range st.LastDead {
		fmt.Fprintf(&b, "\n  dead: %s %s site %s v%d (event %s) after %d attempts, last %s: %s",
			m.Receiver, m.Type, m.Site, m.Version, m.EventID, m.Attempt, m.LastAt.Format(time.RFC3339), m.LastError)
	}
	if n := st.Dead - len(st.LastDead); n > 0 && len(st.LastDead) > 0 {
		fmt.Fprintf(&b, "\n  ... and %d more dead", n)
	}
	return b.String()
}

// maxOutboxError bounds the stored text of a failed attempt, in bytes.
const maxOutboxError = 1000

// outboxRow is one row AppendEvents writes.
type outboxRow struct {
	eventID, receiver string
	e                 *queue.Event
	body              []byte
}

// appendOutbox writes the outbox rows of evs (versions set) for the
// store's routes, in the events' transaction.
func (t *tx) appendOutbox(ctx context.Context, evs []*queue.Event) error {
	rows, err := t.outboxRows(evs)
	if err != nil || len(rows) == 0 {
		return err
	}
	if _, err := t.execText(ctx, t.s.q.insertOutbox(rows)); err != nil {
		return t.wrap("append outbox rows", err)
	}
	return nil
}

// outboxRows are the outbox rows of evs (versions set) for the store's
// routes.
func (t *tx) outboxRows(evs []*queue.Event) ([]outboxRow, error) {
	if len(t.s.outbox) == 0 {
		return nil, nil
	}
	var rows []outboxRow
	for _, e := range evs {
		var id string
		var body []byte
		for _, r := range t.s.outbox {
			if !r.Match(e.Type) {
				continue
			}
			if id == "" {
				id = newEventID()
				var err error
				if body, err = EventBody(id, e); err != nil {
					return nil, fmt.Errorf("%s: outbox: %w", t.s.d.Name, err)
				}
			}
			rows = append(rows, outboxRow{id, r.Receiver, e, body})
		}
	}
	return rows, nil
}

// newEventID is a random (version 4) UUID.
func newEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// write runs fn in a read-write transaction of the store, retried as
// Update retries.
func (s *Store) write(ctx context.Context, fn func(ctx context.Context, t *tx) error) error {
	return s.Update(ctx, func(ctx context.Context, qt queue.Tx) error { return fn(ctx, qt.(*tx)) })
}

// ClaimOutbox takes up to c.N messages due at c.Now, oldest first, and
// holds each for c.Lease: it counts the attempt and moves the message's due
// time to the lease's end, so no other claimer gets it meanwhile. Several
// daemons may claim at once: on PostgreSQL and MySQL the candidates are
// locked with FOR UPDATE SKIP LOCKED, and everywhere each one is taken by
// a conditional update that must change it (attempts and due time as
// read), so a row another claimer took in between is left out.
func (s *Store) ClaimOutbox(ctx context.Context, c OutboxClaim) ([]OutboxMessage, error) {
	var out []OutboxMessage
	err := s.write(ctx, func(ctx context.Context, t *tx) error {
		out = out[:0]
		cands, err := t.outboxList(ctx, "claim outbox", s.q.outboxDue(ms(c.Now), c.N, s.d.RowLocks))
		if err != nil {
			return err
		}
		for _, m := range cands {
			res, err := t.exec(ctx, s.q.claimOutbox(m.ID, m.Attempt, ms(c.Now.Add(c.Lease)), ms(c.Now)))
			if err != nil {
				return t.wrap("claim outbox row", err)
			}
			if n, err := res.RowsAffected(); err != nil {
				return t.wrap("claim outbox row", err)
			} else if n == 1 {
				m.Attempt++
				m.LastAt = c.Now
				out = append(out, m)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// FinishOutbox records the outcomes of claimed attempts in one
// transaction. An outcome whose claim is no longer held (its lease ended
// and another claimer took the message, or an operator requeued it) changes
// nothing: that attempt's result belongs to the other claimer.
func (s *Store) FinishOutbox(ctx context.Context, rs []OutboxResult) error {
	if len(rs) == 0 {
		return nil
	}
	return s.write(ctx, func(ctx context.Context, t *tx) error {
		for _, r := range rs {
			if _, err := t.exec(ctx, s.q.finishOutbox(r)); err != nil {
				return t.wrap("finish outbox row", err)
			}
		}
		return nil
	})
}

// RequeueOutbox makes the dead messages of receiver (every receiver's
// when empty) due again at now, with their attempts counted from zero,
// and returns how many.
func (s *Store) RequeueOutbox(ctx context.Context, receiver string, now time.Time) (int, error) {
	var n int64
	err := s.write(ctx, func(ctx context.Context, t *tx) error {
		res, err := t.exec(ctx, s.q.requeueOutbox(receiver, ms(now)))
		if err != nil {
			return t.wrap("requeue outbox", err)
		}
		n, err = res.RowsAffected()
		return t.wrap("requeue outbox", err)
	})
	return int(n), err
}

// OutboxStatus counts the pending and dead messages of the outbox and
// lists the lastDead most recently failed dead ones (the console shows
// them; metrics read the counts).
func (s *Store) OutboxStatus(ctx context.Context, lastDead int) (OutboxStatus, error) {
	var st OutboxStatus
	err := s.view(ctx, &sql.TxOptions{ReadOnly: true}, func(ctx context.Context, t *tx) error {
		st = OutboxStatus{}
		rows, err := t.query(ctx, s.q.outboxCounts())
		if err != nil {
			return t.wrap("count outbox", err)
		}
		defer rows.Close()
		for rows.Next() {
			var state string
			var n int
			var oldest int64
			if err := rows.Scan(&state, &n, &oldest); err != nil {
				return t.wrap("count outbox", err)
			}
			switch OutboxState(state) {
			case OutboxPending:
				st.Pending, st.OldestPending = n, at(oldest)
			case OutboxDead:
				st.Dead = n
			}
		}
		if err := rows.Err(); err != nil {
			return t.wrap("count outbox", err)
		}
		if lastDead <= 0 || st.Dead == 0 {
			return nil
		}
		st.LastDead, err = t.outboxList(ctx, "list dead outbox rows", s.q.outboxDead(lastDead))
		return err
	})
	return st, err
}

// outboxList reads outbox rows selected with outboxCols.
func (t *tx) outboxList(ctx context.Context, action string, st Stmt) ([]OutboxMessage, error) {
	return rowsOf(ctx, t, action, st, func(row scanner, m *OutboxMessage) error {
		var typ, body string
		var created, last int64
		if err := row.Scan(&m.ID, &m.EventID, &m.Receiver, &m.Site, &m.Version, &typ, &body,
			&m.Attempt, &created, &last, &m.LastError); err != nil {
			return err
		}
		m.Type, m.Body, m.Created, m.LastAt = queue.EventType(typ), []byte(body), at(created), at(last)
		return nil
	})
}

// truncate cuts s to at most n bytes, on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
