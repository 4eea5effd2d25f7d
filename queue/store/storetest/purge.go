package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// dayPurgeStore is what the purge of finished days offers.
type dayPurgeStore interface {
	txSQLStore
	PurgeEvents(ctx context.Context, p sqlstore.DayPurge) (int, error)
	PurgeTickets(ctx context.Context, p sqlstore.DayPurge) (int, error)
}

// purgeDays runs the detail purge of site to its end at now with window,
// as the daemon's purger does (events first, then tickets), a few rows a
// batch, and returns the events and tickets deleted.
func (en *env) purgeDays(site *queue.Site, window time.Duration) (events, tickets int) {
	en.t.Helper()
	ps, ok := en.store.(dayPurgeStore)
	if !ok {
		en.t.Fatalf("%T has no day purge", en.store)
	}
	p := sqlstore.DayPurgeOf(site, en.clock.Now(), window, 3)
	for _, step := range []struct {
		run func(ctx context.Context, p sqlstore.DayPurge) (int, error)
		n   *int
	}{{ps.PurgeEvents, &events}, {ps.PurgeTickets, &tickets}} {
		for {
			n, err := step.run(en.ctx, p)
			if err != nil {
				en.t.Fatal(err)
			}
			*step.n += n
			if n < p.N {
				break
			}
		}
	}
	return events, tickets
}

// checkAt runs Check with the site's days at the clock's now and fails
// the test on a violation.
func (en *env) checkAt(site *queue.Site, when string) {
	en.t.Helper()
	now := en.clock.Now()
	r, err := en.store.(txSQLStore).Check(en.ctx, sqlstore.CheckOpts{MaxViolations: 100,
		Today:     func(string) string { return site.Day(now) },
		HeldSince: func(string) string { return site.HeldSinceDay(now) },
		DayOf:     func(_ string, at time.Time) string { return site.Day(at) }})
	if err != nil {
		en.t.Fatal(err)
	}
	if !r.OK() {
		en.t.Errorf("check %s: %s", when, r)
	}
}

// testPurgeDays: the detail purge of finished days, around the rollover
// and the grace of held tickets. Past the window, a day's tickets and
// events go, and `check` stays clean from where the log now begins;
// nothing of the current day, nor a ticket a counter still holds, nor the
// events after a yesterday's ticket that was finished after the rollover,
// is purged; a day purged after the grace leaves no ticket of it.
func testPurgeDays(t *testing.T, open func(t *testing.T) queue.Store) {
	site := TestSite()
	en := newEnv(t, open, site)
	at := func(day, h, m int) { en.clock.Fix(time.Date(2026, 11, day, h, m, 0, 0, shanghai)) }
	// 2026-11-27: two served, one left waiting (expired at the rollover).
	at(27, 9, 0)
	for range 3 {
		en.issue("A", "")
	}
	en.serveNext("1")
	en.serveNext("1")
	en.must("pause", "3")
	// 2026-11-28: one served; one called at 03:58 on the 29th, still the
	// 28th, and finished after the rollover, within the grace.
	at(28, 10, 0)
	en.issue("A", "")
	en.serveNext("1")
	at(29, 3, 58)
	en.sweep()
	straddler := en.issue("A", "")
	en.next("2")
	at(29, 4, 1)
	first29 := en.issue("A", "")
	at(29, 5, 0)
	en.must("start", "2")
	en.must("done", "2")
	en.serveNext("1")
	// 2026-11-30: one served; at 03:50 on 12-01 one called and still held
	// at 05:00, within the grace.
	at(30, 9, 0)
	en.issue("A", "")
	en.serveNext("1")
	en.clock.Fix(time.Date(2026, 12, 1, 3, 50, 0, 0, shanghai))
	en.sweep()
	held := en.issue("A", "")
	en.next("2")
	en.clock.Fix(time.Date(2026, 12, 1, 4, 30, 0, 0, shanghai))
	today := en.issue("A", "")
	en.clock.Fix(time.Date(2026, 12, 1, 5, 0, 0, 0, shanghai))
	en.sweep()
	en.checkAt(&site, "before the purge")

	// At 05:00 on 12-01 with 48 hours kept, 11-27 and 11-28 are past.
	events, tickets := en.purgeDays(&site, 48*time.Hour)
	if events == 0 || tickets != 4 {
		t.Errorf("purge at 12-01 05:00: %d events, %d tickets deleted; want some events and the 4 tickets of 11-27 and 11-28 but the one finished after the rollover", events, tickets)
	}
	en.checkAt(&site, "after the purge of 11-27 and 11-28")
	for _, tk := range []queue.Ticket{straddler, first29, held, today} {
		got := txRead(t, en.store, func(ctx context.Context, tx queue.Tx) (*queue.Ticket, error) { return tx.Ticket(ctx, tk.ID) })
		if got.Number != tk.Number {
			t.Errorf("ticket %s of %s: read %+v", tk.Number, tk.Day, got)
		}
	}
	if ev := txEventsOf(t, en.store, queue.EventsQuery{Site: "hq"}); len(ev) == 0 || ev[0].Day < "2026-11-28" {
		t.Errorf("oldest kept event %+v, want one of 11-28 (the straddler's, after 11-29's first ticket) or later", ev[:min(1, len(ev))])
	}
	if again, _ := en.purgeDays(&site, 48*time.Hour); again != 0 {
		t.Errorf("a second purge deleted %d events", again)
	}

	// At 12-03 the sweep expired the held ticket after its grace; the
	// days before 12-01 are past, but that ticket's EXPIRED comes after
	// 12-01's first ticket: it stays, with its last event, until a later
	// purge passes that.
	en.clock.Fix(time.Date(2026, 12, 3, 5, 0, 0, 0, shanghai))
	en.sweep()
	en.clock.Fix(time.Date(2026, 12, 3, 5, 10, 0, 0, shanghai))
	last := en.issue("A", "")
	_, tickets = en.purgeDays(&site, 48*time.Hour)
	en.checkAt(&site, "after the purge up to 12-01")
	en.leftTickets(tickets, 3, held, today, last)
	en.clock.Fix(time.Date(2026, 12, 5, 6, 0, 0, 0, shanghai))
	en.sweep()
	_, tickets = en.purgeDays(&site, 48*time.Hour)
	en.checkAt(&site, "after the purge up to 12-03")
	en.leftTickets(tickets, 2, last)
}

// leftTickets fails the test unless deleted is want and the site's
// tickets are those of left.
func (en *env) leftTickets(deleted, want int, left ...queue.Ticket) {
	en.t.Helper()
	got := txFound(en.t, en.store, queue.Filter{Site: "hq"})
	var gotN, wantN []string
	for _, tk := range got {
		gotN = append(gotN, tk.Day+" "+tk.Number)
	}
	for _, tk := range left {
		wantN = append(wantN, tk.Day+" "+tk.Number)
	}
	if deleted != want || !slices.Equal(gotN, wantN) {
		en.t.Errorf("at %s: %d tickets deleted, left %v; want %d deleted, left %v", en.clock.Now(), deleted, gotN, want, wantN)
	}
}

// sweep runs the engine's sweep and fails the test on error.
func (en *env) sweep() {
	en.t.Helper()
	if _, err := en.e.Sweep(en.ctx); err != nil {
		en.t.Fatalf("sweep: %v", err)
	}
}
