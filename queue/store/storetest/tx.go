// Package storetest is the conformance suite every queue.Store passes: Run
// tests the transaction primitives of queue.Tx directly against a real
// database; the helpers give each test a fresh database on PostgreSQL or
// MariaDB/MySQL.
package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// txSQLStore is what the SQL stores offer beyond queue.Store; the tests that
// need it (row locks, corrupting a database for Check) use it when present.
type txSQLStore interface {
	Dialect() *sqlstore.Dialect
	DB() *sql.DB
	Check(ctx context.Context, opts sqlstore.CheckOpts) (sqlstore.Report, error)
}

// txBase is the instant the suite's tickets are issued at.
var txBase = time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)

const txDay = "2026-03-02"

// Run runs the Tx conformance suite; open returns a new, empty store that
// the test may use alone (it is closed at cleanup by open's owner or here).
func Run(t *testing.T, open func(t *testing.T) queue.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s queue.Store)
	}{
		{"NextSeq", txNextSeq},
		{"InsertAndRead", txInsertAndRead},
		{"InsertMany", txInsertMany},
		{"InsertDuplicate", txInsertDuplicate},
		{"TicketByNumber", txTicketByNumber},
		{"UpdateTicketCAS", txUpdateTicketCAS},
		{"HeadOrder", txHeadOrder},
		{"HeadCounter", txHeadCounter},
		{"HeadClasses", txHeadClasses},
		{"HeadWaitingBefore", txHeadWaitingBefore},
		{"HeadLock", txHeadLock},
		{"WaitingAndAhead", txWaitingAndAhead},
		{"SetSortKey", txSetSortKey},
		{"Find", txFind},
		{"Stats", txStats},
		{"Counters", txCounters},
		{"CounterLock", txCounterLock},
		{"Streaks", txStreaks},
		{"Events", txEvents},
		{"EventsConcurrent", txEventsConcurrent},
		{"Requests", txRequests},
		{"RequestBatches", txRequestBatches},
		{"PurgeRequests", txPurgeRequests},
		{"Lease", txLease},
		{"Personal", txPersonal},
		{"EventBatches", txEventBatches},
		{"Savepoint", txSavepoint},
		{"UpdateRetries", txUpdateRetries},
		{"UpdateRollsBack", txUpdateRollsBack},
		{"ConcurrentIssue", txConcurrentIssue},
		{"View", txViewReadOnly},
		{"Check", txCheck},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

// update and view fail the test on error.
func txUpdate(t *testing.T, s queue.Store, fn func(ctx context.Context, tx queue.Tx) error) {
	t.Helper()
	if err := s.Update(t.Context(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func txView(t *testing.T, s queue.Store, fn func(ctx context.Context, tx queue.Tx) error) {
	t.Helper()
	if err := s.View(t.Context(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// txRead runs read in a View and returns what it read; an error fails the
// test.
func txRead[T any](t *testing.T, s queue.Store, read func(ctx context.Context, tx queue.Tx) (T, error)) T {
	t.Helper()
	var v T
	txView(t, s, func(ctx context.Context, tx queue.Tx) (err error) {
		v, err = read(ctx, tx)
		return err
	})
	return v
}

// txFound lists the tickets f selects.
func txFound(t *testing.T, s queue.Store, f queue.Filter) []queue.Ticket {
	t.Helper()
	return txRead(t, s, func(ctx context.Context, tx queue.Tx) ([]queue.Ticket, error) { return tx.Find(ctx, f) })
}

// txEventsOf lists the events q selects.
func txEventsOf(t *testing.T, s queue.Store, q queue.EventsQuery) []queue.Event {
	t.Helper()
	return txRead(t, s, func(ctx context.Context, tx queue.Tx) ([]queue.Event, error) { return tx.Events(ctx, q) })
}

// ticket returns a waiting ticket of site s1 for the test day.
func txTicket(service string, seq int, class queue.Class, rank int, sortKey int64) *queue.Ticket {
	at := txBase.Add(time.Duration(seq) * time.Second)
	return &queue.Ticket{
		Site: "s1", Service: service, Queue: service, Day: txDay, Seq: seq,
		Number: fmt.Sprintf("%s%03d", service, seq), Class: class, Status: queue.StatusWaiting,
		Rank: rank, SortKey: sortKey, IssuedAt: at, WaitingSince: at,
		Device: "kiosk-1", IdemKey: fmt.Sprintf("k-%s-%d", service, seq),
	}
}

// insert stores tickets in one transaction and returns them with their IDs.
func txInsert(t *testing.T, s queue.Store, ts ...*queue.Ticket) []*queue.Ticket {
	t.Helper()
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		for _, tk := range ts {
			tk.ID = 0
			if err := tx.InsertTicket(ctx, tk); err != nil {
				return err
			}
		}
		return nil
	})
	for _, tk := range ts {
		if tk.ID == 0 {
			t.Fatalf("InsertTicket left ID 0 for %s", tk.Number)
		}
	}
	return ts
}

func txNumbers(ts []queue.Ticket) []string {
	out := []string{}
	for _, tk := range ts {
		out = append(out, tk.Number)
	}
	return out
}

func txNextSeq(t *testing.T, s queue.Store) {
	type key = queue.DayKey
	steps := []struct {
		k    key
		want int
	}{
		{key{Site: "s1", Service: "A", Day: "2026-03-02"}, 1},
		{key{Site: "s1", Service: "A", Day: "2026-03-02"}, 2},
		{key{Site: "s1", Service: "B", Day: "2026-03-02"}, 1},
		{key{Site: "s1", Service: "A", Day: "2026-03-03"}, 1},
		{key{Site: "s2", Service: "A", Day: "2026-03-02"}, 1},
		{key{Site: "s1", Service: "A", Day: "2026-03-02"}, 3},
		{key{Site: "s1", Service: "B", Day: "2026-03-02"}, 2},
	}
	for i, st := range steps {
		var got int
		txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
			var err error
			got, err = tx.NextSeq(ctx, st.k, 1)
			return err
		})
		if got != st.want {
			t.Errorf("step %d: NextSeq%v = %d, want %d", i, st.k, got, st.want)
		}
	}
	// Two allocations in one transaction.
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		a, err := tx.NextSeq(ctx, queue.DayKey{Site: "s1", Service: "A", Day: "2026-03-02"}, 1)
		if err != nil {
			return err
		}
		b, err := tx.NextSeq(ctx, queue.DayKey{Site: "s1", Service: "A", Day: "2026-03-02"}, 1)
		if err != nil {
			return err
		}
		if a != 4 || b != 5 {
			t.Errorf("NextSeq twice in one transaction = %d, %d, want 4, 5", a, b)
		}
		return nil
	})
	// Several numbers at once (a batch's kiosks), the unused ones given
	// back before the commit: the next transaction goes on from the last
	// number used.
	k := queue.DayKey{Site: "s1", Service: "A", Day: "2026-03-02"}
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		last, err := tx.NextSeq(ctx, k, 4)
		if err != nil {
			return err
		}
		if last != 9 {
			t.Errorf("NextSeq(4) after 5 = %d, want 9", last)
		}
		if _, err := tx.NextSeq(ctx, k, -2); err == nil {
			t.Error("NextSeq(-2) took numbers; giving back is GiveBackSeq")
		}
		return tx.GiveBackSeq(ctx, k, 2)
	})
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		got, err := tx.NextSeq(ctx, k, 1)
		if got != 8 {
			t.Errorf("NextSeq after 7 = %d, want 8", got)
		}
		return err
	})
	// A service day's first transaction taking several.
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		got, err := tx.NextSeq(ctx, queue.DayKey{Site: "s3", Service: "A", Day: "2026-03-02"}, 3)
		if got != 3 {
			t.Errorf("first NextSeq(3) = %d, want 3", got)
		}
		return err
	})
}

