package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// The cases below make a real database server end a transaction of the
// engine in the middle, where the fault wrapper only pretends: a deadlock
// the server resolves by killing the engine's transaction, a query killed
// while it waits for a lock, a connection terminated between two
// statements. Each checks that the request still succeeds once, through a
// retry of the whole transaction, and that nothing of the killed attempt
// survived (no orphan event, no second call, counters in agreement).

// sqlStore is what the server cases need of a store: its dialect and its
// pool, for a second connection that takes locks and kills.
type sqlStore interface {
	queue.Store
	txSQLStore
}

// overdue sets up site hq with M001 waiting past its service's maximum
// wait, so counter 7's call-next claims it through the maximum-wait head,
// which reads without locking: the claim's UpdateTicket is then the
// statement that waits for a lock another transaction holds on it.
func overdue(t *testing.T, s queue.Store) (*FaultStore, *faultRun, queue.Ticket) {
	t.Helper()
	fs := NewFaultStore(s)
	r := newFaultRun(t, fs, "hq")
	tk, err := r.e.Issue(t.Context(), queue.IssueRequest{Request: r.req("kiosk", "m1"), Service: "M"})
	if err != nil {
		t.Fatalf("issue M: %v", err)
	}
	// Counter 7's row exists and is committed, so a second connection can
	// lock it.
	if _, err := r.e.Resume(t.Context(), queue.CounterRequest{Request: r.req("keypad", "open"), Counter: "7"}); err != nil {
		t.Fatalf("open counter 7: %v", err)
	}
	r.clock.Add(31 * time.Minute)
	return fs, r, tk
}

