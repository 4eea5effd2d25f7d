package notify_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/gate"
	"github.com/nowserving/nowserving/internal/testkit/logtest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/notify"
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
		e := storetest.StartEngine(t, queue.Opts{Store: fs, Sites: []queue.Site{storetest.TestSite()}, Clock: clock.Now})
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
		err := s.Update(t.Context(), func(ctx context.Context, tx queue.Tx) error {
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

// TestWorkerRetries: a receiver that fails twice gets the message a third
// time, with the same event id, body and a valid signature each time, and
// the message leaves the outbox once delivered.
func TestWorkerRetries(t *testing.T) {
	each(t, func(t *testing.T, open func(sqlstore.Opts) *sqlstore.Store) {
		s := open(sqlstore.Opts{Outbox: routes(map[string][]string{"his": {"CALLED"}})})
		h := newHook(t, "his-secret-0123456789")
		h.answer = func(n int, _ delivery) int {
			if n < 2 {
				return http.StatusInternalServerError
			}
			return http.StatusNoContent
		}
		w := start(t, fast(s, h.receiver("his", "CALLED")))
		appendEvents(t, s, queue.EventCalled, 1)
		poll.Until(t, "three attempts", func() bool { return len(h.deliveries()) >= 3 })
		drained(t, s)
		got := h.deliveries()
		if len(got) != 3 {
			t.Fatalf("%d deliveries, want 3", len(got))
		}
		for i, d := range got {
			if d.EventID != got[0].EventID || !bytes.Equal(d.Body, got[0].Body) || d.Attempt != i+1 || d.Type != "CALLED" {
				t.Errorf("delivery %d = %+v, want attempt %d of %s with the first body", i, d, i+1, got[0].EventID)
			}
		}
		poll.Until(t, "the counts", func() bool {
			st := w.Stats()
			return len(st.Receivers) == 1 && st.Receivers[0] == notify.ReceiverStats{Name: "his", Delivered: 1, Failed: 2} &&
				!st.StatusAt.IsZero() && st.Outbox.Pending == 0
		})
	})
}

// TestWorkerDeadLetter: a message that fails Attempts times is dead: kept
// with its last error, counted, never tried again until requeued; a row
// for a receiver this daemon does not know fails the same way.
func TestWorkerDeadLetter(t *testing.T) {
	each(t, func(t *testing.T, open func(sqlstore.Opts) *sqlstore.Store) {
		s := open(sqlstore.Opts{Outbox: routes(map[string][]string{"his": {"CALLED"}, "gone": {"CALLED"}})})
		h := newHook(t, "his-secret-0123456789")
		h.answer = func(int, delivery) int { return http.StatusServiceUnavailable }
		cs := &countedClaims{Store: s}
		o := fast(cs, h.receiver("his", "CALLED"))
		o.Attempts = 3
		w := start(t, o)
		appendEvents(t, s, queue.EventCalled, 1)
		poll.Until(t, "two dead messages", func() bool { return status(t, s, 0).Dead == 2 })
		st := status(t, s, 5)
		if st.Pending != 0 || len(st.LastDead) != 2 {
			t.Fatalf("status = %+v, want 2 dead listed, none pending", st)
		}
		for _, m := range st.LastDead {
			want := map[string]string{"his": "503 Service Unavailable", "gone": `no receiver "gone"`}[m.Receiver]
			if m.Attempt != 3 || !strings.Contains(m.LastError, want) || m.LastAt.IsZero() {
				t.Errorf("dead %s: attempt %d, error %q, last at %v; want 3 attempts, %q", m.Receiver, m.Attempt, m.LastError, m.LastAt, want)
			}
		}
		claims := cs.n.Load()
		poll.Until(t, "ten more claims", func() bool { return cs.n.Load() >= claims+10 }) // a dead message stays dead
		if n := len(h.deliveries()); n != 3 {
			t.Errorf("%d deliveries, want 3", n)
		}
		if c := w.Stats().Receivers[0]; c != (notify.ReceiverStats{Name: "his", Failed: 3, Dead: 1}) {
			t.Errorf("counts = %+v", c)
		}

		h.mu.Lock()
		h.answer = nil
		h.mu.Unlock()
		if n, err := s.RequeueOutbox(t.Context(), "his", time.Now()); err != nil || n != 1 {
			t.Fatalf("requeue = %d, %v; want 1", n, err)
		}
		poll.Until(t, "the requeued delivery", func() bool { return len(h.deliveries()) == 4 })
		if d := h.deliveries()[3]; d.Attempt != 1 || d.EventID != h.deliveries()[0].EventID {
			t.Errorf("requeued delivery = %+v, want attempt 1 of the same event", d)
		}
		poll.Until(t, "one dead left", func() bool { st := status(t, s, 0); return st.Dead == 1 && st.Pending == 0 })
	})
}

// TestWorkerTwoDaemons: two workers on two stores of one database deliver
// each message once.
func TestWorkerTwoDaemons(t *testing.T) {
	each(t, func(t *testing.T, open func(sqlstore.Opts) *sqlstore.Store) {
		o := sqlstore.Opts{Outbox: routes(map[string][]string{"his": {"BOOKING_*"}})}
		a, b := open(o), open(o)
		h := newHook(t, "his-secret-0123456789")
		oa, ob := fast(a, h.receiver("his")), fast(b, h.receiver("his"))
		oa.Batch, ob.Batch = 10, 10
		wa, wb := start(t, oa), start(t, ob)
		const n = 200
		for range n / 40 {
			appendEvents(t, a, "BOOKING_BOOKED", 20)
			appendEvents(t, b, "BOOKING_CANCELLED", 20)
		}
		drained(t, a)
		seen := map[string]int{}
		for _, d := range h.deliveries() {
			seen[d.EventID]++
			if d.Attempt != 1 {
				t.Errorf("delivery %+v: a retry, with no failure", d)
			}
		}
		if len(seen) != n {
			t.Errorf("%d events delivered, want %d", len(seen), n)
		}
		for id, k := range seen {
			if k != 1 {
				t.Errorf("event %s delivered %d times", id, k)
			}
		}
		da, db := wa.Stats().Receivers[0].Delivered, wb.Stats().Receivers[0].Delivered
		if da+db != n {
			t.Errorf("delivered %d + %d, want %d", da, db, n)
		}
		t.Logf("daemon a delivered %d, daemon b %d", da, db)
	})
}

// TestWorkerShutdown: Shutdown lets an attempt in flight finish and records
// it; past its deadline it abandons the attempt and hands the message
// back, uncounted. A receiver that hangs never holds up the event writer.
func TestWorkerShutdown(t *testing.T) {
	each(t, func(t *testing.T, open func(sqlstore.Opts) *sqlstore.Store) {
		s := open(sqlstore.Opts{Outbox: routes(map[string][]string{"his": {"CALLED"}})})
		h := newHook(t, "his-secret-0123456789")
		var g gate.Gate
		g.Shut()
		h.answer = func(int, delivery) int { g.Wait(); return http.StatusOK }
		t.Cleanup(g.Open)
		run := func() (*notify.Worker, chan error) {
			w, err := notify.New(fast(s, h.receiver("his", "CALLED")))
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- w.Run(context.Background()) }()
			return w, done
		}
		w, done := run()
		appendEvents(t, s, queue.EventCalled, 1)
		poll.Until(t, "the attempt in flight", func() bool { return len(h.deliveries()) == 1 })
		for range 5 { // the writer goes on while the receiver hangs
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			err := s.Update(ctx, func(ctx context.Context, tx queue.Tx) error {
				return tx.AppendEvents(ctx, "s1", []*queue.Event{{Type: queue.EventIssued, At: t0}})
			})
			cancel()
			if err != nil {
				t.Fatalf("append while a delivery hangs: %v", err)
			}
		}
		stopped := make(chan error, 1)
		waiting := make(chan struct{})
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			stopped <- w.Shutdown(&doneWatched{Context: ctx, asked: waiting})
		}()
		poll.Recv(t, waiting, "Shutdown waiting on the attempt")
		g.Open()
		if err := <-stopped; err != nil {
			t.Errorf("graceful shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		if st := status(t, s, 0); st.Pending != 0 {
			t.Errorf("after a graceful shutdown: %+v pending, want the delivered message gone", st)
		}

		g.Shut()
		w, done = run()
		appendEvents(t, s, queue.EventCalled, 1)
		poll.Until(t, "the second attempt in flight", func() bool { return len(h.deliveries()) == 2 })
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err := w.Shutdown(ctx)
		cancel()
		if err == nil {
			t.Error("shutdown past its deadline returned nil")
		}
		<-done
		ms := claimAll(t, s, time.Now())
		if len(ms) != 1 || ms[0].Attempt != 1 {
			t.Errorf("after an abandoned attempt: %+v, want the message back as attempt 1", ms)
		}
	})
}

// countedClaims is a store that counts the worker's claims: each is one
// poll of the outbox.
type countedClaims struct {
	notify.Store
	n atomic.Int64
}

func (c *countedClaims) ClaimOutbox(ctx context.Context, cl sqlstore.OutboxClaim) ([]sqlstore.OutboxMessage, error) {
	c.n.Add(1)
	return c.Store.ClaimOutbox(ctx, cl)
}

// doneWatched is a context that closes asked the first time its Done is
// called: Shutdown calls it once it has told the worker to stop, to wait
// for the attempts in flight.
type doneWatched struct {
	context.Context
	asked chan struct{}
	once  sync.Once
}

func (c *doneWatched) Done() <-chan struct{} {
	c.once.Do(func() { close(c.asked) })
	return c.Context.Done()
}

func TestMatch(t *testing.T) {
	for _, tt := range []struct {
		patterns []string
		typ      queue.EventType
		want     bool
	}{
		{nil, "BOOKING_BOOKED", false},
		{[]string{"BOOKING_*"}, "BOOKING_BOOKED", true},
		{[]string{"BOOKING_*"}, "CALLED", false},
		{[]string{"BOOKING_*", "CALLED"}, "CALLED", true},
		{[]string{"CALLED"}, "RECALLED", false},
		{[]string{"*"}, "PRINT_FAILED", true},
	} {
		if got := notify.Match(tt.patterns, tt.typ); got != tt.want {
			t.Errorf("Match(%q, %s) = %v, want %v", tt.patterns, tt.typ, got, tt.want)
		}
	}
	if f := notify.Matcher(nil); !f("BOOKING_EXPIRED") || f("EXPIRED") {
		t.Error("Matcher(nil) does not take the booking events only")
	}
	if err := notify.CheckPatterns([]string{"BOOKING_*", "*", "CALLED"}); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{"", "called", "BOOK*ING", "**", "A-B"} {
		if notify.CheckPatterns([]string{bad}) == nil {
			t.Errorf("CheckPatterns(%q) = nil", bad)
		}
	}
}

// TestSign: the signature is HMAC-SHA256 of the body, in hex, after
// "sha256=" (the vector: printf '{"id":"x"}' | openssl dgst -sha256 -hmac
// webhook-secret-0123).
func TestSign(t *testing.T) {
	secret, body := []byte("webhook-secret-0123"), []byte(`{"id":"x"}`)
	const want = "sha256=59327d822f00626a90a727b17ecef17917273e3e14a14b6c9329e2ae2b7ab6b3"
	got := notify.Sign(secret, body)
	if got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
	for _, sig := range []string{got, strings.ToUpper(got[:7]) + got[7:]} {
		if notify.Verify(secret, body, sig) != (sig == got) {
			t.Errorf("Verify(%s) = %v", sig, !(sig == got))
		}
	}
	for _, bad := range []string{"", "sha256=", "sha256=zz", "sha1=" + got[7:], got[:len(got)-1] + "0"} {
		if notify.Verify(secret, body, bad) {
			t.Errorf("Verify(%q) = true", bad)
		}
	}
	if notify.Verify([]byte("another-secret-0123"), body, got) {
		t.Error("Verify with another secret = true")
	}
}

// TestWebhookFailures: what a failed delivery says, without the address's
// query (it may hold a token).
func TestWebhookFailures(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		case "/full":
			http.Error(w, "disk full", http.StatusInsufficientStorage)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer srv.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	for _, tt := range []struct{ url, want string }{
		{srv.URL + "/ok?token=secret", ""},
		{srv.URL + "/moved?token=secret", `answered 302 Found, redirecting to "/elsewhere"`},
		{srv.URL + "/full?token=secret", `answered 507 Insufficient Storage: "disk full"`},
		{down.URL + "/hook?token=secret", "connection refused"},
	} {
		err := (&notify.Webhook{URL: tt.url, Secret: []byte("s")}).Deliver(t.Context(), message("{}"))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.url, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want %q", tt.url, err, tt.want)
		case err != nil && strings.Contains(err.Error(), "secret"):
			t.Errorf("%s: the error shows the query: %v", tt.url, err)
		}
	}
}

