package sqlstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/load"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestCheckWindow: on every store, a generated history checks clean in
// its window and whole; a ticket of an old day left open is found by a
// check of every day and not by the window, one of yesterday by both.
func TestCheckWindow(t *testing.T) {
	storetest.EachKind(t, func(t *testing.T, qs queue.Store, st *sqlstore.Store) {
		site := storetest.TestSite()
		now := time.Date(2026, 11, 20, 15, 0, 0, 0, site.Location)
		if _, err := load.History(t.Context(), qs, site, load.HistoryOpts{Days: 5, PerDay: 40, Today: true, Now: now, Seed: 3}); err != nil {
			t.Fatal(err)
		}
		opts := sqlstore.CheckOpts{Today: func(string) string { return site.Day(now) }, Now: func() time.Time { return now }}
		window := opts
		window.Days = 2
		for _, o := range []sqlstore.CheckOpts{opts, window} {
			if r, err := st.Check(t.Context(), o); err != nil || !r.OK() {
				t.Fatalf("check of the history (days %d): %v, %v", o.Days, r, err)
			}
		}
		reopen(t, qs, site.ID, "2026-11-16")
		if r, err := st.Check(t.Context(), window); err != nil || !r.OK() || !strings.HasPrefix(r.String(), "the last 2 service days: ") {
			t.Errorf("window with an old day open: %v, %v; want clean", r, err)
		}
		if r, err := st.Check(t.Context(), opts); err != nil || r.OK() {
			t.Errorf("every day with an old day open: %v, %v; want a violation", r, err)
		}
		reopen(t, qs, site.ID, "2026-11-19")
		if r, err := st.Check(t.Context(), window); err != nil || len(r.Violations) != 1 || !strings.Contains(r.Violations[0], "2026-11-19") {
			t.Errorf("window with yesterday open: %v, %v; want its violation", r, err)
		}
	})
}

// reopen puts the first ticket of site's day back to WAITING.
func reopen(t *testing.T, st queue.Store, site, day string) {
	t.Helper()
	err := st.Update(t.Context(), func(ctx context.Context, tx queue.Tx) error {
		tk, err := tx.TicketByNumber(ctx, queue.NumberKey{Site: site, Day: day, Number: "A001"})
		if err != nil {
			return err
		}
		from := tk.Status
		tk.Status = queue.StatusWaiting
		return tx.UpdateTicket(ctx, tk, from)
	})
	if err != nil {
		t.Fatal(err)
	}
}