// ClaimBlocked holds a lock on an overdue ticket's row from a second
// connection (x, which first writes 200 rows so InnoDB, choosing the
// smaller transaction as a deadlock's victim, picks the engine's), calls
// next at counter 7, and once the claim waits for the row runs during on
// x; then x rolls back. The call must return that ticket once.
func ClaimBlocked(t *testing.T, s sqlStore, during func(ctx context.Context, x *sql.Tx) error) {
	ctx := t.Context()
	fs, r, want := overdue(t, s)
	d, db := s.Dialect(), s.DB()
	if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS scratch_rows (n INTEGER)"); err != nil {
		t.Fatal(err)
	}
	x, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = x.Rollback() }()
	for i := range 200 {
		if _, err := x.ExecContext(ctx, d.Rebind("INSERT INTO scratch_rows (n) VALUES (?)"), i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := x.ExecContext(ctx, d.Rebind("UPDATE tickets SET sort_key = sort_key WHERE id = ?"), want.ID); err != nil {
		t.Fatal(err)
	}
	var (
		once    sync.Once
		claims  int
		errc    = make(chan error, 1)
		started = make(chan struct{})
	)
	f := &Fault{Count: true, At: AtCommit, Before: func(_ int, call string) {
		if call != "UpdateTicket" {
			return
		}
		claims++
		once.Do(func() {
			go func() {
				close(started)
				time.Sleep(300 * time.Millisecond) // the claim is waiting for x's lock by now
				err := during(ctx, x)
				if rerr := x.Rollback(); err == nil && rerr != nil {
					err = rerr
				}
				errc <- err
			}()
		})
	}}
	// A kiosk's ticket goes first in the same batch: if anything ran after
	// the server killed the transaction, in autocommit, its ticket would be
	// gone and its event committed.
	waiting, release := fs.Hold()
	defer release()
	go func() {
		_, _ = r.e.Pause(ctx, queue.CounterRequest{Request: r.req("blocker", "pause"), Counter: "6"})
	}()
	<-waiting
	fs.Arm(f)
	var kiosk queue.Ticket
	var kerr error
	var wg sync.WaitGroup
	wg.Go(func() {
		kiosk, kerr = r.e.Issue(ctx, queue.IssueRequest{Request: r.req("kiosk", "a1"), Service: "A"})
	})
	time.Sleep(20 * time.Millisecond)
	var got queue.Ticket
	wg.Go(func() {
		got, err = r.e.CallNext(ctx, queue.CounterRequest{Request: r.req("keypad", "n1"), Counter: "7"})
	})
	time.Sleep(100 * time.Millisecond)
	release()
	wg.Wait()
	if kerr != nil {
		t.Errorf("the kiosk in the same batch: %v", kerr)
	}
	select {
	case <-started:
		if derr := <-errc; derr != nil {
			t.Errorf("the second connection's part: %v", derr)
		}
	default:
		t.Fatalf("the claim never ran (call next: %v)", err)
	}
	if err != nil {
		t.Fatalf("call next at 7 after the server killed its first attempt: %v", err)
	}
	if got.Number != want.Number {
		t.Errorf("call next at 7 called %s, want %s", got.Number, want.Number)
	}
	if claims < 2 {
		t.Errorf("the claim ran %d times; want the killed attempt and its retry", claims)
	}
	for _, v := range fs.Violations() {
		t.Error(v)
	}
	checkSiteAgrees(t, "claim blocked", s, "hq", []queue.Ticket{kiosk, got}, []error{kerr, err})
}

// ClaimDeadlock makes the engine's claim one side of a real deadlock: x
// holds the ticket's row and asks for counter 7's row, which the engine's
// transaction holds while it waits for the ticket.
func ClaimDeadlock(t *testing.T, s sqlStore) {
	ClaimBlocked(t, s, func(ctx context.Context, x *sql.Tx) error {
		var mode string
		q := s.Dialect().Rebind("SELECT mode FROM counters WHERE site = ? AND id = ? FOR UPDATE")
		if err := x.QueryRowContext(ctx, q, "hq", "7").Scan(&mode); err != nil {
			return fmt.Errorf("lock counter 7 (x should have won the deadlock): %w", err)
		}
		return nil
	})
}

// KillBetweenStatements ends the engine's connection from outside while a
// batch of kiosks' tickets is open, just before its call named at (e.g.
// "AppendEvents": the tickets are inserted, the events not yet), with kill
// run on a second connection. Every kiosk must get its ticket, once.
func KillBetweenStatements(t *testing.T, s sqlStore, at string, kill func(ctx context.Context, db *sql.DB) error) {
	ctx := t.Context()
	fs := NewFaultStore(s)
	r := newFaultRun(t, fs, "hq")
	r.setup(ctx)
	var killed bool
	var kerr error
	f := &Fault{Count: true, At: AtCommit, Before: func(_ int, call string) {
		if call == at && !killed {
			killed = true
			kerr = kill(ctx, s.DB())
		}
	}}
	got, errs := r.batch(ctx, f)
	if !killed {
		t.Fatalf("the batch never reached %s", at)
	}
	if kerr != nil {
		t.Fatalf("kill before %s: %v", at, kerr)
	}
	for i, err := range errs {
		b := faultBatch[i]
		if b.refused != nil {
			continue
		}
		if err != nil {
			t.Errorf("%s after the connection was killed: %v", b.name, err)
		}
	}
	for _, v := range fs.Violations() {
		t.Error(v)
	}
	checkSiteAgrees(t, "killed before "+at, s, "hq", got, errs)
}

// BurstThrough sends 120 kiosks' tickets with break applied to the store
// (a full disk, a read-only file), where some or all fail, then repair,
// then retries the failed ones with the same keys: each kiosk must end with
// one ticket of its own, and events, tickets and counters must agree.
func BurstThrough(t *testing.T, s queue.Store, brk, repair func()) {
	ctx := t.Context()
	r := newFaultRun(t, NewFaultStore(s), "hq")
	const kiosks = 120
	issue := func(i int) (queue.Ticket, error) {
		return r.e.Issue(ctx, queue.IssueRequest{Request: r.req(fmt.Sprintf("kiosk%d", i), "p1"), Service: "A"})
	}
	got := make([]queue.Ticket, kiosks)
	errs := make([]error, kiosks)
	brk()
	var wg sync.WaitGroup
	for i := range kiosks {
		wg.Add(1)
		go func() { defer wg.Done(); got[i], errs[i] = issue(i) }()
	}
	wg.Wait()
	repair()
	failed := 0
	for i, err := range errs {
		if err == nil {
			continue
		}
		failed++
		if !retryable(err) {
			t.Errorf("kiosk %d while the store was broken: %v; want a retryable error", i, err)
		}
		if got[i], errs[i] = issue(i); errs[i] != nil {
			t.Errorf("kiosk %d after the repair: %v", i, errs[i])
		}
	}
	if failed == 0 {
		t.Fatal("no request failed while the store was broken: the case proved nothing")
	}
	t.Logf("%d of %d kiosks failed while the store was broken, and got their ticket on retry", failed, kiosks)
	seen := map[string]bool{}
	for i, tk := range got {
		if seen[tk.Number] {
			t.Errorf("kiosk %d got %s, which another kiosk has", i, tk.Number)
		}
		seen[tk.Number] = true
	}
	checkSiteAgrees(t, "burst through", s, "hq", nil, nil)
}
