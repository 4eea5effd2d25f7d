package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// rewind is the state of a database at one moment, to put it back there
// behind the engine's back: what a standby promoted before it received the
// last commits, or a restore from a backup, does to a running daemon.
type rewind struct {
	ss       txSQLStore
	ticketID int64
	versions map[string]int64
	days     []struct {
		site, service, day string
		last               int
	}
	counters []struct {
		site, id, mode string
		ticket, since  int64
	}
	requests map[string]bool
}

func (r *rewind) q(t *testing.T, query string, args ...any) *sql.Rows {
	t.Helper()
	rows, err := r.ss.DB().QueryContext(t.Context(), r.ss.Dialect().Rebind(query), args...)
	if err != nil {
		t.Fatalf("rewind: %s: %v", query, err)
	}
	return rows
}

func (r *rewind) exec(t *testing.T, tx *sql.Tx, query string, args ...any) {
	t.Helper()
	if _, err := tx.ExecContext(t.Context(), r.ss.Dialect().Rebind(query), args...); err != nil {
		t.Fatalf("rewind: %s: %v", query, err)
	}
}

// markRewind records the database's state now.
func markRewind(t *testing.T, s queue.Store) *rewind {
	t.Helper()
	ss, ok := s.(txSQLStore)
	if !ok {
		t.Fatalf("store %T offers no SQL access", s)
	}
	r := &rewind{ss: ss, versions: map[string]int64{}, requests: map[string]bool{}}
	scan := func(rows *sql.Rows, each func() error) {
		defer rows.Close()
		for rows.Next() {
			if err := each(); err != nil {
				t.Fatalf("rewind: scan: %v", err)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("rewind: %v", err)
		}
	}
	rows := r.q(t, "SELECT COALESCE(MAX(id), 0) FROM tickets")
	scan(rows, func() error { return rows.Scan(&r.ticketID) })
	rows = r.q(t, "SELECT site, version FROM site_versions")
	scan(rows, func() error {
		var s string
		var v int64
		err := rows.Scan(&s, &v)
		r.versions[s] = v
		return err
	})
	rows = r.q(t, "SELECT site, service, day, last FROM day_counters")
	scan(rows, func() error {
		r.days = append(r.days, struct {
			site, service, day string
			last               int
		}{})
		d := &r.days[len(r.days)-1]
		return rows.Scan(&d.site, &d.service, &d.day, &d.last)
	})
	rows = r.q(t, "SELECT site, id, mode, ticket_id, since FROM counters")
	scan(rows, func() error {
		r.counters = append(r.counters, struct {
			site, id, mode string
			ticket, since  int64
		}{})
		c := &r.counters[len(r.counters)-1]
		return rows.Scan(&c.site, &c.id, &c.mode, &c.ticket, &c.since)
	})
	rows = r.q(t, "SELECT device, idem_key FROM requests")
	scan(rows, func() error {
		var d, k string
		err := rows.Scan(&d, &k)
		r.requests[d+"\x00"+k] = true
		return err
	})
	return r
}

// apply puts the database back where markRewind found it: the tickets,
// events, results and counter states written since are gone, the day
// counters and versions are back. Tickets written before and changed since
// keep their newer state (a real standby would have the older one; the
// engine's repair handles both).
func (r *rewind) apply(t *testing.T) {
	t.Helper()
	// In one transaction: the daemons must find the store as a promoted
	// standby would be, not half rewound.
	tx, err := r.ss.DB().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatalf("rewind: %v", err)
	}
	defer tx.Rollback()
	r.exec(t, tx, "DELETE FROM tickets WHERE id > ?", r.ticketID)
	for site, v := range r.versions {
		r.exec(t, tx, "DELETE FROM events WHERE site = ? AND version > ?", site, v)
		r.exec(t, tx, "UPDATE site_versions SET version = ? WHERE site = ?", v, site)
	}
	r.exec(t, tx, "DELETE FROM outbox WHERE version > ?", minVersion(r.versions))
	r.exec(t, tx, "DELETE FROM day_counters")
	for _, d := range r.days {
		r.exec(t, tx, "INSERT INTO day_counters (site, service, day, last) VALUES (?, ?, ?, ?)", d.site, d.service, d.day, d.last)
	}
	r.exec(t, tx, "DELETE FROM counters")
	for _, c := range r.counters {
		r.exec(t, tx, "INSERT INTO counters (site, id, mode, ticket_id, since) VALUES (?, ?, ?, ?, ?)", c.site, c.id, c.mode, c.ticket, c.since)
	}
	rows, err := tx.QueryContext(t.Context(), "SELECT device, idem_key FROM requests")
	if err != nil {
		t.Fatalf("rewind: %v", err)
	}
	var drop [][2]string
	for rows.Next() {
		var d, k string
		if err := rows.Scan(&d, &k); err != nil {
			t.Fatal(err)
		}
		if !r.requests[d+"\x00"+k] {
			drop = append(drop, [2]string{d, k})
		}
	}
	rows.Close()
	for _, k := range drop {
		r.exec(t, tx, "DELETE FROM requests WHERE device = ? AND idem_key = ?", k[0], k[1])
	}
	if r.ss.Dialect().IDs == sqlstore.IDsSequence {
		// A standby's sequence is where its last replayed commit left it.
		r.exec(t, tx, fmt.Sprintf("SELECT setval(pg_get_serial_sequence('tickets', 'id'), %d)", max(r.ticketID, 1)))
	}
	if err := tx.Commit(); err != nil {
		t.Fatalf("rewind: commit: %v", err)
	}
}

