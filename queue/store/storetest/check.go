package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// txCheck builds a consistent database, checks it is found clean, then
// breaks one invariant after another behind the store's back and checks
// each is reported.
func txCheck(t *testing.T, s queue.Store) {
	ss, ok := s.(txSQLStore)
	if !ok {
		t.Skip("store has no Check")
	}
	ctx := t.Context()
	// A consistent day: three tickets issued, the first called at c1.
	var ids []int64
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		for i := 1; i <= 3; i++ {
			tk := txTicket("A", i, queue.ClassNormal, 20, int64(i))
			if err := tx.InsertTicket(ctx, tk); err != nil {
				return err
			}
			ids = append(ids, tk.ID)
			if err := appendEvent(ctx, tx, &queue.Event{Site: "s1", Type: queue.EventIssued, TicketID: tk.ID, Number: tk.Number}); err != nil {
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
		return appendEvent(ctx, tx, &queue.Event{Site: "s1", Type: queue.EventCalled, TicketID: tk.ID, Number: tk.Number})
	})
	expect := func(step string, want ...string) {
		t.Helper()
		r, err := ss.Check(ctx, sqlstore.CheckOpts{})
		if err != nil {
			t.Fatalf("%s: Check: %v", step, err)
		}
		if r.Tickets == 0 || r.Events == 0 || r.Sites != 1 {
			t.Errorf("%s: report counts %d sites, %d tickets, %d events", step, r.Sites, r.Tickets, r.Events)
		}
		text := strings.Join(r.Violations, "\n")
		if len(want) == 0 && !r.OK() {
			t.Fatalf("%s: violations on a consistent database:\n%s", step, text)
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: report lacks %q:\n%s", step, w, r)
			}
		}
	}
	expect("consistent")

	d, db := ss.Dialect(), ss.DB()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, d.Rebind(q), args...); err != nil {
			t.Fatalf("corrupt: %s: %v", q, err)
		}
	}

	// Invariant 1: without the unique index a second A002 goes in.
	exec(d.DropIndex("tickets_seq_uq"))
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		tk := txTicket("A", 2, queue.ClassNormal, 20, 9)
		if err := tx.InsertTicket(ctx, tk); err != nil {
			return err
		}
		return appendEvent(ctx, tx, &queue.Event{Site: "s1", Type: queue.EventIssued, TicketID: tk.ID, Number: tk.Number})
	})
	expect("duplicate seq", "invariant 1: site s1 service A day "+txDay+": seq 2 issued 2 times")

	// Invariant 2: a second ticket called at c1.
	exec("UPDATE tickets SET status = 'CALLED', counter = 'c1' WHERE id = ?", ids[1])
	expect("two tickets at one counter", `counter "c1" holds 2 called or serving tickets`, "A002 of "+txDay+" is CALLED at counter \"c1\", which does not hold it")

	// Invariants 3 and 4: the ISSUED event of A003 (version 3) is lost.
	exec("DELETE FROM events WHERE site = 's1' AND version = 3")
	expect("lost event", "invariant 4: site s1: event version 4 follows a gap", "ticket A003 (id")

	// Invariant 4: site_versions behind the log.
	exec("UPDATE site_versions SET version = 2 WHERE site = 's1'")
	expect("stale site version", "site_versions says 2, newest event is 5")

	// Invariant 5: a ticket of yesterday still waiting while today has begun.
	exec("UPDATE tickets SET day = '2026-03-01' WHERE id = ?", ids[2])
	expect("open ticket of a finished day", "invariant 5: site s1 day 2026-03-01 (finished): ticket A003 is still WAITING")
	r, err := ss.Check(ctx, sqlstore.CheckOpts{Today: func(string) string { return "2026-03-01" }})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(r.Violations, "\n"), "invariant 5") {
		t.Errorf("Check with Today = 2026-03-01 still reports a finished day:\n%s", r)
	}
}
