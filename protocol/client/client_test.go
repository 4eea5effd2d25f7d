package client

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/protocol/wire"
)

func testOpts() Opts {
	return Opts{
		DeviceID: "kiosk-1", Secret: []byte("kiosk-1-secret-xx"), Role: wire.RoleKiosk,
		Timeout: 2 * time.Second, MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
	}
}

func dial(t *testing.T, d *fakeDaemon, o Opts) *Client {
	t.Helper()
	c, err := Dial(context.Background(), d.Addr(), o)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestBackoff(t *testing.T) {
	min, max := 500*time.Millisecond, 5*time.Second
	for _, tc := range []struct {
		attempt int
		want    time.Duration
	}{
		{0, 500 * time.Millisecond}, {1, time.Second}, {2, 2 * time.Second}, {3, 4 * time.Second},
		{4, 5 * time.Second}, {5, 5 * time.Second}, {1000, 5 * time.Second},
	} {
		if got := Backoff(tc.attempt, min, max); got != tc.want {
			t.Errorf("Backoff(%d) = %v, want %v", tc.attempt, got, tc.want)
		}
	}
	if got := Backoff(0, 0, 0); got != DefaultMinBackoff {
		t.Errorf("Backoff with zero bounds = %v, want %v", got, DefaultMinBackoff)
	}
}

func TestDialWelcome(t *testing.T) {
	d := newFakeDaemon(t)
	c := dial(t, d, testOpts())
	w := c.Welcome()
	if w.Site != "main" || w.ServiceDay != "2026-11-30" || w.Role != wire.RoleKiosk {
		t.Errorf("Welcome = %+v", w)
	}
	if s, err := c.State(); s != StateConnected || err != nil {
		t.Errorf("State = %v, %v; want connected", s, err)
	}
}

func TestDialErrors(t *testing.T) {
	d := newFakeDaemon(t)
	o := testOpts()
	o.Secret = []byte("wrong")
	_, err := Dial(context.Background(), d.Addr(), o)
	var se *wire.StatusError
	if !errors.As(err, &se) || !errors.Is(err, wire.ErrAuthFailed) {
		t.Errorf("wrong secret: err = %v, want ErrAuthFailed", err)
	}

	closed := conntest.Listen(t)
	closed.Close() // its port refuses connections
	addr := closed.Addr()
	_, err = Dial(context.Background(), addr, testOpts())
	if !errors.Is(err, ErrUnreachable) {
		t.Errorf("closed port: err = %v, want ErrUnreachable", err)
	}
	if _, err := Dial(context.Background(), addr, Opts{}); err == nil {
		t.Error("no device id: want an error")
	}
}

// A kiosk whose connection drops after TAKE_TICKET (the ticket was issued,
// the answer lost) gets the same ticket on the retry, over a new
// connection, with the same request id and the RETRY flag.
func TestRetryAfterDropGetsSameTicket(t *testing.T) {
	d := newFakeDaemon(t)
	dropped := false
	d.onReq = func(fc *fakeConn, f wire.Frame) bool {
		if f.Type == wire.TypeTakeTicket && !dropped {
			dropped = true
			d.issue(fc, f) // committed...
			fc.nc.Close()  // ...but the answer never leaves
			return true
		}
		return false
	}
	c := dial(t, d, testOpts())
	tk, err := c.TakeTicket(context.Background(), "A", wire.ClassNormal, TicketOpts{})
	if err != nil {
		t.Fatalf("TakeTicket: %v", err)
	}
	if tk.Number != "A001" {
		t.Errorf("ticket = %s, want A001", tk.Number)
	}
	reqs := d.requests(wire.TypeTakeTicket)
	if len(reqs) != 2 {
		t.Fatalf("daemon saw %d TAKE_TICKET, want 2", len(reqs))
	}
	if reqs[0].RequestID != reqs[1].RequestID || reqs[0].Flags&wire.FlagRetry != 0 || reqs[1].Flags&wire.FlagRetry == 0 {
		t.Errorf("frames: %+v then %+v; want the same id, RETRY only on the second", reqs[0], reqs[1])
	}
	if d.seq != 1 {
		t.Errorf("daemon issued %d tickets, want 1", d.seq)
	}
	// The next ticket is a new one.
	tk2, err := c.TakeTicket(context.Background(), "A", wire.ClassNormal, TicketOpts{})
	if err != nil || tk2.Number != "A002" {
		t.Errorf("second ticket = %v, %v; want A002", tk2, err)
	}
}

func TestRetryableErrorsAndTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		first    func(fc *fakeConn, f wire.Frame) // nil: no answer at all
		wantErr  error
		wantReqs int
	}{
		{"rate limited", func(fc *fakeConn, f wire.Frame) {
			e := wire.ErrRateLimited.Reply(f.RequestID)
			e.RetryAfterMS = 10
			fc.send(f.RequestID, wire.FlagResponse, e)
		}, nil, 2},
		{"store unavailable", func(fc *fakeConn, f wire.Frame) {
			fc.send(f.RequestID, wire.FlagResponse, wire.ErrStoreUnavailable.Reply(f.RequestID))
		}, nil, 2},
		{"no answer", nil, nil, 2},
		{"service full", func(fc *fakeConn, f wire.Frame) {
			fc.send(f.RequestID, wire.FlagResponse, wire.ErrServiceFull.WithMsg("service full today: A").Reply(f.RequestID))
		}, wire.ErrServiceFull, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newFakeDaemon(t)
			n := 0
			d.onReq = func(fc *fakeConn, f wire.Frame) bool {
				n++
				if n > 1 {
					return false
				}
				if tc.first != nil {
					tc.first(fc, f)
				}
				return true
			}
			o := testOpts()
			o.Timeout = 200 * time.Millisecond
			c := dial(t, d, o)
			tk, err := c.TakeTicket(context.Background(), "A", wire.ClassNormal, TicketOpts{})
			if tc.wantErr != nil {
				var se *wire.StatusError
				if !errors.Is(err, tc.wantErr) || !errors.As(err, &se) || se.Msg != "service full today: A" {
					t.Errorf("err = %v, want %v with the daemon's message", err, tc.wantErr)
				}
			} else if err != nil || tk.Number != "A001" {
				t.Errorf("TakeTicket = %v, %v; want A001", tk, err)
			}
			if got := len(d.requests(wire.TypeTakeTicket)); got != tc.wantReqs {
				t.Errorf("daemon saw %d requests, want %d", got, tc.wantReqs)
			}
		})
	}
}

