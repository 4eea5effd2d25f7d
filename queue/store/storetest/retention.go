package storetest

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
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
