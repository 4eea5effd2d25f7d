package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// checkSite is the site of the engine-made day Check must find clean: the
// test site with call time-outs on M (back to waiting) and C (no-show), so a
// ticket is legitimately called again after each (C01 re-entered).
func checkSite() queue.Site {
	site := TestSite()
	for i := range site.Services {
		switch site.Services[i].Code {
		case "M":
			site.Services[i].CallTimeout, site.Services[i].TimeoutAction = 2*time.Minute, queue.TimeoutRequeue
		case "C":
			site.Services[i].CallTimeout, site.Services[i].TimeoutAction = 2*time.Minute, queue.TimeoutNoShow
			site.Services[i].MaxReentries = 1
		}
	}
	return site
}

// checkDayOf places the suite's instants on their service days: site hq by
// its definition, s1 (txTicket) by the UTC date.
func checkDayOf(site string, at time.Time) string {
	if site == "hq" {
		s := checkSite()
		return s.Day(at)
	}
	return at.UTC().Format(time.DateOnly)
}

// engineDay is what checkEngineDay made and the corruptions aim at.
type engineDay struct {
	first   queue.Ticket // A001 of the first day: called, recalled, served, done
	noShow  queue.Ticket // A002: a no-show re-entered, called again, transferred to E
	done    queue.Ticket // a ticket served to the end on the first day
	third   queue.Ticket // A003
	again   queue.Ticket // A001 of the second day, serving at counter 1
	counter string       // again's counter
}

// checkEngineDay runs two service days of site hq through the real engine
// over s: issue, call, recall, start, complete, no-show, re-entry, transfer
// to a service and to a counter, cancel (waiting and called), pause and
// resume, call by number, a print failure, call time-outs both ways, and a
// rollover that expires what was left open. The second day issues A001
// again.
func checkEngineDay(t *testing.T, s queue.Store) engineDay {
	t.Helper()
	en := newEnv(t, func(*testing.T) queue.Store { return s }, checkSite())
	var d engineDay
	fail := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("engine day: %s: %v", what, err)
		}
	}
	num := func(n string) queue.NumberRequest { return queue.NumberRequest{Request: en.req(), Number: n} }
	ctr := func(c string) queue.CounterRequest { return queue.CounterRequest{Request: en.req(), Counter: c} }
	var as []queue.Ticket
	for range 8 {
		as = append(as, en.issue("A", ""))
	}
	d.first, d.third = as[0], as[2]
	en.issue("A", queue.ClassRevisit)
	en.issue("E", "")
	en.issue("V", "")
	en.issue("V", queue.ClassVIP)
	m := en.issue("M", "")
	c := en.issue("C", "")

	// A001: called, recalled, served, done.
	en.next("1")
	en.must("recall", "1")
	en.must("start", "1")
	en.must("done", "1")
	// A002: no-show, re-entered, called again at 2, transferred to E.
	d.noShow = en.next("1")
	en.must("noshow", "1")
	_, err := en.e.Reenter(en.ctx, num(d.noShow.Number))
	fail("re-enter", err)
	en.next("2")
	en.must("start", "2")
	_, err = en.e.Transfer(en.ctx, queue.TransferRequest{Request: en.req(), Counter: "2", ToService: "E"})
	fail("transfer to E", err)
	// Counter 8 serves one, and calling next completes it.
	en.next("8")
	en.must("start", "8")
	en.next("8")
	// Transferred to counter 2, which calls it first and serves it.
	en.next("3")
	_, err = en.e.Transfer(en.ctx, queue.TransferRequest{Request: en.req(), Counter: "3", ToCounter: "2"})
	fail("transfer to counter 2", err)
	d.done = en.next("2")
	en.must("start", "2")
	en.must("done", "2")
	// Cancelled while waiting, and while called (which frees counter 3).
	x := en.issue("A", "")
	_, err = en.e.Cancel(en.ctx, num(x.Number))
	fail("cancel waiting", err)
	y := en.next("3")
	_, err = en.e.Cancel(en.ctx, num(y.Number))
	fail("cancel called", err)
	// Paused, resumed, serving a V ticket over the rollover.
	_, err = en.e.Pause(en.ctx, ctr("4"))
	fail("pause", err)
	_, err = en.e.Resume(en.ctx, ctr("4"))
	fail("resume", err)
	en.next("4")
	en.must("start", "4")
	// M001 times out back to waiting and is called again; C01 times out to
	// no-show, is re-entered, called again and served.
	if got := en.next("7"); got.ID != m.ID {
		t.Fatalf("engine day: counter 7 called %s, want %s", got.Number, m.Number)
	}
	if got := en.next("6"); got.ID != c.ID {
		t.Fatalf("engine day: counter 6 called %s, want %s", got.Number, c.Number)
	}
	en.clock.Add(3 * time.Minute)
	n, err := en.e.Sweep(en.ctx)
	fail("sweep call time-outs", err)
	if n != 2 {
		t.Fatalf("engine day: sweep timed out %d calls, want 2", n)
	}
	en.next("7")
	_, err = en.e.Reenter(en.ctx, num(c.Number))
	fail("re-enter after time-out", err)
	en.next("6")
	en.must("start", "6")
	en.must("done", "6")
	// Called by number at counter 1, left called over the rollover.
	z := en.issue("A", "")
	_, err = en.e.CallNumber(en.ctx, queue.NumberRequest{Request: en.req(), Counter: "1", Number: z.Number})
	fail("call number", err)
	fail("print failed", en.e.MarkPrintFailed(en.ctx, queue.PrintFailure{Site: "hq", TicketID: z.ID, Actor: "kiosk-1", Reason: "paper out"}))

	// The next day: what was left open expires, A001 is issued again.
	en.clock.Set(time.Date(2026, 12, 1, 9, 0, 0, 0, shanghai))
	_, err = en.e.Sweep(en.ctx)
	fail("rollover sweep", err)
	d.again = en.issue("A", "")
	if d.again.Number != d.first.Number || d.again.Day == d.first.Day {
		t.Fatalf("engine day: second day's first ticket is %s of %s, want %s of the next day", d.again.Number, d.again.Day, d.first.Number)
	}
	d.counter = "1"
	en.next(d.counter)
	en.must("start", d.counter)
	fail("close engine", en.e.Close(en.ctx))
	return d
}

