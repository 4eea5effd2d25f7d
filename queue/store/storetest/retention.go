package storetest

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// retentionStore is what the purge of a SQL store offers beyond queue.Store.
type retentionStore interface {
	Dialect() *sqlstore.Dialect
	DB() *sql.DB
	TakeLease(ctx context.Context, l sqlstore.Lease) (bool, error)
	PurgeRequests(ctx context.Context, before time.Time, n int) (int, error)
}

func asRetention(t *testing.T, s queue.Store) retentionStore {
	t.Helper()
	rs, ok := s.(retentionStore)
	if !ok {
		t.Fatalf("%T has no purge", s)
	}
	return rs
}

// txPurgeRequests: stored results are given back byte for byte (kept
// compressed), a row written before compression reads as it was, and the
// purge deletes the results saved before its time, oldest first, at most
// n a call, leaving newer ones answering as before.
func txPurgeRequests(t *testing.T, s queue.Store) {
	rs := asRetention(t, s)
	ticket := []byte(`{"ID":3712345,"Site":"hq","Service":"A","Queue":"A","Day":"2026-11-30","Seq":123,"Number":"A123",` +
		`"Class":"normal","Status":"WAITING","IssuedAt":"2026-11-30T08:12:33.123456789+08:00","Version":14712345}`)
	key := func(i int) queue.RequestKey { return queue.RequestKey{Device: "kiosk-1", Key: fmt.Sprint("k", i)} }
	var saves []queue.SavedRequest
	for i := range 5 {
		saves = append(saves, queue.SavedRequest{RequestKey: key(i), Op: "issue A", Result: ticket, AtMs: txBase.Add(time.Duration(i) * time.Hour).UnixMilli()})
	}
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error { return tx.SaveRequests(ctx, saves) })
	// A row of an older release: its JSON stored as it is.
	legacy := queue.RequestKey{Device: "kiosk-2", Key: "old"}
	if _, err := rs.DB().ExecContext(t.Context(), rs.Dialect().Rebind("INSERT INTO requests (device, idem_key, op, result, at) VALUES (?, ?, ?, ?, ?)"),
		legacy.Device, legacy.Key, "issue A", ticket, txBase.Add(10*time.Hour).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	var stored int
	if err := rs.DB().QueryRowContext(t.Context(), rs.Dialect().Rebind("SELECT LENGTH(result) FROM requests WHERE device = ? AND idem_key = ?"),
		"kiosk-1", "k0").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored >= len(ticket) {
		t.Errorf("stored result takes %d bytes, its JSON %d: not compressed", stored, len(ticket))
	}
	found := func() map[queue.RequestKey]queue.StoredRequest {
		return txRead(t, s, func(ctx context.Context, tx queue.Tx) (map[queue.RequestKey]queue.StoredRequest, error) {
			return tx.LookupRequests(ctx, []queue.RequestKey{key(0), key(1), key(2), key(3), key(4), legacy})
		})
	}
	for k, r := range found() {
		if !bytes.Equal(r.Result, ticket) || r.Op != "issue A" {
			t.Errorf("LookupRequests(%v) = %s %q, want issue A %q", k, r.Op, r.Result, ticket)
		}
	}
	before := txBase.Add(3 * time.Hour) // k0, k1, k2 are older
	for i, want := range []int{2, 1, 0} {
		n, err := rs.PurgeRequests(t.Context(), before, 2)
		if err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("purge %d deleted %d, want %d", i+1, n, want)
		}
	}
	got := found()
	for i := range 5 {
		if _, ok := got[key(i)]; ok != (i >= 3) {
			t.Errorf("after the purge, key %d found %v, want %v", i, ok, i >= 3)
		}
	}
	if _, ok := got[legacy]; !ok {
		t.Errorf("after the purge, the newer row of an older release is gone")
	}
}

