package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/nowserving/nowserving/daemon"
	"github.com/nowserving/nowserving/metrics"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
	"github.com/nowserving/nowserving/queue/store/storetest"
	"github.com/nowserving/nowserving/report"
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

// TestPurgerDays: a pass purges the finished days of the engine's sites,
// events before tickets, and leaves the database as check wants it; the
// day being served keeps its ticket.
func TestPurgerDays(t *testing.T) {
	st, site, clock, eng := oldDay(t)
	clock.Fix(clock.Now().Add(10 * time.Minute)) // past the margin of event times
	today, err := eng.Issue(t.Context(), queue.IssueRequest{Request: queue.Request{Site: site.ID, Device: "kiosk-1", Key: "k9"}, Service: "A"})
	if err != nil {
		t.Fatal(err)
	}
	clock.Fix(clock.Now().Add(time.Hour))
	p := daemon.NewPurger(daemon.PurgerOpts{Store: st, Holder: "a", Sites: eng.Sites, Events: 48 * time.Hour, Tickets: 48 * time.Hour,
		Batch: 2, Every: time.Minute, Now: clock.Now})
	n, held, err := p.Pass(t.Context())
	if err != nil || !held || n["tickets"] != 3 || n["events"] != 6 {
		t.Errorf("pass = %v, held %v, %v; want the old day's 3 tickets and their 6 events (issued, expired)", n, held, err)
	}
	r, err := st.Check(t.Context(), sqlstore.CheckOpts{Today: func(string) string { return site.Day(clock.Now()) }})
	if err != nil || !r.OK() {
		t.Errorf("check after the pass: %v, %v", r, err)
	}
	got, err := eng.Position(t.Context(), site.ID, today.Number)
	if err != nil || got.Ticket.ID != today.ID {
		t.Errorf("today's ticket after the pass: %+v, %v", got, err)
	}
}

// oldDay issues 3 tickets on 2026-11-02 and sweeps them a week later at
// 09:00 (they expire).
func oldDay(t *testing.T) (*sqlite.Store, queue.Site, *storetest.Clock, *queue.Engine) {
	st := storetest.SQLite(t)
	site := storetest.TestSite()
	clock := storetest.NewClock(time.Date(2026, 11, 2, 9, 0, 0, 0, site.Location))
	eng := storetest.StartEngine(t, queue.Opts{Store: st, Sites: []queue.Site{site}, Clock: clock.Now})
	for i := range 3 {
		r := queue.Request{Site: site.ID, Device: "kiosk-1", Key: fmt.Sprint("k", i)}
		if _, err := eng.Issue(t.Context(), queue.IssueRequest{Request: r, Service: "A"}); err != nil {
			t.Fatal(err)
		}
	}
	clock.Fix(time.Date(2026, 11, 9, 9, 0, 0, 0, site.Location))
	if _, err := eng.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	return st, site, clock, eng
}

// hungPurgeStore is a database that never answers: every call waits for
// its context.
type hungPurgeStore struct{ daemon.PurgeStore }

func (hungPurgeStore) TakeLease(ctx context.Context, _ sqlstore.Lease) (bool, error) {
	<-ctx.Done()
	return false, ctx.Err()
}

// TestPurgerHungStore: against a database that hangs, a pass fails within
// the purger's timeout (the store timeout), so it never holds up a
// shutdown.
func TestPurgerHungStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := daemon.NewPurger(daemon.PurgerOpts{Store: hungPurgeStore{}, Holder: "a", Requests: 48 * time.Hour, Batch: 10,
			Every: time.Minute, Timeout: 2 * time.Second, Now: time.Now})
		start := time.Now()
		_, held, err := p.Pass(t.Context())
		if !errors.Is(err, context.DeadlineExceeded) || held {
			t.Errorf("pass on a hung store = held %v, %v; want the deadline", held, err)
		}
		if took := time.Since(start); took != 2*time.Second {
			t.Errorf("pass on a hung store took %s, want the 2s timeout", took)
		}
	})
}

// TestPurgerSumsFirst: a pass sums the finished days into the daily
// figures before it purges, never purges a day not summed, and the report
// of a purged day still has its figures.
func TestPurgerSumsFirst(t *testing.T) {
	st, site, clock, eng := oldDay(t)
	clock.Fix(clock.Now().Add(time.Hour))
	opts := daemon.PurgerOpts{Store: st, Holder: "a", Sites: eng.Sites, Events: 48 * time.Hour, Tickets: 48 * time.Hour,
		Batch: 100, Every: time.Minute, Now: clock.Now,
		Sum: func(context.Context, string, time.Time) (string, bool, error) { return "2026-11-01", false, nil }}
	if n, _, err := daemon.NewPurger(opts).Pass(t.Context()); err != nil || n["events"]+n["tickets"] != 0 {
		t.Errorf("pass with nothing summed = %v, %v; want nothing purged", n, err)
	}
	opts.Sum = func(ctx context.Context, s string, now time.Time) (string, bool, error) {
		return report.SumDays(ctx, eng, st, s, now, 2, nil)
	}
	if n, _, err := daemon.NewPurger(opts).Pass(t.Context()); err != nil || n["events"] != 6 {
		t.Errorf("pass = %v, %v; want the old day's 6 events", n, err)
	}
	if last, err := st.LastDailyDay(t.Context(), site.ID); err != nil || last != "2026-11-08" {
		t.Errorf("last summed day %q, %v; want 2026-11-08", last, err)
	}
	r, err := report.Build(t.Context(), eng, site.ID, "2026-11-02", "")
	if err != nil || r.Total.Issued != 3 {
		t.Errorf("report of the purged day: %+v, %v; want 3 issued", r.Total, err)
	}
}