// txCheck builds a consistent database (site s1 written through the Tx
// primitives, site hq by the real engine), checks it is found clean, then
// breaks one invariant after another behind the store's back and checks
// each is reported.
func txCheck(t *testing.T, s queue.Store) {
	ss, ok := s.(txSQLStore)
	if !ok {
		t.Skip("store has no Check")
	}
	day := checkEngineDay(t, s)
	ids := checkConsistentDay(t, s)
	c := &checker{t: t, s: s, ss: ss}
	c.expect("consistent")
	checkCorruptS1(c, ids)
	checkCorruptHQ(c, day)
}

// checkConsistentDay writes a consistent day of site s1: three tickets
// issued, the first called at c1. It returns their ids.
func checkConsistentDay(t *testing.T, s queue.Store) []int64 {
	var ids []int64
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		for i := 1; i <= 3; i++ {
			tk := txTicket("A", i, queue.ClassNormal, 20, int64(i))
			if err := tx.InsertTicket(ctx, tk); err != nil {
				return err
			}
			ids = append(ids, tk.ID)
			if err := appendEvent(ctx, tx, issuedEvent(tk)); err != nil {
				return err
			}
		}
		tk, err := tx.Ticket(ctx, ids[0])
		if err != nil {
			return err
		}
		tk.Status, tk.Counter = queue.StatusCalled, "c1"
		if err := tx.UpdateTicket(ctx, tk, queue.StatusWaiting); err != nil {
			return err
		}
		if err := tx.PutCounter(ctx, queue.CounterState{Site: "s1", ID: "c1", Mode: queue.CounterOpen, TicketID: tk.ID}); err != nil {
			return err
		}
		return appendEvent(ctx, tx, &queue.Event{Site: "s1", Type: queue.EventCalled, TicketID: tk.ID, Number: tk.Number,
			Service: tk.Queue, Status: queue.StatusCalled, Counter: "c1", At: tk.IssuedAt.Add(time.Minute)})
	})
	return ids
}