func txInsertAndRead(t *testing.T, s queue.Store) {
	tk := txTicket("A", 7, queue.ClassVIP, 10, 12345)
	tk.Counter, tk.TargetCounter = "c1", "c2"
	tk.CallCount, tk.NoShowCount = 2, 1
	tk.CalledAt = txBase.Add(time.Minute + 5*time.Millisecond)
	tk.ServingAt = txBase.Add(2 * time.Minute)
	tk.FinishedAt = txBase.Add(3 * time.Minute)
	tk.Status = queue.StatusDone
	txInsert(t, s, tk)
	other := txInsert(t, s, txTicket("A", 8, queue.ClassNormal, 20, 1))[0]
	if other.ID == tk.ID {
		t.Fatalf("two tickets got ID %d", tk.ID)
	}
	txView(t, s, func(ctx context.Context, tx queue.Tx) error {
		got, err := tx.Ticket(ctx, tk.ID)
		if err != nil {
			return err
		}
		txAssertTicket(t, got, tk)
		if _, err := tx.Ticket(ctx, tk.ID+1000); !errors.Is(err, queue.ErrNotFound) {
			t.Errorf("Ticket(missing) error = %v, want ErrNotFound", err)
		}
		return nil
	})
}

// txInsertMany reserves ids and stores tickets with them in one call, where
// the store can (else TicketIDs is unsupported and InsertTicket does it);
// a ticket inserted after them in the transaction gets an id of its own.
func txInsertMany(t *testing.T, s queue.Store) {
	a, b := txTicket("A", 1, queue.ClassNormal, 20, 1), txTicket("A", 2, queue.ClassVIP, 10, 2)
	b.Device, b.IdemKey = "k1", "x1"
	var c *queue.Ticket
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		ids, err := tx.TicketIDs(ctx, 3)
		if errors.Is(err, errors.ErrUnsupported) {
			t.Skipf("the store gives ids only as it inserts: %v", err)
		}
		if err != nil {
			return err
		}
		if len(ids) != 3 || ids[0] == ids[1] || ids[1] == ids[2] || ids[0] == ids[2] || ids[0] <= 0 {
			t.Fatalf("TicketIDs(3) = %v, want 3 distinct ids", ids)
		}
		a.ID, b.ID = ids[0], ids[1]
		if err := tx.InsertTickets(ctx, []*queue.Ticket{a, b}); err != nil {
			return err
		}
		c = txTicket("A", 3, queue.ClassNormal, 20, 3)
		if err := tx.InsertTicket(ctx, c); err != nil {
			return err
		}
		if c.ID == a.ID || c.ID == b.ID {
			t.Errorf("a ticket inserted after InsertTickets got id %d, one of theirs", c.ID)
		}
		dup := txTicket("A", 2, queue.ClassNormal, 20, 9)
		dup.ID = ids[2]
		if err := tx.Savepoint(ctx, "d"); err != nil {
			return err
		}
		if err := tx.InsertTickets(ctx, []*queue.Ticket{dup}); !errors.Is(err, queue.ErrDuplicate) {
			t.Errorf("InsertTickets of a taken number: %v, want ErrDuplicate", err)
		}
		return tx.RollbackTo(ctx, "d")
	})
	txView(t, s, func(ctx context.Context, tx queue.Tx) error {
		for _, want := range []*queue.Ticket{a, b, c} {
			got, err := tx.Ticket(ctx, want.ID)
			if err != nil {
				return err
			}
			txAssertTicket(t, got, want)
		}
		return nil
	})
}

// assertTicket compares two tickets, times by instant.
func txAssertTicket(t *testing.T, got, want *queue.Ticket) {
	t.Helper()
	g, w := *got, *want
	times := [][2]*time.Time{{&g.IssuedAt, &w.IssuedAt}, {&g.WaitingSince, &w.WaitingSince},
		{&g.CalledAt, &w.CalledAt}, {&g.ServingAt, &w.ServingAt}, {&g.FinishedAt, &w.FinishedAt}}
	for _, p := range times {
		if !p[0].Equal(*p[1]) {
			t.Errorf("ticket %s: time %v, want %v", want.Number, *p[0], *p[1])
		}
		*p[0], *p[1] = time.Time{}, time.Time{}
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("ticket read back:\n got %+v\nwant %+v", g, w)
	}
}

func txInsertDuplicate(t *testing.T, s queue.Store) {
	txInsert(t, s, txTicket("A", 1, queue.ClassNormal, 20, 1))
	var dupErr error
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		if err := tx.Savepoint(ctx, "sp1"); err != nil {
			return err
		}
		dupErr = tx.InsertTicket(ctx, txTicket("A", 1, queue.ClassNormal, 20, 2))
		if err := tx.RollbackTo(ctx, "sp1"); err != nil {
			return err
		}
		// The transaction goes on after the refused insert.
		return tx.InsertTicket(ctx, txTicket("A", 2, queue.ClassNormal, 20, 2))
	})
	if !errors.Is(dupErr, queue.ErrDuplicate) {
		t.Fatalf("duplicate insert error = %v, want ErrDuplicate", dupErr)
	}
	// Same seq in another service, day or site is fine.
	a := txTicket("B", 1, queue.ClassNormal, 20, 1)
	b := txTicket("A", 1, queue.ClassNormal, 20, 1)
	b.Day = "2026-03-03"
	c := txTicket("A", 1, queue.ClassNormal, 20, 1)
	c.Site = "s2"
	txInsert(t, s, a, b, c)
	if got := txFound(t, s, queue.Filter{Site: "s1"}); len(got) != 4 {
		t.Errorf("site s1 holds %d tickets, want 4: %v", len(got), txNumbers(got))
	}
}

func txTicketByNumber(t *testing.T, s queue.Store) {
	// Prefixes collide: service "A" and service "AB" with prefix "A".
	first := txTicket("A", 5, queue.ClassNormal, 20, 1)
	second := txTicket("AB", 5, queue.ClassNormal, 20, 1)
	second.Number = first.Number
	second.IssuedAt = first.IssuedAt.Add(time.Hour)
	txInsert(t, s, second, first) // inserted out of issue order on purpose
	txView(t, s, func(ctx context.Context, tx queue.Tx) error {
		got, err := tx.TicketByNumber(ctx, queue.NumberKey{Site: "s1", Day: txDay, Number: first.Number})
		if err != nil {
			return err
		}
		if got.ID != second.ID {
			t.Errorf("TicketByNumber = id %d (service %s), want the latest issued, id %d", got.ID, got.Service, second.ID)
		}
		for _, q := range []queue.NumberKey{
			{Site: "s1", Day: txDay, Number: "Z999"},
			{Site: "s1", Day: "2026-03-03", Number: first.Number},
			{Site: "s2", Day: txDay, Number: first.Number},
		} {
			if _, err := tx.TicketByNumber(ctx, q); !errors.Is(err, queue.ErrNotFound) {
				t.Errorf("TicketByNumber%v error = %v, want ErrNotFound", q, err)
			}
		}
		return nil
	})
}

