package daemon_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/nowserving/nowserving/daemon"
	"github.com/nowserving/nowserving/metrics"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestPurgerPass: a pass deletes the request results past the window in
// batches and counts them; another daemon's purger, while the first holds
// the lease, deletes nothing.
func TestPurgerPass(t *testing.T) {
	st := storetest.SQLite(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var saves []queue.SavedRequest
	for i := range 25 {
		at := now.Add(-72 * time.Hour) // past the 48h window
		if i >= 20 {
			at = now.Add(-time.Hour)
		}
		saves = append(saves, queue.SavedRequest{RequestKey: queue.RequestKey{Device: "kiosk-1", Key: fmt.Sprint(i)}, Op: "issue A",
			Result: []byte(`{"ID":1}`), AtMs: at.UnixMilli()})
	}
	if err := st.Update(t.Context(), func(ctx context.Context, tx queue.Tx) error { return tx.SaveRequests(ctx, saves) }); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	m, err := metrics.NewRetention(reg)
	if err != nil {
		t.Fatal(err)
	}
	purger := func(holder string) *daemon.Purger {
		return daemon.NewPurger(daemon.PurgerOpts{Store: st, Holder: holder, Sites: func() []queue.Site { return []queue.Site{storetest.TestSite()} },
			Requests: 48 * time.Hour, Events: 2160 * time.Hour, Tickets: 2160 * time.Hour, Bookings: 2160 * time.Hour,
			Outbox: 720 * time.Hour, Personal: 720 * time.Hour, Batch: 6, Every: time.Minute,
			Now: func() time.Time { return now }, Metrics: m})
	}
	n, held, err := purger("a").Pass(t.Context())
	if err != nil || !held || n["requests"] != 20 {
		t.Errorf("first pass = %v, held %v, %v; want 20 requests deleted", n, held, err)
	}
	n, held, err = purger("b").Pass(t.Context())
	if err != nil || held || len(n) != 0 {
		t.Errorf("other daemon's pass = %v, held %v, %v; want nothing, lease not held", n, held, err)
	}
	const want = `
# HELP nowserving_retention_deleted_rows_total Rows the purge deleted past their retention window, by table.
# TYPE nowserving_retention_deleted_rows_total counter
nowserving_retention_deleted_rows_total{table="bookings"} 0
nowserving_retention_deleted_rows_total{table="events"} 0
nowserving_retention_deleted_rows_total{table="outbox"} 0
nowserving_retention_deleted_rows_total{table="patient_locks"} 0
nowserving_retention_deleted_rows_total{table="requests"} 20
nowserving_retention_deleted_rows_total{table="slots"} 0
nowserving_retention_deleted_rows_total{table="tickets"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "nowserving_retention_deleted_rows_total"); err != nil {
		t.Error(err)
	}
	var rows int
	if err := st.DB().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM requests").Scan(&rows); err != nil || rows != 5 {
		t.Errorf("requests left = %d, %v; want the 5 inside the window", rows, err)
	}
}