// checker corrupts a database on purpose and runs Check on it.
type checker struct {
	t  *testing.T
	s  queue.Store
	ss txSQLStore
}

// check runs Check with or without placing instants on their days.
func (c *checker) check(step string, dayOf bool) string {
	c.t.Helper()
	opts := sqlstore.CheckOpts{MaxViolations: 100}
	if dayOf {
		opts.DayOf = checkDayOf
	}
	r, err := c.ss.Check(c.t.Context(), opts)
	if err != nil {
		c.t.Fatalf("%s: Check: %v", step, err)
	}
	if r.Tickets == 0 || r.Events == 0 || r.Sites != 2 {
		c.t.Errorf("%s: report counts %d sites, %d tickets, %d events", step, r.Sites, r.Tickets, r.Events)
	}
	return strings.Join(r.Violations, "\n")
}

// expect checks, both ways, that Check reports every one of want, or
// nothing when want is empty.
func (c *checker) expect(step string, want ...string) {
	c.t.Helper()
	for _, dayOf := range []bool{true, false} {
		text := c.check(step, dayOf)
		if len(want) == 0 && text != "" {
			c.t.Fatalf("%s (DayOf %v): violations on a consistent database:\n%s", step, dayOf, text)
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				c.t.Errorf("%s (DayOf %v): report lacks %q:\n%s", step, dayOf, w, text)
			}
		}
	}
}

// exec runs a corrupting statement.
func (c *checker) exec(q string, args ...any) {
	c.t.Helper()
	if _, err := c.ss.DB().ExecContext(c.t.Context(), c.ss.Dialect().Rebind(q), args...); err != nil {
		c.t.Fatalf("corrupt: %s: %v", q, err)
	}
}

// version is the newest event version of type typ of a ticket of site hq.
func (c *checker) version(typ queue.EventType, ticket int64) int64 {
	c.t.Helper()
	var v int64
	q := c.ss.Dialect().Rebind("SELECT MAX(version) FROM events WHERE site = 'hq' AND type = ? AND ticket_id = ?")
	if err := c.ss.DB().QueryRowContext(c.t.Context(), q, string(typ), ticket).Scan(&v); err != nil {
		c.t.Fatalf("version of %s of ticket %d: %v", typ, ticket, err)
	}
	return v
}

// appendHQ appends e and returns its version.
func (c *checker) appendHQ(e *queue.Event) int64 {
	c.t.Helper()
	txUpdate(c.t, c.s, func(ctx context.Context, tx queue.Tx) error { return appendEvent(ctx, tx, e) })
	return e.Version
}