func txUpdateTicketCAS(t *testing.T, s queue.Store) {
	tk := txInsert(t, s, txTicket("A", 1, queue.ClassNormal, 20, 1))[0]
	called := *tk
	called.Status, called.Counter, called.CallCount = queue.StatusCalled, "c1", 1
	called.CalledAt = txBase.Add(time.Minute)
	called.Queue = "B" // a transfer moves it to another queue
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		return tx.UpdateTicket(ctx, &called, queue.StatusWaiting)
	})
	var casErr, missingErr error
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		again := called
		again.Status = queue.StatusServing
		casErr = tx.UpdateTicket(ctx, &again, queue.StatusWaiting) // stale: it is CALLED now
		missing := called
		missing.ID += 1000
		missingErr = tx.UpdateTicket(ctx, &missing, queue.StatusCalled)
		return nil
	})
	if !errors.Is(casErr, queue.ErrConflict) {
		t.Errorf("UpdateTicket with stale status: error = %v, want ErrConflict", casErr)
	}
	if missingErr == nil {
		t.Errorf("UpdateTicket of a missing ticket succeeded")
	}
	// Writing the same values again is not a conflict (MySQL reports
	// matched rows, not changed rows).
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		return tx.UpdateTicket(ctx, &called, queue.StatusCalled)
	})
	txAssertTicket(t, txRead(t, s, func(ctx context.Context, tx queue.Tx) (*queue.Ticket, error) { return tx.Ticket(ctx, tk.ID) }), &called)
	// The transferred ticket keeps its number: another ticket of service B
	// with the same seq may still be issued.
	txInsert(t, s, txTicket("B", 1, queue.ClassNormal, 20, 1))
}

// headOf returns the number of the head q selects, "" if none.
func txHeadOf(t *testing.T, s queue.Store, q queue.HeadQuery) string {
	t.Helper()
	if tk := txRead(t, s, func(ctx context.Context, tx queue.Tx) (*queue.Ticket, error) { return tx.Head(ctx, q) }); tk != nil {
		return tk.Number
	}
	return ""
}

func txHeadOrder(t *testing.T, s queue.Store) {
	done := txTicket("A", 1, queue.ClassEmergency, 0, 0)
	done.Status = queue.StatusCalled
	otherDay := txTicket("A", 2, queue.ClassEmergency, 0, 0)
	otherDay.Day = "2026-03-01"
	otherSite := txTicket("A", 3, queue.ClassEmergency, 0, 0)
	otherSite.Site = "s2"
	txInsert(t, s, done, otherDay, otherSite,
		txTicket("B", 4, queue.ClassEmergency, 0, 0),
		txTicket("A", 5, queue.ClassNormal, 20, 100),
		txTicket("A", 6, queue.ClassNormal, 20, 50),
		txTicket("A", 7, queue.ClassVIP, 10, 900),
		txTicket("A", 8, queue.ClassVIP, 10, 900), // same key as A007: id breaks the tie
	)
	q := queue.HeadQuery{Site: "s1", Day: txDay, Service: "A"}
	order := []string{"A007", "A008", "A006", "A005"}
	for i, want := range order {
		if got := txHeadOf(t, s, q); got != want {
			t.Fatalf("head %d = %q, want %q", i, got, want)
		}
		// Take it off the queue.
		txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
			tk, err := tx.Head(ctx, queue.HeadQuery{Site: "s1", Day: txDay, Service: "A", Lock: true})
			if err != nil {
				return err
			}
			tk.Status = queue.StatusCalled
			return tx.UpdateTicket(ctx, tk, queue.StatusWaiting)
		})
	}
	if got := txHeadOf(t, s, q); got != "" {
		t.Errorf("head of an empty queue = %q, want none", got)
	}
}

func txHeadCounter(t *testing.T, s queue.Store) {
	toC2 := txTicket("A", 1, queue.ClassNormal, 20, 1)
	toC2.TargetCounter = "c2"
	txInsert(t, s, toC2, txTicket("A", 2, queue.ClassNormal, 20, 2))
	cases := []struct{ counter, want string }{
		{"", "A002"},   // the general queue skips tickets sent to a counter
		{"c2", "A001"}, // the counter sees only tickets sent to it
		{"c3", ""},
	}
	for _, c := range cases {
		if got := txHeadOf(t, s, queue.HeadQuery{Site: "s1", Day: txDay, Service: "A", Counter: c.counter}); got != c.want {
			t.Errorf("head for counter %q = %q, want %q", c.counter, got, c.want)
		}
	}
}

func txHeadClasses(t *testing.T, s queue.Store) {
	txInsert(t, s,
		txTicket("A", 1, queue.ClassEmergency, 0, 1),
		txTicket("A", 2, queue.ClassVIP, 10, 1),
		txTicket("A", 3, queue.ClassNormal, 20, 1),
		txTicket("A", 4, queue.ClassRevisit, 20, 0),
	)
	cases := []struct {
		classes, not []queue.Class
		want         string
	}{
		{nil, nil, "A001"},
		{[]queue.Class{queue.ClassNormal}, nil, "A003"},
		{[]queue.Class{queue.ClassNormal, queue.ClassVIP}, nil, "A002"},
		{nil, []queue.Class{queue.ClassEmergency}, "A002"},
		{nil, []queue.Class{queue.ClassEmergency, queue.ClassVIP}, "A004"},
		{[]queue.Class{queue.ClassNormal, queue.ClassRevisit}, []queue.Class{queue.ClassRevisit}, "A003"},
		{[]queue.Class{queue.ClassAppointment}, nil, ""},
	}
	for _, c := range cases {
		q := queue.HeadQuery{Site: "s1", Day: txDay, Service: "A", Classes: c.classes, NotClasses: c.not}
		if got := txHeadOf(t, s, q); got != c.want {
			t.Errorf("head classes %v not %v = %q, want %q", c.classes, c.not, got, c.want)
		}
	}
}

func txHeadWaitingBefore(t *testing.T, s queue.Store) {
	a := txTicket("A", 1, queue.ClassNormal, 20, 1) // first by rank and key
	a.WaitingSince = txBase.Add(10 * time.Minute)
	b := txTicket("A", 2, queue.ClassNormal, 20, 2)
	b.WaitingSince = txBase.Add(5 * time.Minute)
	c := txTicket("A", 3, queue.ClassVIP, 10, 3)
	c.WaitingSince = txBase.Add(7 * time.Minute)
	txInsert(t, s, a, b, c)
	ms := func(d time.Duration) int64 { return txBase.Add(d).UnixMilli() }
	cases := []struct {
		before int64
		byWait bool
		want   string
	}{
		{0, false, "A003"},
		{0, true, "A002"},
		{ms(6 * time.Minute), false, "A002"},
		{ms(8 * time.Minute), false, "A003"},
		{ms(8 * time.Minute), true, "A002"},
		{ms(5 * time.Minute), true, ""}, // strictly before
	}
	for _, c := range cases {
		q := queue.HeadQuery{Site: "s1", Day: txDay, Service: "A", WaitingBefore: c.before, ByWait: c.byWait}
		if got := txHeadOf(t, s, q); got != c.want {
			t.Errorf("head waiting before %d by wait %v = %q, want %q", c.before, c.byWait, got, c.want)
		}
	}
}