func message(body string) *sqlstore.OutboxMessage {
	return &sqlstore.OutboxMessage{ID: 1, EventID: "7d44b6a2-5a3e-4c1e-9f00-0123456789ab", Receiver: "sms", Site: "hq",
		Version: 42, Type: "BOOKING_BOOKED", Body: []byte(body), Attempt: 2}
}

// TestCommandDelivers: a worker runs a real shell command per message,
// the JSON on its standard input and the event in its environment.
func TestCommandDelivers(t *testing.T) {
	each(t, func(t *testing.T, open func(sqlstore.Opts) *sqlstore.Store) {
		s := open(sqlstore.Opts{Outbox: routes(map[string][]string{"sms": {"CALLED"}})})
		dir := t.TempDir()
		run := `cat > "` + dir + `/$NOWSERVING_EVENT_ID.$NOWSERVING_EVENT_TYPE.$NOWSERVING_SITE.v$NOWSERVING_VERSION.$NOWSERVING_ATTEMPT"`
		start(t, fast(s, notify.Receiver{Name: "sms", Events: []string{"CALLED"}, Deliverer: &notify.Command{Run: run}}))
		appendEvents(t, s, queue.EventCalled, 2)
		drained(t, s)
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		if len(files) != 2 {
			t.Fatalf("files %v, want one per event", files)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var doc struct {
				ID, Type, Site string
				Version        int64
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatalf("%s: %s: %v", f, b, err)
			}
			if want := doc.ID + ".CALLED.s1.v" + strconv.FormatInt(doc.Version, 10) + ".1"; filepath.Base(f) != want || doc.Type != "CALLED" {
				t.Errorf("file %s holds %s, want it named %s", filepath.Base(f), b, want)
			}
		}
	})
}

