package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/postgres"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// Issue 21: a PostgreSQL primary with a streaming standby (pg_basebackup
// -R), 30 kiosks and 5 keypads on a daemon given both hosts with
// target_session_attrs=read-write; the primary is killed or frozen and the
// standby promoted 2 s later, as a failover tool would. Every ticket a
// kiosk printed is checked against the promoted standby.

// promoteAfter is when the failover tool promotes the standby, after the
// primary failed; flowAgain is by when every kiosk must be printing again.
const (
	promoteAfter = 2 * time.Second
	flowAgain    = 5 * time.Second
)

// pairFailover is the failover of p: fail, then the standby promoted.
func pairFailover(p *storetest.PGPair, fail func(t testing.TB)) storetest.Failover {
	return storetest.Failover{
		DB:           sharedOn(p.DSN()),
		Fail:         fail,
		Recover:      p.Promote,
		RecoverAfter: promoteAfter,
		Survivor: func(t *testing.T) *sqlstore.Store {
			return storetest.At(t, postgres.Open, p.StandbyDSN(), postgres.Opts{NoMigrate: true}).Store
		},
	}
}

// noneLostOrTwice asserts issue 21's "Done when" of a failover that must
// lose nothing: no number given to two people, no acknowledged ticket
// missing, and every kiosk printing again within flowAgain of the failure.
func noneLostOrTwice(t *testing.T, r storetest.FailoverResult) {
	t.Helper()
	r.NoneTwice(t)
	r.NoneLost(t)
	r.Flowing(t, flowAgain)
}

// TestFailoverPair runs the failovers of a pair (StartPGPair) as
// subtests side by side, each on a pair of its own, but one failover at a
// time: each takes its turn (failoverTurn) once its pair streams, for the
// load, the failure and what it times, so that no two timed runs share
// the CPU; what they overlap is starting and stopping the pairs
// (initdb, pg_basebackup, the servers' start and shutdown: about 6 s a
// pair, mostly waiting on the servers), which ran one after the other
// when they were five top-level tests. The parent is not parallel: the
// store's CPU-bound suites do not run beside the timed runs either.
func TestFailoverPair(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T)
	}{
		{"synchronous", testFailoverSynchronous},
		{"async behind", testFailoverAsyncBehind},
		{"frozen primary", testFailoverFrozenPrimary},
		{"read only", testFailoverReadOnly},
		{"stuck commit", testFailoverStuckCommit},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t)
		})
	}
}

// failoverTurn is held by the one subtest of TestFailoverPair whose timed
// part runs.
var failoverTurn sync.Mutex

// startPair starts a pair with o, then waits for the test's turn to fail
// it, which ends with the test (before the pair stops).
func startPair(t *testing.T, o storetest.PGPairOpts) *storetest.PGPair {
	t.Helper()
	p := storetest.StartPGPair(t, o)
	waited := time.Now()
	failoverTurn.Lock()
	// Registered after StartPGPair's cleanup, so run before it: the turn
	// passes on while this pair stops.
	t.Cleanup(failoverTurn.Unlock)
	if d := time.Since(waited); d > 100*time.Millisecond {
		t.Logf("waited %.1fs for the turn to fail the pair", d.Seconds())
	}
	return p
}

// testFailoverSynchronous: synchronous replication, the primary killed
// with -9 under load: nothing acknowledged is lost, nothing is given twice,
// and tickets flow again within 5 s.
func testFailoverSynchronous(t *testing.T) { failSynchronous(t, (*storetest.PGPair).Kill9Primary) }

// failSynchronous runs the daemon under load on a pair with synchronous
// replication, fails its primary with fail and promotes the standby:
// nothing may be lost or given twice.
func failSynchronous(t *testing.T, fail func(p *storetest.PGPair, t testing.TB)) {
	p := startPair(t, storetest.PGPairOpts{Synchronous: true})
	r := storetest.RunFailover(t, pairFailover(p, func(t testing.TB) { fail(p, t) }))
	r.Log(t)
	noneLostOrTwice(t, r)
}