// txHeadLock: two transactions ask for the locked head at once; the
// second skips the row the first holds (FOR UPDATE SKIP LOCKED). On a
// store without row locks (SQLite: one writer) the second runs after the
// first and sees the first's claim.
func txHeadLock(t *testing.T, s queue.Store) {
	txInsert(t, s, txTicket("A", 1, queue.ClassNormal, 20, 1), txTicket("A", 2, queue.ClassNormal, 20, 2))
	q := queue.HeadQuery{Site: "s1", Day: txDay, Service: "A", Lock: true}
	claim := func(ctx context.Context, tx queue.Tx) (string, error) {
		tk, err := tx.Head(ctx, q)
		if err != nil || tk == nil {
			return "", err
		}
		tk.Status = queue.StatusCalled
		return tk.Number, tx.UpdateTicket(ctx, tk, queue.StatusWaiting)
	}
	ss, ok := s.(txSQLStore)
	if !ok || !ss.Dialect().SkipLocked {
		var first, second string
		txUpdate(t, s, func(ctx context.Context, tx queue.Tx) (err error) { first, err = claim(ctx, tx); return err })
		txUpdate(t, s, func(ctx context.Context, tx queue.Tx) (err error) { second, err = claim(ctx, tx); return err })
		if first != "A001" || second != "A002" {
			t.Errorf("claims = %q, %q, want A001, A002", first, second)
		}
		return
	}
	locked, secondDone := make(chan struct{}), make(chan struct{})
	var first, second string
	var secondErr error
	go func() {
		defer close(secondDone)
		<-locked
		secondErr = s.Update(t.Context(), func(ctx context.Context, tx queue.Tx) (err error) {
			second, err = claim(ctx, tx)
			return err
		})
	}()
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		var err error
		first, err = claim(ctx, tx)
		if err != nil {
			return err
		}
		close(locked)
		select {
		case <-secondDone: // the second did not wait for our lock
		case <-time.After(10 * time.Second):
			t.Error("second transaction blocked on the locked head instead of skipping it")
		}
		return nil
	})
	<-secondDone
	if secondErr != nil {
		t.Fatalf("second Update: %v", secondErr)
	}
	if first != "A001" || second != "A002" {
		t.Errorf("concurrent claims = %q, %q, want A001, A002", first, second)
	}
}

func txWaitingAndAhead(t *testing.T, s queue.Store) {
	sent := txTicket("A", 6, queue.ClassNormal, 20, 0)
	sent.TargetCounter = "c1"
	called := txTicket("A", 7, queue.ClassNormal, 20, 0)
	called.Status = queue.StatusCalled
	ts := txInsert(t, s,
		txTicket("A", 1, queue.ClassVIP, 10, 5),
		txTicket("A", 2, queue.ClassNormal, 20, 30),
		txTicket("A", 3, queue.ClassNormal, 20, 10),
		txTicket("A", 4, queue.ClassNormal, 20, 20),
		txTicket("B", 5, queue.ClassNormal, 20, 1),
		sent, called,
	)
	txView(t, s, func(ctx context.Context, tx queue.Tx) error {
		cases := []struct {
			rank, limit int
			want        []string
		}{
			{20, 0, []string{"A003", "A004", "A002"}},
			{20, 2, []string{"A003", "A004"}},
			{10, 10, []string{"A001"}},
			{0, 10, []string{}},
		}
		for _, c := range cases {
			got, err := tx.Waiting(ctx, queue.WaitingQuery{Site: "s1", Day: txDay, Service: "A", Rank: c.rank, Limit: c.limit})
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(txNumbers(got), c.want) {
				t.Errorf("Waiting(rank %d, limit %d) = %v, want %v", c.rank, c.limit, txNumbers(got), c.want)
			}
		}
		ahead := map[string]int{"A001": 0, "A003": 1, "A004": 2, "A002": 3, "B005": 0, "A006": 1}
		for _, tk := range ts {
			want, ok := ahead[tk.Number]
			if !ok {
				continue
			}
			got, err := tx.Ahead(ctx, tk)
			if err != nil {
				return err
			}
			if got != want {
				t.Errorf("Ahead(%s) = %d, want %d", tk.Number, got, want)
			}
		}
		return nil
	})
}

func txSetSortKey(t *testing.T, s queue.Store) {
	ts := txInsert(t, s, txTicket("A", 1, queue.ClassNormal, 20, 10), txTicket("A", 2, queue.ClassNormal, 20, 20))
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error { return tx.SetSortKey(ctx, ts[1].ID, 5) })
	if got := txHeadOf(t, s, queue.HeadQuery{Site: "s1", Day: txDay, Service: "A"}); got != "A002" {
		t.Errorf("head after moving A002 first = %q", got)
	}
	var err error
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		tk := *ts[1]
		tk.Status = queue.StatusCalled
		if err := tx.UpdateTicket(ctx, &tk, queue.StatusWaiting); err != nil {
			return err
		}
		err = tx.SetSortKey(ctx, tk.ID, 1)
		return nil
	})
	if !errors.Is(err, queue.ErrConflict) {
		t.Errorf("SetSortKey of a called ticket: error = %v, want ErrConflict", err)
	}
}

func txFind(t *testing.T, s queue.Store) {
	mk := func(service string, seq int, d string, st queue.Status, calledMin int) *queue.Ticket {
		tk := txTicket(service, seq, queue.ClassNormal, 20, int64(seq))
		tk.Day, tk.Status = d, st
		if calledMin > 0 {
			tk.CalledAt = txBase.Add(time.Duration(calledMin) * time.Minute)
		}
		return tk
	}
	other := mk("A", 9, "2026-03-02", queue.StatusWaiting, 0)
	other.Site = "s2"
	a2, b5 := mk("A", 2, "2026-03-01", queue.StatusDone, 5), mk("B", 5, "2026-03-02", queue.StatusWaiting, 0)
	txInsert(t, s,
		mk("A", 1, "2026-03-01", queue.StatusWaiting, 0),
		a2,
		mk("A", 3, "2026-03-02", queue.StatusCalled, 10),
		mk("B", 4, "2026-03-02", queue.StatusCalled, 20),
		b5,
		mk("A", 6, "2026-03-03", queue.StatusServing, 30),
		other,
	)
	cases := []struct {
		name string
		f    queue.Filter
		want []string
	}{
		{"site", queue.Filter{Site: "s1"}, []string{"A001", "A002", "A003", "B004", "B005", "A006"}},
		{"service", queue.Filter{Site: "s1", Service: "B"}, []string{"B004", "B005"}},
		{"day", queue.Filter{Site: "s1", Day: "2026-03-02"}, []string{"A003", "B004", "B005"}},
		{"before day", queue.Filter{Site: "s1", BeforeDay: "2026-03-02"}, []string{"A001", "A002"}},
		{"statuses", queue.Filter{Site: "s1", Statuses: []queue.Status{queue.StatusCalled, queue.StatusServing}}, []string{"A003", "B004", "A006"}},
		{"called before", queue.Filter{Site: "s1", CalledBefore: txBase.Add(15 * time.Minute).UnixMilli()}, []string{"A002", "A003"}},
		{"limit", queue.Filter{Site: "s1", Limit: 2}, []string{"A001", "A002"}},
		{"ids", queue.Filter{Site: "s1", IDs: []int64{b5.ID, a2.ID, other.ID}}, []string{"A002", "B005"}},
		{"ids and status", queue.Filter{Site: "s1", IDs: []int64{b5.ID, a2.ID}, Statuses: []queue.Status{queue.StatusWaiting}}, []string{"B005"}},
		{"combined", queue.Filter{Site: "s1", Service: "A", BeforeDay: "2026-03-03", Statuses: []queue.Status{queue.StatusWaiting, queue.StatusCalled}}, []string{"A001", "A003"}},
		{"none", queue.Filter{Site: "nowhere"}, []string{}},
	}
	txView(t, s, func(ctx context.Context, tx queue.Tx) error {
		for _, c := range cases {
			got, err := tx.Find(ctx, c.f)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(txNumbers(got), c.want) {
				t.Errorf("Find %s = %v, want %v", c.name, txNumbers(got), c.want)
			}
		}
		return nil
	})
}