// TestCommandFails: a non-zero exit is a failure with its status and the
// start of its standard error.
func TestCommandFails(t *testing.T) {
	c := &notify.Command{Run: `cat >/dev/null; echo "gateway says no" >&2; exit 3`}
	err := c.Deliver(t.Context(), message(`{"id":"x"}`))
	if err == nil || !strings.Contains(err.Error(), "exited with status 3: gateway says no") {
		t.Errorf("Deliver = %v, want exit status 3 and the message", err)
	}
	if err := (&notify.Command{Run: "read line; test \"$line\" = ok"}).Deliver(t.Context(), message("ok\n")); err != nil {
		t.Errorf("a command reading its input: %v", err)
	}
}

// TestCommandTimeout: a command past its time is killed with everything it
// started, and the attempt fails at once.
func TestCommandTimeout(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	c := &notify.Command{Run: `sleep 30 & echo $! > ` + pidFile + `; wait`}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	err := c.Deliver(ctx, message("{}"))
	if err == nil || !strings.Contains(err.Error(), "no answer in time") {
		t.Errorf("Deliver = %v, want a time-out", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("Deliver returned after %s", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	poll.Until(t, "the command's child killed", func() bool { return syscall.Kill(pid, 0) != nil })
}

// BenchmarkAppend is the event writer's cost of the outbox: a
// transaction appending one event with no receiver taking it, with one and
// with two (their rows written in the transaction). The three stores are
// written in turn, one transaction each per round, and the median latency
// of each is reported (the machine is shared: medians, side by side).
func BenchmarkAppend(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			names := []string{"none", "1-receiver", "2-receivers"}
			stores := []*sqlstore.Store{
				be.db(b)(sqlstore.Opts{}),
				be.db(b)(sqlstore.Opts{Outbox: routes(map[string][]string{"his": {"CALLED"}})}),
				be.db(b)(sqlstore.Opts{Outbox: routes(map[string][]string{"his": {"CALLED"}, "sms": {"*"}})}),
			}
			took := make([][]time.Duration, len(stores))
			for b.Loop() {
				for i, s := range stores {
					t := time.Now()
					appendEvents(b, s, queue.EventCalled, 1)
					took[i] = append(took[i], time.Since(t))
				}
			}
			for i, d := range took {
				slices.Sort(d)
				b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, names[i]+"-median-ms")
			}
		})
	}
}