// txLease: one holder at a time; the holder renews; another takes over
// only once the lease ran out.
func txLease(t *testing.T, s queue.Store) {
	rs := asRetention(t, s)
	take := func(holder string, at time.Duration) bool {
		t.Helper()
		ok, err := rs.TakeLease(t.Context(), sqlstore.Lease{Name: "purge", Holder: holder, Now: txBase.Add(at), For: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, step := range []struct {
		holder string
		at     time.Duration
		want   bool
	}{
		{"a", 0, true},
		{"b", time.Second, false},
		{"a", 30 * time.Second, true}, // renewed to 1m30s
		{"a", 30 * time.Second, true}, // the same again still holds
		{"b", 80 * time.Second, false},
		{"b", 91 * time.Second, true},
		{"a", 92 * time.Second, false},
	} {
		if got := take(step.holder, step.at); got != step.want {
			t.Errorf("%s takes the lease at %s: %v, want %v", step.holder, step.at, got, step.want)
		}
	}
	if ok, err := rs.TakeLease(t.Context(), sqlstore.Lease{Name: "other", Holder: "a", Now: txBase, For: time.Minute}); err != nil || !ok {
		t.Errorf("another lease: %v, %v; want true", ok, err)
	}
}

// personalStore is what the purge of personal data offers.
type personalStore interface {
	retentionStore
	BlankPatients(ctx context.Context, before time.Time, n int) (int, error)
	PurgePatientLocks(ctx context.Context, before time.Time, n int) (int, error)
	PurgeOutbox(ctx context.Context, before time.Time, n int) (int, error)
	PurgeBookings(ctx context.Context, before time.Time, n int) (bookings, slots int, err error)
	Check(ctx context.Context, opts sqlstore.CheckOpts) (sqlstore.Report, error)
}

// txPersonal: past the personal window, a patient reference is gone from
// every table of the database (bookings blanked with the row kept, their
// lock row deleted, the stored results of its requests deleted before
// them), while a patient of a recent booking is left as it was. Two
// blanked bookings of one slot still holding a place keep (slot,
// patient) unique.
func txPersonal(t *testing.T, s queue.Store) {
	ps, ok := s.(personalStore)
	if !ok {
		t.Fatalf("%T has no purge of personal data", s)
	}
	const oldA, oldB, recent = "PATIENT-OLD-4711", "PATIENT-OLD-4712", "PATIENT-NEW-0815"
	old := txBase.Add(-40 * 24 * time.Hour)
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		if _, err := tx.InsertSlots(ctx, []queue.Slot{
			{Site: "s1", Resource: "dr-li", Start: old, End: old.Add(15 * time.Minute), Capacity: 2},
			{Site: "s1", Resource: "dr-li", Start: txBase, End: txBase.Add(15 * time.Minute), Capacity: 2},
		}); err != nil {
			return err
		}
		slots, err := tx.Slots(ctx, queue.SlotQuery{Site: "s1", From: old.Add(-time.Hour), To: txBase.Add(time.Hour)})
		if err != nil || len(slots) != 2 {
			return fmt.Errorf("slots %v: %w", slots, err)
		}
		for i, p := range []string{oldA, oldB, recent} {
			sl := slots[i/2] // the two old patients share the old slot
			at := sl.Start.Add(-24 * time.Hour)
			if err := tx.LockPatient(ctx, queue.PatientKey{Site: "s1", Patient: p}, at); err != nil {
				return err
			}
			b := &queue.Booking{Site: "s1", Resource: sl.Resource, Slot: sl.ID, Start: sl.Start, End: sl.End, Patient: p,
				Code: fmt.Sprint("CODE000", i), Status: queue.BookingBooked, CreatedAt: at, UpdatedAt: at}
			if ok, err := tx.TakePlace(ctx, sl.ID, at); err != nil || !ok {
				return fmt.Errorf("take a place in slot %d: %v, %w", sl.ID, ok, err)
			}
			if err := tx.InsertBooking(ctx, b); err != nil {
				return err
			}
			res := []byte(`{"ID":` + fmt.Sprint(b.ID) + `,"Site":"s1","Patient":"` + p + `","Code":"` + b.Code + `"}`)
			if err := tx.SaveRequests(ctx, []queue.SavedRequest{{RequestKey: queue.RequestKey{Device: "web", Key: p},
				Op: "book " + queue.PatientHash(p), Result: res, AtMs: at.UnixMilli()}}); err != nil {
				return err
			}
		}
		return nil
	})
	personal := txBase.Add(-30 * 24 * time.Hour)
	for _, step := range []struct {
		name string
		run  func(ctx context.Context, before time.Time, n int) (int, error)
		at   time.Time
		want int
	}{
		{"requests", ps.PurgeRequests, txBase.Add(-48 * time.Hour), 2},
		{"bookings", ps.BlankPatients, personal, 2},
		{"patient_locks", ps.PurgePatientLocks, personal, 2},
		{"outbox", ps.PurgeOutbox, personal, 0},
	} {
		total := 0
		for {
			n, err := step.run(t.Context(), step.at, 1)
			if err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
			if n == 0 {
				break
			}
			total += n
		}
		if total != step.want {
			t.Errorf("%s: %d rows purged, want %d", step.name, total, step.want)
		}
	}
	for _, p := range []string{oldA, oldB} {
		if where := findEverywhere(t, ps, p); len(where) > 0 {
			t.Errorf("patient %s past its window is still in %v", p, where)
		}
	}
	if where := findEverywhere(t, ps, recent); len(where) < 3 {
		t.Errorf("recent patient found only in %v, want bookings, patient_locks and requests", where)
	}
	got := txRead(t, s, func(ctx context.Context, tx queue.Tx) ([]queue.Booking, error) {
		return tx.FindBookings(ctx, queue.BookingFilter{Site: "s1"})
	})
	if len(got) != 3 || got[0].Patient != "~CODE0000" || got[0].Status != queue.BookingBooked {
		t.Errorf("bookings after the purge = %+v, want 3 kept, the old ones blanked to ~ and their code", got)
	}
	// Past retention.bookings the old slot goes with its bookings; the
	// slots' counts still match their bookings.
	if b, sl, err := ps.PurgeBookings(t.Context(), personal, 10); err != nil || b != 2 || sl != 1 {
		t.Errorf("PurgeBookings = %d bookings, %d slots, %v; want 2 and 1", b, sl, err)
	}
	if b, sl, err := ps.PurgeBookings(t.Context(), personal, 10); err != nil || b+sl != 0 {
		t.Errorf("PurgeBookings again = %d bookings, %d slots, %v; want none", b, sl, err)
	}
	got = txRead(t, s, func(ctx context.Context, tx queue.Tx) ([]queue.Booking, error) {
		return tx.FindBookings(ctx, queue.BookingFilter{Site: "s1"})
	})
	if len(got) != 1 || got[0].Patient != recent {
		t.Errorf("bookings after their purge = %+v, want the recent one", got)
	}
	r, err := ps.Check(t.Context(), sqlstore.CheckOpts{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range r.Violations {
		t.Errorf("check after the purge: %s", v)
	}
}

// findEverywhere lists the tables of the store's database holding s in
// any column (read as text or bytes).
func findEverywhere(t *testing.T, rs retentionStore, s string) []string {
	t.Helper()
	ctx := t.Context()
	db := rs.DB()
	var q string
	switch rs.Dialect().Name {
	case "sqlite":
		q = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
	case "postgres":
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
	default:
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'"
	}
	tables := Strings(t, db, q)
	if len(tables) < 10 {
		t.Fatalf("found only tables %v", tables)
	}
	var out []string
	for _, tb := range tables {
		rows, err := db.QueryContext(ctx, "SELECT * FROM "+tb)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals, err := sqlstore.ScanText(rows, len(cols))
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if strings.Contains(v, s) {
					out = append(out, tb+"."+cols[i])
				}
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// Querier is what Strings reads through: a *sql.DB, *sql.Conn or *sql.Tx.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Strings runs query on q and returns its rows' one text column, failing
// tb on an error.
func Strings(tb testing.TB, q Querier, query string, args ...any) []string {
	tb.Helper()
	rows, err := q.QueryContext(tb.Context(), query, args...)
	if err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			tb.Fatalf("%s: %v", query, err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return out
}