// checkCorruptS1 breaks invariants 1 to 5 on site s1, one after the
// other, each on top of the last.
func checkCorruptS1(c *checker, ids []int64) {
	t, s, ss, ctx := c.t, c.s, c.ss, c.t.Context()
	// Invariant 1: without the unique index a second A002 goes in.
	c.exec(ss.Dialect().DropIndex("tickets_seq_uq"))
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		tk := txTicket("A", 2, queue.ClassNormal, 20, 9)
		if err := tx.InsertTicket(ctx, tk); err != nil {
			return err
		}
		return appendEvent(ctx, tx, issuedEvent(tk))
	})
	c.expect("duplicate seq", "invariant 1: site s1 service A day "+txDay+": seq 2 issued 2 times",
		"invariant 1: site s1 service A day "+txDay+": number A002 announced 2 times")

	// Invariant 2: a second ticket called at c1.
	c.exec("UPDATE tickets SET status = 'CALLED', counter = 'c1' WHERE id = ?", ids[1])
	c.expect("two tickets at one counter", `counter "c1" holds 2 called or serving tickets`, "A002 of "+txDay+" is CALLED at counter \"c1\", which does not hold it")

	// Invariants 3 and 4: the ISSUED event of A003 (version 3) is lost.
	c.exec("DELETE FROM events WHERE site = 's1' AND version = 3")
	c.expect("lost event", "invariant 4: site s1: event version 4 follows a gap", "ticket A003 (id")

	// Invariant 4: site_versions behind the log.
	c.exec("UPDATE site_versions SET version = 2 WHERE site = 's1'")
	c.expect("stale site version", "site_versions says 2, newest event is 5")

	// Invariant 5: a ticket of yesterday still waiting while today has begun.
	c.exec("UPDATE tickets SET day = '2026-03-01' WHERE id = ?", ids[2])
	c.expect("open ticket of a finished day", "invariant 5: site s1 day 2026-03-01 (finished): ticket A003 is still WAITING")
	r, err := ss.Check(ctx, sqlstore.CheckOpts{Today: func(string) string { return "2026-03-01" }})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(r.Violations, "\n"), "invariant 5") {
		t.Errorf("Check with Today = 2026-03-01 still reports a finished day:\n%s", r)
	}
	// A counter still serving yesterday's ticket within the grace after the
	// rollover is not an open ticket of a finished day; past it, it is.
	c.exec("UPDATE tickets SET status = 'SERVING' WHERE id = ?", ids[2])
	for _, c := range []struct {
		held string
		want bool
	}{{"2026-03-01", false}, {"2026-03-02", true}, {"", true}} {
		r, err := ss.Check(ctx, sqlstore.CheckOpts{HeldSince: func(string) string { return c.held }})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(strings.Join(r.Violations, "\n"), "ticket A003 is still SERVING"); got != c.want {
			t.Errorf("HeldSince %q: serving A003 of 2026-03-01 reported %v, want %v:\n%s", c.held, got, c.want, r)
		}
	}
	// Without a configuration (HeldSince nil) the daemon's default grace
	// counts from today's first ticket, issued at or after the rollover:
	// check agrees with the sweep that keeps the ticket, then expires it.
	var first int64
	if err := ss.DB().QueryRowContext(ctx, ss.Dialect().Rebind("SELECT MIN(issued_at) FROM tickets WHERE site = 's1' AND day = ?"), txDay).Scan(&first); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		after time.Duration
		want  bool
	}{{time.Hour, false}, {queue.DefaultHeldGrace - time.Minute, false}, {queue.DefaultHeldGrace + time.Minute, true}} {
		now := time.UnixMilli(first).Add(tc.after)
		r, err := ss.Check(ctx, sqlstore.CheckOpts{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(strings.Join(r.Violations, "\n"), "ticket A003 is still SERVING"); got != tc.want {
			t.Errorf("no configuration, %v after today's first ticket: serving A003 of 2026-03-01 reported %v, want %v:\n%s", tc.after, got, tc.want, r)
		}
	}
	c.exec("UPDATE tickets SET status = 'WAITING' WHERE id = ?", ids[2])

}

// checkCorruptHQ breaks invariants 1 to 4 on site hq, which the engine
// wrote (day), each on top of the last.
func checkCorruptHQ(c *checker, day engineDay) {
	t := c.t
	// From here on site hq, which the engine wrote. Invariant 3: the first
	// day's A001 is deleted under its events. Its number is not announced
	// twice: the second day's A001 is another day.
	c.exec("DELETE FROM tickets WHERE id = ?", day.first.ID)
	c.expect("ticket deleted under its events",
		fmt.Sprintf("invariant 3: site hq: ISSUED event version %d of A001 names ticket id %d, which does not exist", c.version(queue.EventIssued, day.first.ID), day.first.ID),
		fmt.Sprintf("invariant 4: site hq: DONE event version %d of A001 names ticket id %d, which does not exist", c.version(queue.EventDone, day.first.ID), day.first.ID))
	if text := c.check("ticket deleted under its events", true) + c.check("ticket deleted under its events", false); strings.Contains(text, "number A001 announced") {
		t.Errorf("the first day's A001, deleted, is reported announced twice with the second day's:\n%s", text)
	}

	// Invariant 1 through the log: an ISSUED event committed while its
	// ticket rolled back (the day counter with it, so the number was given
	// again), and a ticket's ISSUED event written twice.
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, shanghai)
	lost := int64(1 << 40)
	v := c.appendHQ(&queue.Event{Site: "hq", Type: queue.EventIssued, TicketID: lost, Number: day.again.Number, Service: "A",
		Class: queue.ClassNormal, Status: queue.StatusWaiting, Actor: "kiosk-2", At: at})
	c.expect("ISSUED event without its ticket",
		fmt.Sprintf("invariant 3: site hq: ISSUED event version %d of A001 names ticket id %d, which does not exist", v, lost),
		fmt.Sprintf("invariant 1: site hq service A day %s: number A001 announced twice: ISSUED event version %d (ticket id %d, missing) and ticket id %d", day.again.Day, v, lost, day.again.ID))
	v2 := c.appendHQ(&queue.Event{Site: "hq", Type: queue.EventIssued, TicketID: lost + 1, Number: day.again.Number, Service: "A",
		Status: queue.StatusWaiting, At: at.Add(time.Second)})
	c.expect("two ISSUED events without their ticket",
		fmt.Sprintf("number A001 announced twice: ISSUED event version %d (ticket id %d, missing) and ISSUED event version %d, also without its ticket", v2, lost+1, v))
	// Placed by its time (DayOf), an orphan A002 of the first day appended
	// at the end of the log collides with the first day's A002.
	v3 := c.appendHQ(&queue.Event{Site: "hq", Type: queue.EventIssued, TicketID: lost + 2, Number: day.noShow.Number, Service: "A",
		Status: queue.StatusWaiting, At: day.noShow.IssuedAt.Add(time.Second)})
	if text := c.check("late orphan", true); !strings.Contains(text, fmt.Sprintf("service A day %s: number %s announced twice: ISSUED event version %d (ticket id %d, missing) and ticket id %d", day.noShow.Day, day.noShow.Number, v3, lost+2, day.noShow.ID)) {
		t.Errorf("late orphan: report lacks A002 of %s announced twice:\n%s", day.noShow.Day, text)
	}
	issued3 := c.version(queue.EventIssued, day.third.ID)
	v4 := c.appendHQ(issuedEvent(&day.third))
	c.expect("ticket issued twice",
		fmt.Sprintf("invariant 3: site hq day %s: ticket A003 (id %d) has 2 ISSUED events (versions %d to %d)", day.third.Day, day.third.ID, issued3, v4),
		fmt.Sprintf("invariant 1: site hq service A day %s: number A003 announced 2 times", day.third.Day))

	// Invariant 2: the second day's A001, serving at counter 1, called
	// again at counter 2 with no re-entry or transfer.
	v5 := c.appendHQ(&queue.Event{Site: "hq", Type: queue.EventCalled, TicketID: day.again.ID, Number: day.again.Number, Service: "A",
		Status: queue.StatusCalled, Counter: "2", At: at.Add(time.Minute), CallCount: 2})
	c.expect("called twice",
		fmt.Sprintf(`invariant 2: site hq ticket A001 (id %d): CALLED at counter "2" (event version %d) while SERVING after its SERVING at counter "1"`, day.again.ID, v5),
		fmt.Sprintf(`invariant 4: site hq counter "2" is idle, but its last event is CALLED of A001 (id %d, version %d)`, day.again.ID, v5))

	// Invariant 4: counter 1 pointed at another ticket, then its row lost.
	c.exec("UPDATE counters SET ticket_id = ? WHERE site = 'hq' AND id = ?", day.done.ID, day.counter)
	c.expect("counter holds another ticket",
		fmt.Sprintf(`invariant 4: site hq counter "1" holds ticket %s (id %d), but its last event is SERVING of A001 (id %d, version %d)`,
			day.done.Number, day.done.ID, day.again.ID, c.version(queue.EventServing, day.again.ID)))
	c.exec("DELETE FROM counters WHERE site = 'hq' AND id = ?", day.counter)
	c.expect("counter row lost",
		fmt.Sprintf(`invariant 4: site hq counter "1" has no row, but its last event is SERVING of A001 (id %d, version %d)`, day.again.ID, c.version(queue.EventServing, day.again.ID)))
}

