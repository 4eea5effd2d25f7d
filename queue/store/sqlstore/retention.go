package sqlstore

import (
	"context"
	"time"
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
		if _, err := t.exec(ctx, Stmt{s.d.insertIfMissing("leases", []string{"name", "holder", "until_ms"}, "until_ms"),
			[]any{l.Name, "", int64(0)}}); err != nil {
			return t.wrap("take lease "+l.Name, err)
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