// testFailoverAsyncBehind: asynchronous replication with the standby about
// 1 s behind (it stops receiving WAL 1 s before the primary is killed, as
// a standby lagging under load has not received the last second): what
// the primary acknowledged in that second is gone from the promoted
// standby. No number may be given to two people all the same, and every
// acknowledged ticket must be back in the database with its number or
// listed as lost by the daemon.
func testFailoverAsyncBehind(t *testing.T) {
	p := startPair(t, storetest.PGPairOpts{})
	var behind int64
	f := pairFailover(p, p.Kill9Primary)
	f.Observe = func(t testing.TB) { behind = p.WALBehind(t) }
	f.Prelude = func(t testing.TB) { p.DetachStandby(t) }
	f.PreludeFor = time.Second
	r := storetest.RunFailover(t, f)
	r.Log(t)
	atRisk := r.AckedBetween(r.PreludeAt, 0)
	t.Logf("the standby missed %d bytes of WAL: %d tickets acknowledged while it was detached (%.2fs before the kill)", behind, atRisk, -r.PreludeAt.Seconds())
	// The harness must really have lost acknowledged work, else the test
	// proves nothing.
	if behind <= 0 || atRisk == 0 {
		t.Fatalf("the standby was not behind at the kill (%d bytes of WAL, %d tickets acknowledged meanwhile)", behind, atRisk)
	}
	r.NoneTwice(t)
	// Every acknowledged ticket is back with its number, or listed as lost
	// by the daemon's repair, which check prints.
	if !r.Check.OK() {
		t.Errorf("check after the repair:\n%s", r.Check)
	}
	if len(r.Check.Losses) == 0 {
		t.Errorf("check shows no record of the lost work:\n%s", r.Check)
	}
	var listed []string
	for _, l := range r.Check.Losses {
		t.Logf("loss record: %s", l)
		listed = append(listed, l.Lost...)
	}
	for _, l := range r.Lost {
		if !strings.Contains(strings.Join(listed, "\n"), " "+l.Number+" ") {
			t.Errorf("acknowledged ticket %s is missing and not listed as lost", l.Number)
		}
	}
}

// testFailoverFrozenPrimary: the primary hangs (SIGSTOP: its port still
// accepts connections, nothing answers) and the standby is promoted 2 s
// later; with the DSN's default options, tickets flow again within 5 s of
// the freeze, and nothing is lost or given twice (synchronous replication).
func testFailoverFrozenPrimary(t *testing.T) { failSynchronous(t, (*storetest.PGPair).StopPrimary) }

// testFailoverReadOnly: the primary turns read-only under the daemon's
// pooled connections (it still answers, every write fails with 25006) and
// the standby is promoted; the daemon must reach the writable node within
// the store deadline (3 s) and a second of the promotion, losing and
// doubling nothing (synchronous replication). Usually it takes 0.2 s; a
// commit in flight on the old primary when the standby is promoted waits
// for that standby's acknowledgement until the deadline, and its kiosk
// retries then (CI saw +3.1 s).
func testFailoverReadOnly(t *testing.T) {
	p := startPair(t, storetest.PGPairOpts{Synchronous: true})
	f := pairFailover(p, func(t testing.TB) {
		p.ReadOnlyPrimary(t)
		p.Promote(t)
	})
	f.Recover = nil
	r := storetest.RunFailover(t, f)
	r.Log(t)
	r.NoneTwice(t)
	r.NoneLost(t)
	r.Flowing(t, 4*time.Second) // the default store deadline, 3 s, and a second
}

// testFailoverStuckCommit: synchronous replication whose standby stopped
// receiving, so that a COMMIT on the primary waits for an acknowledgement;
// then the primary turns read-only and the standby is promoted, as a
// failover tool demotes one and promotes the other. The COMMIT in flight
// must end as read-only soon after (the store asks where the writable host
// is once a COMMIT has waited sqlstore.StuckCommit), not at its deadline,
// and the next write lands on the promoted standby.
func testFailoverStuckCommit(t *testing.T) {
	p := startPair(t, storetest.PGPairOpts{Synchronous: true})
	s, err := postgres.Open(t.Context(), p.DSN(), postgres.Opts{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	write := func(d time.Duration) error {
		ctx, cancel := context.WithTimeout(t.Context(), d)
		defer cancel()
		return s.Update(ctx, func(ctx context.Context, tx queue.Tx) error {
			_, err := tx.NextSeq(ctx, queue.DayKey{Site: "s", Service: "A", Day: "2026-12-01"}, 1)
			return err
		})
	}
	if err := write(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	p.DetachStandby(t)
	const deadline = 20 * time.Second
	start := time.Now()
	errc := make(chan error, 1)
	go func() { errc <- write(deadline) }()
	time.Sleep(2 * sqlstore.StuckCommit) // the COMMIT waits, the primary still the primary
	select {
	case err := <-errc:
		t.Fatalf("the write on a primary without its synchronous standby returned: %v", err)
	default:
	}
	p.ReadOnlyPrimary(t)
	p.Promote(t)
	promoted := time.Since(start)
	err = <-errc
	took := time.Since(start)
	t.Logf("COMMIT stuck from +0s, standby promoted at +%.2fs, COMMIT ended at +%.2fs: %v", promoted.Seconds(), took.Seconds(), err)
	if !errors.Is(err, queue.ErrReadOnly) {
		t.Errorf("stuck COMMIT ended with %v, want queue.ErrReadOnly", err)
	}
	if took-promoted > 2*time.Second {
		t.Errorf("stuck COMMIT ended %.2fs after the promotion, want within 2 s", (took - promoted).Seconds())
	}
	if err := write(5 * time.Second); err != nil {
		t.Fatalf("write after the promotion: %v", err)
	}
	var port string
	if err := s.DB().QueryRowContext(t.Context(), "SELECT inet_server_port()::text").Scan(&port); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(p.Standby, ":"+port) {
		t.Errorf("writing on port %s, want the promoted standby %s", port, p.Standby)
	}
}