func txStats(t *testing.T, s queue.Store) {
	min := func(m int) time.Time { return txBase.Add(time.Duration(m) * time.Minute) }
	mk := func(service string, seq int, st queue.Status, counter string, issued, called, serving, finished int) *queue.Ticket {
		tk := txTicket(service, seq, queue.ClassNormal, 20, int64(seq))
		tk.Status, tk.Counter = st, counter
		tk.IssuedAt, tk.WaitingSince = min(issued), min(issued)
		if called > 0 {
			tk.CalledAt, tk.FirstCalledAt = min(called), min(called)
		}
		if serving > 0 {
			tk.ServingAt = min(serving)
		}
		if finished > 0 {
			tk.FinishedAt = min(finished)
		}
		return tk
	}
	otherDay := mk("A", 9, queue.StatusDone, "c1", 0, 1, 2, 3)
	otherDay.Day = "2026-03-01"
	txInsert(t, s,
		mk("A", 1, queue.StatusDone, "c1", 0, 10, 11, 21),  // wait 10, service 10
		mk("A", 2, queue.StatusDone, "c1", 2, 22, 23, 28),  // wait 20, service 5
		mk("A", 3, queue.StatusNoShow, "c1", 4, 30, 0, 35), // wait 26, no service
		mk("A", 4, queue.StatusWaiting, "", 6, 0, 0, 0),
		mk("A", 5, queue.StatusWaiting, "", 8, 0, 0, 0),
		mk("B", 6, queue.StatusServing, "c2", 1, 3, 4, 0), // wait 2, not finished
		otherDay,
	)
	m := func(n int) int64 { return int64(n) * 60000 }
	want := []queue.StatRow{
		{Service: "A", Issuer: "A", Counter: "", Status: queue.StatusWaiting, N: 2, MinWaitingSince: min(6).UnixMilli()},
		{Service: "A", Issuer: "A", Counter: "c1", Status: queue.StatusDone, N: 2, MinWaitingSince: min(0).UnixMilli(),
			SumWait: m(30), NWait: 2, SumService: m(15), NService: 2},
		{Service: "A", Issuer: "A", Counter: "c1", Status: queue.StatusNoShow, N: 1, MinWaitingSince: min(4).UnixMilli(),
			SumWait: m(26), NWait: 1},
		{Service: "B", Issuer: "B", Counter: "c2", Status: queue.StatusServing, N: 1, MinWaitingSince: min(1).UnixMilli(),
			SumWait: m(2), NWait: 1},
	}
	txView(t, s, func(ctx context.Context, tx queue.Tx) error {
		got, err := tx.Stats(ctx, queue.SiteDay{Site: "s1", Day: txDay})
		if err != nil {
			return err
		}
		sort.Slice(got, func(i, j int) bool {
			a, b := got[i], got[j]
			return a.Service+"\x00"+a.Counter+"\x00"+string(a.Status) < b.Service+"\x00"+b.Counter+"\x00"+string(b.Status)
		})
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Stats:\n got %+v\nwant %+v", got, want)
		}
		none, err := tx.Stats(ctx, queue.SiteDay{Site: "s1", Day: "1999-01-01"})
		if err != nil {
			return err
		}
		if len(none) != 0 {
			t.Errorf("Stats of an empty day = %+v", none)
		}
		return nil
	})
}

func txCounters(t *testing.T, s queue.Store) {
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		c, err := tx.Counter(ctx, queue.CounterKey{Site: "s1", ID: "c1"})
		if err != nil {
			return err
		}
		want := queue.CounterState{Site: "s1", ID: "c1", Mode: queue.CounterOpen}
		if c != want {
			t.Errorf("unwritten counter = %+v, want %+v", c, want)
		}
		return nil
	})
	states := []queue.CounterState{
		{Site: "s1", ID: "c2", Mode: queue.CounterPaused, Since: txBase},
		{Site: "s1", ID: "c1", Mode: queue.CounterOpen, TicketID: 42, Since: txBase.Add(time.Minute)},
		{Site: "s2", ID: "c1", Mode: queue.CounterClosed, Since: txBase},
	}
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		for _, c := range states {
			if err := tx.PutCounter(ctx, c); err != nil {
				return err
			}
		}
		return nil
	})
	// Overwrite one.
	states[1].TicketID, states[1].Since = 0, txBase.Add(2*time.Minute)
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error { return tx.PutCounter(ctx, states[1]) })
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		c, err := tx.Counter(ctx, queue.CounterKey{Site: "s1", ID: "c1"})
		if err != nil {
			return err
		}
		if c.Mode != states[1].Mode || c.TicketID != 0 || !c.Since.Equal(states[1].Since) {
			t.Errorf("Counter(c1) = %+v, want %+v", c, states[1])
		}
		list, err := tx.Counters(ctx, "s1")
		if err != nil {
			return err
		}
		if len(list) != 2 || list[0].ID != "c1" || list[1].ID != "c2" || list[1].Mode != queue.CounterPaused || !list[1].Since.Equal(txBase) {
			t.Errorf("Counters(s1) = %+v", list)
		}
		return nil
	})
}