func minVersion(vs map[string]int64) int64 {
	m := int64(-1)
	for _, v := range vs {
		if m < 0 || v < m {
			m = v
		}
	}
	return max(m, 0)
}

// testLostWork rewinds the database under a running engine, as a failover
// to a standby that had not received the last second does, and checks that
// no number is given twice, that the lost tickets come back with their
// numbers, that a retry gets its first answer, and that check is clean and
// shows the repair.
func testLostWork(t *testing.T, open func(t *testing.T) queue.Store) {
	en := newEnv(t, open)
	ledger := map[string]int64{} // number -> ticket id, every ticket a kiosk was given
	give := func(tk queue.Ticket) {
		t.Helper()
		if id, ok := ledger[tk.Number]; ok && id != tk.ID {
			t.Fatalf("number %s given twice: ticket ids %d and %d", tk.Number, id, tk.ID)
		}
		ledger[tk.Number] = tk.ID
	}
	for range 4 {
		give(en.issue("A", queue.ClassNormal))
	}
	en.next("1")
	mark := markRewind(t, en.store)

	// The work the database will lose: tickets printed, a call, a retry key.
	var lostKey queue.Request
	var lost []queue.Ticket
	for i := range 5 {
		r := en.req()
		tk, err := en.e.Issue(en.ctx, queue.IssueRequest{Request: r, Service: "A"})
		if err != nil {
			t.Fatalf("issue: %v", err)
		}
		give(tk)
		lost = append(lost, tk)
		if i == 2 {
			lostKey = r
		}
	}
	called := en.next("2")
	mark.apply(t)

	// Issue again: no number may repeat one a kiosk printed.
	for range 3 {
		give(en.issue("A", queue.ClassNormal))
	}
	again, err := en.e.Issue(en.ctx, queue.IssueRequest{Request: lostKey, Service: "A"})
	if err != nil {
		t.Fatalf("retry of a lost request: %v", err)
	}
	if again.Number != lost[2].Number || again.ID != lost[2].ID {
		t.Errorf("retry of a lost request got %s (id %d), want its first answer %s (id %d)", again.Number, again.ID, lost[2].Number, lost[2].ID)
	}
	en.restored(t, lost)
	// The counter that called goes on with its ticket.
	st, err := en.e.Start(en.ctx, queue.CounterRequest{Request: en.req(), Counter: "2"})
	if err != nil || st.ID != called.ID {
		t.Errorf("start at counter 2 after the repair: %v %v, want ticket %s", st.Number, err, called.Number)
	}
	if s := en.e.Losses(); s.Found < 1 || s.Restored < 1 || s.Tickets < 5 || s.Unrestored != 0 {
		t.Errorf("Losses() = %+v, want one found and restored with 5 tickets", s)
	}
	r, err := mark.ss.Check(en.ctx, sqlstore.CheckOpts{})
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	if !r.OK() {
		t.Errorf("check after the repair:\n%s", r)
	}
	t.Logf("check after the repair: %s", r)
	if len(r.Losses) != 1 || !strings.Contains(r.String(), "restored 6 requests, 5 tickets") {
		t.Errorf("check does not show the repair (want one record, 6 requests, 5 tickets):\n%s", r)
	}

	// A display that saw versions the store no longer has is evidence too,
	// even to a daemon that started after the loss (which cannot know the
	// numbers lost with them, only that their versions must not be given
	// to other events).
	mark = markRewind(t, en.store)
	en.issue("A", queue.ClassNormal)
	var top int64
	err = en.store.View(en.ctx, func(ctx context.Context, tx queue.Tx) error {
		var err error
		top, err = tx.LastVersion(ctx, "hq")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = en.e.Close(en.ctx)
	mark.apply(t)
	en.start([]queue.Site{TestSite()})
	if _, err := en.e.Subscribe("hq", top); err != nil {
		t.Fatal(err)
	}
	tk := en.issue("A", queue.ClassNormal)
	if tk.Version <= top {
		t.Errorf("after a display reported version %d, a ticket got version %d: a version given to two events", top, tk.Version)
	}
	if r, err = mark.ss.Check(en.ctx, sqlstore.CheckOpts{}); err != nil {
		t.Fatalf("check: %v", err)
	}
	if !r.OK() || len(r.Losses) != 2 {
		t.Errorf("check after a display's evidence (want clean, two records):\n%s", r)
	}
}

// testLostWorkTwoDaemons is testLostWork with two daemons on one store,
// each issuing: the one that finds the loss skips the lost versions and
// applies its own tickets again; the other finds the record of the gap and
// applies its own. Their union is what the kiosks printed.
func testLostWorkTwoDaemons(t *testing.T, open func(t *testing.T) queue.Store) {
	en := newEnv(t, open)
	if ss, ok := en.store.(txSQLStore); ok && ss.Dialect().IDs == sqlstore.IDsAfterMax {
		// Its ids follow the largest stored: a second daemon's ticket lost
		// with the first's could find its id taken. SQLite has one daemon.
		t.Skip("SQLite is written by one daemon")
	}
	var es []*queue.Engine
	for i := range 2 {
		e := StartEngine(t, queue.Opts{Store: en.store, Sites: []queue.Site{TestSite()}, Clock: en.clock.Now, Batch: 32,
			Follow: true, PollInterval: 2 * time.Millisecond, PollIdle: 5 * time.Millisecond, Name: fmt.Sprintf("daemon-%d", i+1)})
		es = append(es, e)
	}
	ledger := map[string]int64{}
	issue := func(e *queue.Engine) queue.Ticket {
		t.Helper()
		tk, err := e.Issue(en.ctx, queue.IssueRequest{Request: en.req(), Service: "A"})
		for errors.Is(err, queue.ErrUnavailable) {
			// Refused while a site is repaired: a device retries.
			time.Sleep(5 * time.Millisecond)
			tk, err = e.Issue(en.ctx, queue.IssueRequest{Request: en.req(), Service: "A"})
		}
		if err != nil {
			t.Fatalf("issue: %v", err)
		}
		if id, ok := ledger[tk.Number]; ok && id != tk.ID {
			t.Fatalf("number %s given twice: ticket ids %d and %d", tk.Number, id, tk.ID)
		}
		ledger[tk.Number] = tk.ID
		return tk
	}
	// caughtUp waits until every engine's feed has version v.
	caughtUp := func(v int64) {
		t.Helper()
		for _, e := range es {
			s, err := e.Subscribe("hq", 0)
			if err != nil {
				t.Fatal(err)
			}
			for s.Version() < v {
				ctx, cancel := context.WithTimeout(en.ctx, 5*time.Second)
				_, err := s.Next(ctx)
				cancel()
				if err != nil {
					t.Fatalf("follow to version %d: %v", v, err)
				}
			}
		}
	}
	var last queue.Ticket
	for i := range 6 {
		last = issue(es[i%2])
	}
	caughtUp(last.Version)
	mark := markRewind(t, en.store)
	var lost []queue.Ticket
	for i := range 6 {
		last = issue(es[i%2])
		lost = append(lost, last)
	}
	caughtUp(last.Version)
	mark.apply(t)
	// The first daemon finds the loss; then both go on issuing.
	issue(es[0])
	// Both repairs are in within 10 s; the checks below name what is not.
	poll.Within(10*time.Second, 5*time.Millisecond, func() bool {
		return es[0].Losses().Restored > 0 && es[1].Losses().Restored > 0
	})
	for i := range 4 {
		issue(es[i%2])
	}
	en.restored(t, lost)
	r, err := mark.ss.Check(en.ctx, sqlstore.CheckOpts{})
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	t.Logf("check: %s", r)
	if !r.OK() || len(r.Losses) != 2 {
		t.Errorf("check after two daemons' repair (want clean, two records):\n%s", r)
	}
}

// restored checks that every ticket of lost is back in the store with its
// id and number.
func (en *env) restored(t *testing.T, lost []queue.Ticket) {
	t.Helper()
	for _, tk := range lost {
		var got *queue.Ticket
		err := en.store.View(en.ctx, func(ctx context.Context, tx queue.Tx) error {
			var err error
			got, err = tx.Ticket(ctx, tk.ID)
			return err
		})
		if err != nil || got.Number != tk.Number {
			t.Errorf("lost ticket %s (id %d) not restored: %v %v", tk.Number, tk.ID, got, err)
		}
	}
}