func TestGiveUp(t *testing.T) {
	d := newFakeDaemon(t)
	d.onReq = func(fc *fakeConn, f wire.Frame) bool {
		fc.send(f.RequestID, wire.FlagResponse, wire.ErrBusy.Reply(f.RequestID))
		return true
	}
	o := testOpts()
	o.Retries = 2
	c := dial(t, d, o)
	_, err := c.TakeTicket(context.Background(), "A", 0, TicketOpts{})
	if !errors.Is(err, wire.ErrBusy) {
		t.Errorf("err = %v, want ErrBusy after the retries", err)
	}
	if got := len(d.requests(wire.TypeTakeTicket)); got != 3 {
		t.Errorf("daemon saw %d requests, want 3 (1 + 2 retries)", got)
	}
	if got := c.Resent(); got != 2 {
		t.Errorf("Resent = %d, want 2", got)
	}
}

func TestCloseFailsPending(t *testing.T) {
	d := newFakeDaemon(t)
	d.onReq = func(*fakeConn, wire.Frame) bool { return true } // never answer
	c := dial(t, d, testOpts())
	errc := make(chan error, 1)
	go func() {
		_, err := c.TakeTicket(context.Background(), "A", 0, TicketOpts{})
		errc <- err
	}()
	poll.Until(t, "the TAKE_TICKET at the daemon", func() bool { return len(d.requests(wire.TypeTakeTicket)) > 0 })
	c.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("err = %v, want ErrClosed", err)
	}
	if s, _ := c.State(); s != StateClosed {
		t.Errorf("State = %v, want closed", s)
	}
}

func TestHeartbeats(t *testing.T) {
	d := newFakeDaemon(t)
	o := testOpts()
	o.Heartbeat = 20 * time.Millisecond
	states := make(chan State, 16)
	o.OnState = func(s State, _ error) { states <- s }
	c := dial(t, d, o)
	// The fake daemon never sends heartbeats: after three intervals the
	// client drops it and reconnects; meanwhile it sent its own heartbeats.
	if s := <-states; s != StateReconnecting {
		t.Fatalf("first state change = %v, want reconnecting", s)
	}
	for s := range states {
		if s == StateConnected {
			break
		}
	}
	var hb, dials int
	if !poll.Within(5*time.Second, 5*time.Millisecond, func() bool {
		d.mu.Lock()
		hb = d.hbSeen
		d.mu.Unlock()
		dials = d.Accepted()
		return hb > 0 && dials >= 2
	}) {
		t.Fatalf("heartbeats seen %d, dials %d; want > 0 and >= 2", hb, dials)
	}
	c.Close()
}

func collect(t *testing.T, s *Subscription, n int) []Update {
	t.Helper()
	var out []Update
	timeout := time.After(5 * time.Second)
	for len(out) < n {
		select {
		case u, ok := <-s.Updates():
			if !ok {
				t.Fatalf("subscription ended after %d updates: %v", len(out), s.Err())
			}
			out = append(out, u)
		case <-timeout:
			t.Fatalf("got %d updates, want %d", len(out), n)
		}
	}
	return out
}