// txCounterLock: two transactions of a counter never written before; the
// second reads the counter only after the first committed its ticket (on
// stores with row locks: the row is created to be locked; on SQLite the
// single writer orders them).
func txCounterLock(t *testing.T, s queue.Store) {
	locked, firstDone := make(chan struct{}), make(chan struct{})
	var second queue.CounterState
	var secondErr error
	go func() {
		defer close(firstDone)
		<-locked
		secondErr = s.Update(t.Context(), func(ctx context.Context, tx queue.Tx) (err error) {
			second, err = tx.Counter(ctx, queue.CounterKey{Site: "s1", ID: "c9"})
			return err
		})
	}()
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		c, err := tx.Counter(ctx, queue.CounterKey{Site: "s1", ID: "c9"})
		if err != nil {
			return err
		}
		if c.TicketID != 0 || c.Mode != queue.CounterOpen {
			t.Errorf("unwritten counter = %+v", c)
		}
		close(locked)
		// Give the second transaction time to reach its read.
		time.Sleep(300 * time.Millisecond)
		c.TicketID = 7
		return tx.PutCounter(ctx, c)
	})
	<-firstDone
	if secondErr != nil {
		t.Fatal(secondErr)
	}
	if second.TicketID != 7 {
		t.Errorf("second transaction read counter %+v while the first held it, want ticket 7", second)
	}
}

func txStreaks(t *testing.T, s queue.Store) {
	get := func() (a, b int) {
		txView(t, s, func(ctx context.Context, tx queue.Tx) error {
			var err error
			if a, err = tx.Streak(ctx, queue.ServiceKey{Site: "s1", Service: "A"}); err != nil {
				return err
			}
			b, err = tx.Streak(ctx, queue.ServiceKey{Site: "s1", Service: "B"})
			return err
		})
		return a, b
	}
	if a, b := get(); a != 0 || b != 0 {
		t.Errorf("unset streaks = %d, %d, want 0, 0", a, b)
	}
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		return tx.SetStreak(ctx, queue.ServiceKey{Site: "s1", Service: "A"}, 2)
	})
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		return tx.SetStreak(ctx, queue.ServiceKey{Site: "s1", Service: "B"}, 1)
	})
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		return tx.SetStreak(ctx, queue.ServiceKey{Site: "s1", Service: "A"}, 0)
	})
	if a, b := get(); a != 0 || b != 1 {
		t.Errorf("streaks = %d, %d, want 0, 1", a, b)
	}
}

func txEvents(t *testing.T, s queue.Store) {
	sites := []string{"s1", "s2", "s1", "s1", "s2", "s1"}
	var appended []queue.Event
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		for i, site := range sites {
			e := queue.Event{Site: site, Type: queue.EventIssued, TicketID: int64(i + 1), Number: fmt.Sprintf("A%03d", i),
				Service: "A", Class: queue.ClassNormal, Status: queue.StatusWaiting, Counter: "c1", Actor: "kiosk",
				Detail: "détail ✓", At: txBase.Add(time.Duration(i) * time.Second)}
			if err := appendEvent(ctx, tx, &e); err != nil {
				return err
			}
			appended = append(appended, e)
		}
		return nil
	})
	wantVersions := []int64{1, 1, 2, 3, 2, 4}
	for i, e := range appended {
		if e.Version != wantVersions[i] {
			t.Errorf("event %d (site %s) version %d, want %d", i, e.Site, e.Version, wantVersions[i])
		}
	}
	all := txEventsOf(t, s, queue.EventsQuery{Site: "s1"})
	if len(all) != 4 {
		t.Fatalf("Events(s1) = %d events, want 4", len(all))
	}
	for i, e := range all {
		w := appended[[]int{0, 2, 3, 5}[i]]
		if !e.At.Equal(w.At) {
			t.Errorf("event %d at %v, want %v", e.Version, e.At, w.At)
		}
		e.At, w.At = time.Time{}, time.Time{}
		if e != w {
			t.Errorf("event read back:\n got %+v\nwant %+v", e, w)
		}
	}
	if page := txEventsOf(t, s, queue.EventsQuery{Site: "s1", After: 1, Limit: 2}); len(page) != 2 || page[0].Version != 2 || page[1].Version != 3 {
		t.Errorf("Events(s1, after 1, limit 2) = %+v", page)
	}
	if rest := txEventsOf(t, s, queue.EventsQuery{Site: "s1", After: 4, Limit: 10}); len(rest) != 0 {
		t.Errorf("Events after the last = %+v", rest)
	}
	txView(t, s, func(ctx context.Context, tx queue.Tx) error {
		for site, want := range map[string]int64{"s1": 4, "s2": 2, "s3": 0} {
			v, err := tx.LastVersion(ctx, site)
			if err != nil {
				return err
			}
			if v != want {
				t.Errorf("LastVersion(%s) = %d, want %d", site, v, want)
			}
		}
		return nil
	})
	// A rolled back transaction leaves no gap.
	if err := s.Update(t.Context(), func(ctx context.Context, tx queue.Tx) error {
		if err := appendEvent(ctx, tx, &queue.Event{Site: "s1", Type: queue.EventCalled}); err != nil {
			return err
		}
		return queue.ErrNoneWaiting
	}); !errors.Is(err, queue.ErrNoneWaiting) {
		t.Fatalf("Update returned %v, want fn's error", err)
	}
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		e := queue.Event{Site: "s1", Type: queue.EventCalled}
		if err := appendEvent(ctx, tx, &e); err != nil {
			return err
		}
		if e.Version != 5 {
			t.Errorf("version after a rollback = %d, want 5", e.Version)
		}
		return nil
	})
}

// txEventsConcurrent: many transactions append at once; versions come out
// 1..N with no gap and no repeat.
func txEventsConcurrent(t *testing.T, s queue.Store) {
	const workers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				err := s.Update(t.Context(), func(ctx context.Context, tx queue.Tx) error {
					return appendEvent(ctx, tx, &queue.Event{Site: "s1", Type: queue.EventIssued, Actor: fmt.Sprintf("w%d-%d", w, i)})
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("append event: %v", err)
	}
	all := txEventsOf(t, s, queue.EventsQuery{Site: "s1"})
	if len(all) != workers*each {
		t.Fatalf("%d events, want %d", len(all), workers*each)
	}
	for i, e := range all {
		if e.Version != int64(i+1) {
			t.Fatalf("event %d has version %d", i, e.Version)
		}
	}
}

func txRequests(t *testing.T, s queue.Store) {
	result := []byte{0, 1, 2, 0xff, 'x'}
	k1, k2 := queue.RequestKey{Device: "kiosk-1", Key: "k1"}, queue.RequestKey{Device: "kiosk-1", Key: "k2"}
	lookup := func(ctx context.Context, tx queue.Tx, k queue.RequestKey) (queue.StoredRequest, bool, error) {
		got, err := tx.LookupRequests(ctx, []queue.RequestKey{k})
		r, ok := got[k]
		return r, ok, err
	}
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		if _, found, err := lookup(ctx, tx, k1); err != nil || found {
			t.Errorf("LookupRequests before save: found %v, err %v", found, err)
		}
		if err := tx.SaveRequests(ctx, []queue.SavedRequest{{RequestKey: k1, Op: "issue", Result: result, AtMs: txBase.UnixMilli()}}); err != nil {
			return err
		}
		return tx.SaveRequests(ctx, []queue.SavedRequest{{RequestKey: k2, Op: "call", AtMs: txBase.UnixMilli()}})
	})
	var dupErr error
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		r, found, err := lookup(ctx, tx, k1)
		if err != nil {
			return err
		}
		if !found || r.Op != "issue" || !reflect.DeepEqual(r.Result, result) {
			t.Errorf("LookupRequests = %+v, %v; want issue, %v, true", r, found, result)
		}
		r, found, err = lookup(ctx, tx, k2)
		if err != nil {
			return err
		}
		if !found || r.Op != "call" || len(r.Result) != 0 {
			t.Errorf("LookupRequests(k2) = %+v, %v; want call, empty, true", r, found)
		}
		if _, found, _ := lookup(ctx, tx, queue.RequestKey{Device: "kiosk-2", Key: "k1"}); found {
			t.Errorf("the key of kiosk-1 was found for kiosk-2")
		}
		if err := tx.Savepoint(ctx, "req"); err != nil {
			return err
		}
		dupErr = tx.SaveRequests(ctx, []queue.SavedRequest{{RequestKey: k1, Op: "issue", Result: result, AtMs: txBase.UnixMilli()}})
		return tx.RollbackTo(ctx, "req")
	})
	if !errors.Is(dupErr, queue.ErrDuplicate) {
		t.Errorf("second SaveRequests error = %v, want ErrDuplicate", dupErr)
	}
}