// BenchmarkDeliver is the throughput of one worker delivering to a webhook
// on loopback (batch 50, 4 at a time), from a full outbox.
func BenchmarkDeliver(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s := be.db(b)(sqlstore.Opts{Outbox: routes(map[string][]string{"his": {"CALLED"}})})
			for range b.N/100 + 1 {
				appendEvents(b, s, queue.EventCalled, 100)
			}
			h := newHook(b, "his-secret-0123456789")
			b.ResetTimer()
			began := time.Now()
			o := fast(s, h.receiver("his", "CALLED"))
			o.Logger = logtest.New()
			start(b, o)
			drained(b, s)
			b.ReportMetric(float64(len(h.deliveries()))/time.Since(began).Seconds(), "msgs/s")
		})
	}
}

// fast are worker options that make a test take milliseconds.
func fast(s notify.Store, rs ...notify.Receiver) notify.Opts {
	return notify.Opts{Store: s, Receivers: rs, Poll: 10 * time.Millisecond, MinBackoff: 10 * time.Millisecond,
		MaxBackoff: 40 * time.Millisecond, Timeout: 2 * time.Second, StatusEvery: 10 * time.Millisecond, Logger: logtest.New()}
}

// drained waits until nothing is pending in s.
func drained(t testing.TB, s *sqlstore.Store) {
	t.Helper()
	poll.Until(t, "an empty outbox", func() bool { return status(t, s, 0).Pending == 0 })
}