func versions(us []Update) []uint64 {
	var v []uint64
	for _, u := range us {
		if u.Event != nil {
			v = append(v, u.Event.Version)
		} else {
			v = append(v, 1000+u.Snapshot.Version) // snapshots marked +1000
		}
	}
	return v
}

func waitSubscribed(t *testing.T, d *fakeDaemon) {
	t.Helper()
	if !poll.Within(5*time.Second, time.Millisecond, func() bool { return d.subscribed() > 0 }) {
		t.Fatal("never resubscribed")
	}
}

// A subscriber that loses its connection gets exactly the events it
// missed, once each, in order; duplicates the daemon resends are dropped.
func TestSubscribeResume(t *testing.T) {
	d := newFakeDaemon(t)
	for i := 0; i < 3; i++ {
		d.emit(wire.Event{Kind: wire.EventIssued})
	}
	c := dial(t, d, testOpts())
	s, err := c.Subscribe(context.Background(), Filter{FromVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, s, 2) // 2, 3 replayed
	d.emit(wire.Event{Kind: wire.EventCalled})
	got = append(got, collect(t, s, 1)...) // 4 live
	d.dropAll()
	for i := 0; i < 3; i++ { // 5, 6, 7 while away
		d.emit(wire.Event{Kind: wire.EventDone})
	}
	// Resend from an earlier version than asked: the client drops duplicates.
	d.mu.Lock()
	d.onReq = func(fc *fakeConn, f wire.Frame) bool {
		if f.Type == wire.TypeSubscribe {
			var m wire.Subscribe
			_ = m.Decode(f.Payload)
			if m.FromVersion != 4 {
				t.Errorf("resubscribed from %d, want 4", m.FromVersion)
			}
			d.mu.Lock()
			d.onReq = nil
			d.mu.Unlock()
			m.FromVersion = 2
			b, _ := m.AppendBinary(nil)
			f.Payload = b
			d.answer(fc, f)
			return true
		}
		return false
	}
	d.mu.Unlock()
	got = append(got, collect(t, s, 3)...)
	waitSubscribed(t, d)
	d.emit(wire.Event{Kind: wire.EventIssued}) // 8 live
	got = append(got, collect(t, s, 1)...)
	if want := []uint64{2, 3, 4, 5, 6, 7, 8}; !slices.Equal(versions(got), want) {
		t.Errorf("versions = %v, want %v", versions(got), want)
	}
	if s.Version() != 8 {
		t.Errorf("Version = %d, want 8", s.Version())
	}
}

// When the gap is too large the daemon answers with a SNAPSHOT; the client
// passes it on, then the events after it.
func TestSubscribeSnapshotOnGap(t *testing.T) {
	d := newFakeDaemon(t)
	c := dial(t, d, testOpts())
	s, err := c.Subscribe(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	d.emit(wire.Event{Kind: wire.EventIssued})
	got := collect(t, s, 2) // snapshot at 0, event 1
	d.mu.Lock()
	d.snapshot = func(from uint64) bool { return true }
	d.mu.Unlock()
	d.dropAll()
	d.emit(wire.Event{Kind: wire.EventIssued}) // 2, 3 missed
	d.emit(wire.Event{Kind: wire.EventIssued})
	got = append(got, collect(t, s, 1)...) // snapshot at 3
	waitSubscribed(t, d)
	d.emit(wire.Event{Kind: wire.EventCalled})
	got = append(got, collect(t, s, 1)...)
	if want := []uint64{1000, 1, 1003, 4}; !slices.Equal(versions(got), want) {
		t.Errorf("versions = %v, want %v (1000+v marks a snapshot)", versions(got), want)
	}
	if _, err := c.Subscribe(context.Background(), Filter{}); !errors.Is(err, ErrSubscribed) {
		t.Errorf("second Subscribe: %v, want ErrSubscribed", err)
	}
	s.Close()
	if _, ok := <-s.Updates(); ok {
		t.Error("channel still open after Close")
	}
}

// Close stops every goroutine the client started (and the fake daemon's
// connection goroutines end with the connection).
func TestCloseLeavesNoGoroutines(t *testing.T) {
	d := newFakeDaemon(t)
	before := runtime.NumGoroutine()
	c := dial(t, d, testOpts())
	s, err := c.Subscribe(context.Background(), Filter{FromVersion: 0})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, s, 1) // the snapshot
	if _, err := c.TakeTicket(context.Background(), "A", 0, TicketOpts{}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if !poll.Within(5*time.Second, 5*time.Millisecond, func() bool { return runtime.NumGoroutine() <= before }) {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines after Close, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
	}
}