// issuedEvent is the ISSUED event the engine writes for tk.
func issuedEvent(tk *queue.Ticket) *queue.Event {
	return &queue.Event{Site: tk.Site, Type: queue.EventIssued, TicketID: tk.ID, Number: tk.Number, Service: tk.Service,
		Class: tk.Class, Status: queue.StatusWaiting, Actor: tk.Device, At: tk.IssuedAt}
}

// FillCheckDay writes a consistent service day of site "big" through the Tx
// primitives, in transactions of 500 tickets: tickets tickets of four
// services, each issued, called, started and completed at one of counters
// counters (four events), except the last one of each counter, still being
// served. It is the database BenchCheck times Check on.
func FillCheckDay(tb testing.TB, s queue.Store, tickets, counters int) {
	tb.Helper()
	start := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	services := []string{"A", "B", "C", "D"}
	held := map[string]int64{}
	for from := 0; from < tickets; from += 500 {
		err := s.Update(context.Background(), func(ctx context.Context, tx queue.Tx) error {
			var evs []*queue.Event
			for i := from; i < min(from+500, tickets); i++ {
				sv, c := services[i%len(services)], fmt.Sprint(i%counters+1)
				at := start.Add(time.Duration(i) * 100 * time.Millisecond)
				tk := &queue.Ticket{Site: "big", Service: sv, Queue: sv, Day: "2026-03-02", Seq: i/len(services) + 1,
					Class: queue.ClassNormal, Status: queue.StatusDone, Counter: c, CallCount: 1,
					IssuedAt: at, WaitingSince: at, CalledAt: at.Add(time.Second), ServingAt: at.Add(2 * time.Second),
					FinishedAt: at.Add(3 * time.Second), Device: "kiosk", IdemKey: fmt.Sprint("k", i)}
				tk.Number = fmt.Sprintf("%s%05d", sv, tk.Seq)
				last := i >= tickets-counters
				if last {
					tk.Status, tk.FinishedAt = queue.StatusServing, time.Time{}
				}
				if err := tx.InsertTicket(ctx, tk); err != nil {
					return err
				}
				ev := func(typ queue.EventType, st queue.Status, counter string, d time.Duration) *queue.Event {
					return &queue.Event{Site: "big", Type: typ, TicketID: tk.ID, Number: tk.Number, Service: sv,
						Class: tk.Class, Status: st, Counter: counter, At: at.Add(d), CallCount: 1}
				}
				evs = append(evs, ev(queue.EventIssued, queue.StatusWaiting, "", 0),
					ev(queue.EventCalled, queue.StatusCalled, c, time.Second),
					ev(queue.EventServing, queue.StatusServing, c, 2*time.Second))
				if last {
					held[c] = tk.ID
				} else {
					evs = append(evs, ev(queue.EventDone, queue.StatusDone, c, 3*time.Second))
				}
			}
			if err := tx.AppendEvents(ctx, "big", evs); err != nil {
				return err
			}
			for c := 1; c <= counters; c++ {
				id := fmt.Sprint(c)
				if err := tx.PutCounter(ctx, queue.CounterState{Site: "big", ID: id, Mode: queue.CounterOpen, TicketID: held[id]}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			tb.Fatalf("fill check day: tickets %d-: %v", from, err)
		}
	}
}

// BenchCheck times Check on a day of tickets tickets (four events each,
// FillCheckDay) at 20 counters; the day must come out clean.
func BenchCheck(b *testing.B, s queue.Store, tickets int) {
	ss, ok := s.(txSQLStore)
	if !ok {
		b.Skip("store has no Check")
	}
	FillCheckDay(b, s, tickets, 20)
	for b.Loop() {
		r, err := ss.Check(b.Context(), sqlstore.CheckOpts{})
		if err != nil {
			b.Fatal(err)
		}
		if !r.OK() || r.Events < 4*tickets-20 {
			b.Fatalf("check of the generated day: %s", r)
		}
	}
}
