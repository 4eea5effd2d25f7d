package sqlstore

import (
	"context"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// OutboxEntry is a notification that no event wrote: a scheduled report.
type OutboxEntry struct {
	EventID  string // the stable id receivers drop repeats by
	Receiver string
	Site     string
	// Version keeps the row apart from the site's event rows (unique per
	// site, version and receiver): scheduled entries use negative ones.
	Version int64
	Type    queue.EventType
	Body    []byte
	At      time.Time // due and created
}

// EnqueueOnce writes the entries to the outbox unless once was done
// before: the name is recorded in the leases table (held until until, by
// "done") in the same transaction, so of several daemons, or of one daemon
// started again, exactly one enqueues. It reports whether this call did.
func (s *Store) EnqueueOnce(ctx context.Context, once string, until time.Time, entries []OutboxEntry) (bool, error) {
	var did bool
	err := s.write(ctx, func(ctx context.Context, t *tx) error {
		did = false
		res, err := t.exec(ctx, Stmt{s.d.insertIfMissing("leases", []string{"name", "holder", "until_ms"}),
			[]any{once, "done", ms(until)}})
		if err := missingOK(t.wrap("enqueue "+once, err)); err != nil || res == nil {
			return err // a duplicate on MySQL: done before
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return t.wrap("enqueue "+once, err)
		}
		rows := make([]outboxRow, len(entries))
		for i, e := range entries {
			rows[i] = outboxRow{eventID: e.EventID, receiver: e.Receiver, body: e.Body,
				e: &queue.Event{Site: e.Site, Version: e.Version, Type: e.Type, At: e.At}}
		}
		if len(rows) > 0 {
			if _, err := t.exec(ctx, s.q.insertOutbox(rows)); err != nil {
				return t.wrap("enqueue "+once, err)
			}
		}
		did = true
		return nil
	})
	return did, err
}
