package notify_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// claimAll claims every message due at now, held for a minute.
func claimAll(t *testing.T, s *sqlstore.Store, now time.Time) []sqlstore.OutboxMessage {
	t.Helper()
	ms, err := s.ClaimOutbox(t.Context(), sqlstore.OutboxClaim{Now: now, Lease: time.Minute, N: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestOutboxRows: every event a route takes gets a row per receiver in
// its transaction, with one stable id per event and its JSON; an event no
// route takes gets none; a transaction that rolls back leaves none, and
// one the database aborted and the store retried leaves one set.
func TestOutboxRows(t *testing.T) {
	each(t, func(t *testing.T, open func(sqlstore.Opts) *sqlstore.Store) {
		s := open(sqlstore.Opts{Outbox: routes(map[string][]string{"calls": {"CALLED"}, "all": {"*"}, "bookings": nil})})
		fs := storetest.NewFaultStore(s)
		clock := storetest.NewClock(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
		e, err := queue.New(queue.Opts{Store: fs, Sites: []queue.Site{storetest.TestSite()}, Clock: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close(context.Background()) })
		r := queue.Request{Site: "hq", Device: "kiosk-1"}
		if _, err := storetest.Do(t.Context(), e, r, "issue", "A"); err != nil {
			t.Fatal(err)
		}
		r.Device = "keypad-1"
		if _, err := storetest.Do(t.Context(), e, r, "next", "1"); err != nil {
			t.Fatal(err)
		}
		ms := claimAll(t, s, clock.Now())
		type row struct {
			receiver string
			version  int64
			typ      queue.EventType
		}
		var got []row
		ids := map[int64]string{}
		for _, m := range ms {
			got = append(got, row{m.Receiver, m.Version, m.Type})
			if id, seen := ids[m.Version]; seen && id != m.EventID {
				t.Errorf("v%d: event ids %s and %s: want one per event", m.Version, id, m.EventID)
			}
			ids[m.Version] = m.EventID
			var body map[string]any
			if err := json.Unmarshal(m.Body, &body); err != nil {
				t.Fatalf("body %s: %v", m.Body, err)
			}
			if body["id"] != m.EventID || body["type"] != string(m.Type) || body["site"] != "hq" ||
				body["version"] != float64(m.Version) || body["number"] != "A001" || m.Attempt != 1 {
				t.Errorf("message %+v: body %s", m, m.Body)
			}
		}
		slices.SortFunc(got, func(a, b row) int {
			return cmp.Or(cmp.Compare(a.version, b.version), cmp.Compare(a.receiver, b.receiver))
		})
		want := []row{{"all", 1, queue.EventIssued}, {"all", 2, queue.EventCalled}, {"calls", 2, queue.EventCalled}}
		if !slices.Equal(got, want) {
			t.Errorf("outbox rows = %v, want %v", got, want)
		}
		if ids[1] == ids[2] {
			t.Errorf("events 1 and 2 share the id %s", ids[1])
		}

		// A transaction that fails after appending its events leaves no row.
		forced := errors.New("forced failure")
		err = s.Update(t.Context(), func(ctx context.Context, tx queue.Tx) error {
			if err := tx.AppendEvents(ctx, "hq", []*queue.Event{{Type: queue.EventCalled, At: clock.Now()}}); err != nil {
				return err
			}
			return forced
		})
		if !errors.Is(err, forced) {
			t.Fatalf("update = %v, want the forced failure", err)
		}
		// A transaction the database aborts at COMMIT is retried whole: one
		// row for its one event, not two.
		fs.Arm(&storetest.Fault{At: storetest.AtCommit, Err: fmt.Errorf("deadlock: %w", queue.ErrAborted)})
		r.Device = "kiosk-1"
		if _, err := storetest.Do(t.Context(), e, r, "issue", "A"); err != nil {
			t.Fatal(err)
		}
		ms = claimAll(t, s, clock.Now())
		if len(ms) != 1 || ms[0].Receiver != "all" || ms[0].Type != queue.EventIssued || ms[0].Version != 3 {
			t.Errorf("after a rollback and a retried issue: %+v, want the one ISSUED v3 row", ms)
		}
		if v := fs.Violations(); len(v) > 0 {
			t.Errorf("violations: %v", v)
		}
	})
}

// TestClaimTwoDaemons: two stores on one database (two daemons) claiming
// at once take every message exactly once per attempt: each row once in
// the first round, and once again after every attempt failed.
func TestClaimTwoDaemons(t *testing.T) {
	each(t, func(t *testing.T, open func(sqlstore.Opts) *sqlstore.Store) {
		o := sqlstore.Opts{Outbox: routes(map[string][]string{"hook": {"CALLED"}})}
		a, b := open(o), open(o)
		const n = 300
		for range n / 50 {
			appendEvents(t, a, queue.EventCalled, 50)
		}
		now := t0.Add(time.Second)
		for round := 1; round <= 2; round++ {
			seen := map[int64]int{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for _, s := range []*sqlstore.Store{a, b} {
				wg.Go(func() {
					for {
						ms, err := s.ClaimOutbox(context.Background(), sqlstore.OutboxClaim{Now: now, Lease: time.Minute, N: 7})
						if err != nil {
							t.Error(err)
							return
						}
						if len(ms) == 0 {
							return
						}
						var rs []sqlstore.OutboxResult
						mu.Lock()
						for _, m := range ms {
							seen[m.ID]++
							if m.Attempt != round {
								t.Errorf("round %d: message %d claimed as attempt %d", round, m.ID, m.Attempt)
							}
							rs = append(rs, sqlstore.OutboxResult{ID: m.ID, Attempt: m.Attempt, Outcome: sqlstore.Retry,
								Due: now.Add(time.Minute), At: now, Err: "hook: HTTP 503"})
						}
						mu.Unlock()
						if err := s.FinishOutbox(context.Background(), rs); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			if len(seen) != n {
				t.Errorf("round %d: %d messages claimed, want %d", round, len(seen), n)
			}
			for id, k := range seen {
				if k != 1 {
					t.Errorf("round %d: message %d claimed %d times", round, id, k)
				}
			}
			now = now.Add(time.Minute)
		}
	})
}

// TestLeaseAndRelease: a claim holds its messages for its lease only (a
// daemon that died mid-delivery), an outcome recorded under a lost claim
// changes nothing, and a released attempt is not counted.
func TestLeaseAndRelease(t *testing.T) {
	each(t, func(t *testing.T, open func(sqlstore.Opts) *sqlstore.Store) {
		s := open(sqlstore.Opts{Outbox: routes(map[string][]string{"hook": {"CALLED"}})})
		appendEvents(t, s, queue.EventCalled, 1)
		first, err := s.ClaimOutbox(t.Context(), sqlstore.OutboxClaim{Now: t0, Lease: 30 * time.Second, N: 5})
		if err != nil || len(first) != 1 {
			t.Fatalf("claim = %v, %v", first, err)
		}
		if again := claimAll(t, s, t0.Add(29*time.Second)); len(again) != 0 {
			t.Errorf("claimed again inside the lease: %+v", again)
		}
		second := claimAll(t, s, t0.Add(31*time.Second))
		if len(second) != 1 || second[0].Attempt != 2 || second[0].EventID != first[0].EventID {
			t.Fatalf("after the lease: %+v, want attempt 2 of %s", second, first[0].EventID)
		}
		// The first claimer comes back late: its outcome is ignored.
		if err := s.FinishOutbox(t.Context(), []sqlstore.OutboxResult{{ID: first[0].ID, Attempt: 1, Outcome: sqlstore.Delivered}}); err != nil {
			t.Fatal(err)
		}
		if st := status(t, s, 0); st.Pending != 1 || !st.OldestPending.Equal(t0) {
			t.Errorf("status after a stale outcome = %+v, want 1 pending since %v", st, t0)
		}
		now := t0.Add(time.Minute)
		if err := s.FinishOutbox(t.Context(), []sqlstore.OutboxResult{{ID: second[0].ID, Attempt: 2, Outcome: sqlstore.Release, Due: now}}); err != nil {
			t.Fatal(err)
		}
		third := claimAll(t, s, now)
		if len(third) != 1 || third[0].Attempt != 2 {
			t.Errorf("after a release: %+v, want attempt 2 again", third)
		}
	})
}