// txRequestBatches: a group commit's idempotency keys read and saved in
// one statement each.
func txRequestBatches(t *testing.T, s queue.Store) {
	k := func(dev, key string) queue.RequestKey { return queue.RequestKey{Device: dev, Key: key} }
	saves := []queue.SavedRequest{
		{RequestKey: k("kiosk-1", "a"), Op: "issue", Result: []byte{1, 2}, AtMs: 1},
		{RequestKey: k("kiosk-2", "a"), Op: "call", Result: nil, AtMs: 2},
		{RequestKey: k("kiosk-1", "b"), Op: "issue", Result: []byte("ü"), AtMs: 3},
	}
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		if got, err := tx.LookupRequests(ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("LookupRequests(nil) = %v, %v", got, err)
		}
		if err := tx.SaveRequests(ctx, nil); err != nil {
			t.Errorf("SaveRequests(nil) = %v", err)
		}
		return tx.SaveRequests(ctx, saves)
	})
	var dupErr error
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		got, err := tx.LookupRequests(ctx, []queue.RequestKey{k("kiosk-1", "a"), k("kiosk-1", "b"), k("kiosk-2", "a"), k("kiosk-2", "b"), k("kiosk-1", "a")})
		if err != nil {
			return err
		}
		want := map[queue.RequestKey]queue.StoredRequest{
			k("kiosk-1", "a"): {Op: "issue", Result: []byte{1, 2}},
			k("kiosk-2", "a"): {Op: "call", Result: []byte{}},
			k("kiosk-1", "b"): {Op: "issue", Result: []byte("ü")},
		}
		if len(got) != len(want) {
			t.Errorf("LookupRequests found %d keys, want %d: %v", len(got), len(want), got)
		}
		for key, w := range want {
			g, ok := got[key]
			if !ok || g.Op != w.Op || string(g.Result) != string(w.Result) {
				t.Errorf("LookupRequests[%v] = %+v, %v; want %+v", key, g, ok, w)
			}
		}
		if err := tx.Savepoint(ctx, "batch"); err != nil {
			return err
		}
		dupErr = tx.SaveRequests(ctx, []queue.SavedRequest{{RequestKey: k("kiosk-3", "new"), Op: "issue"}, saves[1]})
		return tx.RollbackTo(ctx, "batch")
	})
	if !errors.Is(dupErr, queue.ErrDuplicate) {
		t.Errorf("SaveRequests with a saved key: %v, want ErrDuplicate", dupErr)
	}
	txView(t, s, func(ctx context.Context, tx queue.Tx) error {
		got, err := tx.LookupRequests(ctx, []queue.RequestKey{k("kiosk-3", "new")})
		if _, found := got[k("kiosk-3", "new")]; err != nil || found {
			t.Errorf("a refused batch left kiosk-3's key (found %v, err %v)", found, err)
		}
		return nil
	})
}

func txSavepoint(t *testing.T, s queue.Store) {
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		if err := tx.InsertTicket(ctx, txTicket("A", 1, queue.ClassNormal, 20, 1)); err != nil {
			return err
		}
		if err := tx.Savepoint(ctx, "r1"); err != nil {
			return err
		}
		if err := tx.InsertTicket(ctx, txTicket("A", 2, queue.ClassNormal, 20, 2)); err != nil {
			return err
		}
		if err := appendEvent(ctx, tx, &queue.Event{Site: "s1", Type: queue.EventIssued}); err != nil {
			return err
		}
		if err := tx.RollbackTo(ctx, "r1"); err != nil {
			return err
		}
		if err := tx.Release(ctx, "r1"); err != nil {
			return err
		}
		if err := tx.Savepoint(ctx, "r2"); err != nil {
			return err
		}
		if err := tx.InsertTicket(ctx, txTicket("A", 3, queue.ClassNormal, 20, 3)); err != nil {
			return err
		}
		e := queue.Event{Site: "s1", Type: queue.EventIssued}
		if err := appendEvent(ctx, tx, &e); err != nil {
			return err
		}
		if e.Version != 1 {
			t.Errorf("version after a rolled back savepoint = %d, want 1", e.Version)
		}
		return tx.Release(ctx, "r2")
	})
	txView(t, s, func(ctx context.Context, tx queue.Tx) error {
		got, err := tx.Find(ctx, queue.Filter{Site: "s1"})
		if err != nil {
			return err
		}
		if want := []string{"A001", "A003"}; !reflect.DeepEqual(txNumbers(got), want) {
			t.Errorf("tickets after savepoints = %v, want %v", txNumbers(got), want)
		}
		return nil
	})
	for _, bad := range []string{"", "1a", "a b", "x;DROP TABLE tickets", "sp-1"} {
		err := s.Update(t.Context(), func(ctx context.Context, tx queue.Tx) error { return tx.Savepoint(ctx, bad) })
		if err == nil {
			t.Errorf("Savepoint(%q) accepted", bad)
		}
	}
}

func txUpdateRetries(t *testing.T, s queue.Store) {
	calls := 0
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		calls++
		if _, err := tx.NextSeq(ctx, queue.DayKey{Site: "s1", Service: "A", Day: txDay}, 1); err != nil {
			return err
		}
		if calls == 1 {
			return fmt.Errorf("test: %w", queue.ErrConflict)
		}
		return nil
	})
	if calls != 2 {
		t.Errorf("fn ran %d times after one conflict, want 2", calls)
	}
	// The first attempt was rolled back: its number was not used.
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		n, err := tx.NextSeq(ctx, queue.DayKey{Site: "s1", Service: "A", Day: txDay}, 1)
		if n != 2 {
			t.Errorf("NextSeq after a retried transaction = %d, want 2", n)
		}
		return err
	})
	calls = 0
	err := s.Update(t.Context(), func(ctx context.Context, tx queue.Tx) error {
		calls++
		return fmt.Errorf("test: %w", queue.ErrConflict)
	})
	if !errors.Is(err, queue.ErrConflict) || calls < 2 || calls > 20 {
		t.Errorf("always-conflicting Update: %d calls, error %v; want a bounded retry then ErrConflict", calls, err)
	}
	calls = 0
	err = s.Update(t.Context(), func(ctx context.Context, tx queue.Tx) error {
		calls++
		return queue.ErrServiceFull
	})
	if !errors.Is(err, queue.ErrServiceFull) || calls != 1 {
		t.Errorf("Update with a domain error: %d calls, error %v; want 1 call and the error", calls, err)
	}
}

