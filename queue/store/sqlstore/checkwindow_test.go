package sqlstore_test

import (
	"context"
	"fmt"
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
	t.Parallel()
	storetest.EachStore(t, func(t *testing.T, qs queue.Store, st *sqlstore.Store) {
		site, opts := history(t, qs, 5, 40, 3)
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

// TestCheckChunks: on every store, a check of every day of a history
// longer than a chunk (read a week at a time) finds it clean, and finds
// once each an old day left open and an event lost in an old chunk.
func TestCheckChunks(t *testing.T) {
	t.Parallel()
	storetest.EachStore(t, func(t *testing.T, qs queue.Store, st *sqlstore.Store) {
		site, opts := history(t, qs, 20, 20, 5)
		if r, err := st.Check(t.Context(), opts); err != nil || !r.OK() || r.Tickets != 21*20 {
			t.Fatalf("check of every day: %v, %v; want clean, 420 tickets", r, err)
		}
		reopen(t, qs, site.ID, "2026-11-06")
		var v int64
		q := st.Dialect().Rebind("SELECT MIN(e.version) FROM events e JOIN tickets t ON t.id = e.ticket_id WHERE t.day = ? AND e.type = 'CALLED'")
		if err := st.DB().QueryRowContext(t.Context(), q, "2026-11-03").Scan(&v); err != nil {
			t.Fatal(err)
		}
		if _, err := st.DB().ExecContext(t.Context(), st.Dialect().Rebind("DELETE FROM events WHERE version = ?"), v); err != nil {
			t.Fatal(err)
		}
		r, err := st.Check(t.Context(), opts)
		want := []string{"day 2026-11-06 (finished): ticket A001 is still WAITING", fmt.Sprintf("event version %d follows a gap", v+1)}
		if err != nil || len(r.Violations) != len(want) {
			t.Fatalf("every day, with an old day open and an event lost: %v, %v; want %q", r, err, want)
		}
		for _, w := range want {
			if !strings.Contains(r.String(), w) {
				t.Errorf("report lacks %q:\n%s", w, r)
			}
		}
	})
}

// history writes days finished days of perDay tickets and today so far
// (2026-11-20 15:00 at storetest.TestSite) and returns the site and the
// options of a check at that time.
func history(t *testing.T, qs queue.Store, days, perDay int, seed uint64) (queue.Site, sqlstore.CheckOpts) {
	t.Helper()
	site := storetest.TestSite()
	now := time.Date(2026, 11, 20, 15, 0, 0, 0, site.Location)
	if _, err := load.History(t.Context(), qs, site, load.HistoryOpts{Days: days, PerDay: perDay, Today: true, Now: now, Seed: seed}); err != nil {
		t.Fatal(err)
	}
	return site, sqlstore.CheckOpts{Today: func(string) string { return site.Day(now) }, Now: func() time.Time { return now }}
}
