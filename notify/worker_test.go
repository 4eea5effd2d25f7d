package notify_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/notify"
	"github.com/nowserving/nowserving/poll"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

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
		o := fast(s, h.receiver("his", "CALLED"))
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
		time.Sleep(100 * time.Millisecond) // ten polls: a dead message stays dead
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
		var g gate
		g.reset()
		h.answer = func(int, delivery) int { g.wait(); return http.StatusOK }
		t.Cleanup(g.open)
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
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			stopped <- w.Shutdown(ctx)
		}()
		time.Sleep(20 * time.Millisecond)
		g.open()
		if err := <-stopped; err != nil {
			t.Errorf("graceful shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
		if st := status(t, s, 0); st.Pending != 0 {
			t.Errorf("after a graceful shutdown: %+v pending, want the delivered message gone", st)
		}

		g.reset()
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

// gate holds requests until opened.
type gate struct {
	mu sync.Mutex
	ch chan struct{}
}

func (g *gate) reset() { g.mu.Lock(); g.ch = make(chan struct{}); g.mu.Unlock() }

func (g *gate) wait() {
	g.mu.Lock()
	ch := g.ch
	g.mu.Unlock()
	<-ch
}

func (g *gate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.ch:
	default:
		close(g.ch)
	}
}