func txUpdateRollsBack(t *testing.T, s queue.Store) {
	err := s.Update(t.Context(), func(ctx context.Context, tx queue.Tx) error {
		if err := tx.InsertTicket(ctx, txTicket("A", 1, queue.ClassNormal, 20, 1)); err != nil {
			return err
		}
		return queue.ErrBadRequest
	})
	if !errors.Is(err, queue.ErrBadRequest) {
		t.Fatalf("Update error = %v, want fn's", err)
	}
	if got := txFound(t, s, queue.Filter{Site: "s1"}); len(got) != 0 {
		t.Errorf("a rolled back insert left %v", txNumbers(got))
	}
	// A panic in fn rolls back and frees the connection.
	func() {
		defer func() { _ = recover() }()
		_ = s.Update(t.Context(), func(ctx context.Context, tx queue.Tx) error { panic("boom") })
	}()
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		return tx.InsertTicket(ctx, txTicket("A", 1, queue.ClassNormal, 20, 1))
	})
}

// txConcurrentIssue: clients allocate numbers and insert tickets at once,
// as kiosks do at opening time; every number is issued exactly once.
func txConcurrentIssue(t *testing.T, s queue.Store) {
	const clients, each = 8, 15
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]int{}
	errs := make(chan error, clients)
	for c := range clients {
		wg.Go(func() {
			for i := range each {
				service := []string{"A", "B"}[(c+i)%2]
				var number string
				err := s.Update(t.Context(), func(ctx context.Context, tx queue.Tx) error {
					seq, err := tx.NextSeq(ctx, queue.DayKey{Site: "s1", Service: service, Day: txDay}, 1)
					if err != nil {
						return err
					}
					tk := txTicket(service, seq, queue.ClassNormal, 20, int64(seq))
					if err := tx.InsertTicket(ctx, tk); err != nil {
						return err
					}
					number = tk.Number
					return appendEvent(ctx, tx, issuedEvent(tk))
				})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				seen[number]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("issue: %v", err)
	}
	if len(seen) != clients*each {
		t.Errorf("%d distinct numbers, want %d", len(seen), clients*each)
	}
	for n, k := range seen {
		if k != 1 {
			t.Errorf("number %s issued %d times", n, k)
		}
	}
	if ss, ok := s.(txSQLStore); ok {
		r, err := ss.Check(t.Context(), sqlstore.CheckOpts{})
		if err != nil {
			t.Fatal(err)
		}
		if !r.OK() {
			t.Errorf("Check after concurrent issue: %v", r)
		}
	}
}

func txViewReadOnly(t *testing.T, s queue.Store) {
	txInsert(t, s, txTicket("A", 1, queue.ClassNormal, 20, 1))
	txView(t, s, func(ctx context.Context, tx queue.Tx) error {
		// Locks asked for in a read-only transaction are not an error.
		tk, err := tx.Head(ctx, queue.HeadQuery{Site: "s1", Day: txDay, Service: "A", Lock: true})
		if err != nil {
			return err
		}
		if tk == nil || tk.Number != "A001" {
			t.Errorf("Head in View = %+v", tk)
		}
		if _, err := tx.Counter(ctx, queue.CounterKey{Site: "s1", ID: "c1"}); err != nil {
			return err
		}
		return nil
	})
	if err := s.View(t.Context(), func(ctx context.Context, tx queue.Tx) error {
		return tx.InsertTicket(ctx, txTicket("A", 2, queue.ClassNormal, 20, 2))
	}); err == nil {
		t.Errorf("View allowed a write")
	}
	if err := s.View(t.Context(), func(ctx context.Context, tx queue.Tx) error { return queue.ErrNotFound }); !errors.Is(err, queue.ErrNotFound) {
		t.Errorf("View error = %v, want fn's", err)
	}
}

// txEventBatches: a batch's events take consecutive versions of their site
// in order, after events appended one by one, and read back whole.
func txEventBatches(t *testing.T, s queue.Store) {
	at := txBase
	txUpdate(t, s, func(ctx context.Context, tx queue.Tx) error {
		if err := appendEvent(ctx, tx, &queue.Event{Site: "s1", Type: queue.EventIssued, Number: "A001", At: at}); err != nil {
			return err
		}
		if err := tx.AppendEvents(ctx, "s1", nil); err != nil {
			return err
		}
		batch := []*queue.Event{
			{Type: queue.EventCalled, TicketID: 7, Number: "A001", Service: "A", Class: queue.ClassVIP, Status: queue.StatusCalled, Counter: "5", Actor: "keypad-5", Detail: "d", At: at, CallCount: 1,
				Issuer: "B", Day: txDay, From: queue.StatusWaiting, FromQueue: "C", FromCounter: "4", Waited: 90 * time.Second, ServiceTime: 2500 * time.Millisecond},
			{Type: queue.EventRecalled, TicketID: 7, Number: "A001", Status: queue.StatusCalled, Counter: "5", At: at, CallCount: 2},
		}
		if err := tx.AppendEvents(ctx, "s1", batch); err != nil {
			return err
		}
		if batch[0].Version != 2 || batch[1].Version != 3 || batch[0].Site != "s1" {
			t.Errorf("batch versions %d, %d (site %q), want 2, 3", batch[0].Version, batch[1].Version, batch[0].Site)
		}
		other := []*queue.Event{{Type: queue.EventIssued, Number: "B001", At: at}}
		if err := tx.AppendEvents(ctx, "s2", other); err != nil {
			return err
		}
		if other[0].Version != 1 {
			t.Errorf("first event of s2 has version %d, want 1", other[0].Version)
		}
		return nil
	})
	evs := txEventsOf(t, s, queue.EventsQuery{Site: "s1"})
	if len(evs) != 3 {
		t.Fatalf("%d events of s1, want 3", len(evs))
	}
	got := evs[1]
	if got.Version != 2 || got.Type != queue.EventCalled || got.TicketID != 7 || got.Class != queue.ClassVIP ||
		got.Counter != "5" || got.Actor != "keypad-5" || got.Detail != "d" || got.CallCount != 1 || !got.At.Equal(at) ||
		got.Issuer != "B" || got.Day != txDay || got.From != queue.StatusWaiting || got.FromQueue != "C" || got.FromCounter != "4" ||
		got.Waited != 90*time.Second || got.ServiceTime != 2500*time.Millisecond {
		t.Errorf("event 2 read back = %+v", got)
	}
	if evs[2].CallCount != 2 || evs[2].Type != queue.EventRecalled {
		t.Errorf("event 3 read back = %+v", evs[2])
	}
	if v := txRead(t, s, func(ctx context.Context, tx queue.Tx) (int64, error) { return tx.LastVersion(ctx, "s1") }); v != 3 {
		t.Errorf("LastVersion(s1) = %d, want 3", v)
	}
}

// appendEvent appends one event as a batch of one.
func appendEvent(ctx context.Context, tx queue.Tx, e *queue.Event) error {
	return tx.AppendEvents(ctx, e.Site, []*queue.Event{e})
}
