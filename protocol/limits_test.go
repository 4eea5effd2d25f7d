package protocol_test

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/wire"
)

// waitStats waits until the server's counts satisfy ok.
func (en *env) waitStats(what string, ok func(protocol.Stats) bool) {
	en.t.Helper()
	var st protocol.Stats
	if !poll.Within(5*time.Second, 2*time.Millisecond, func() bool { st = en.Server.Stats(); return ok(st) }) {
		en.t.Fatalf("waiting for %s: stats %+v", what, st)
	}
}

// TestIdleConnectionsDoNotLockOut: hundreds of sockets that never send
// HELLO fill the pending cap, yet a device that connects after them logs in
// at once; the oldest idle ones are closed with ERROR 0x32 to make room and
// the rest with ERROR 0x34 at the handshake deadline.
func TestIdleConnectionsDoNotLockOut(t *testing.T) {
	const maxPending, idle = 64, 300
	const handshake = time.Second
	cm := newCountMetrics()
	en := newEnv(t, func(o *protocol.Opts) {
		o.MaxPending, o.HandshakeTimeout, o.Metrics = maxPending, handshake, cm
	})
	conns := make([]*client, idle)
	dialed := make([]time.Time, idle)
	for i := range conns {
		dialed[i] = time.Now()
		conns[i] = en.dial()
	}
	en.waitStats("the idle connections admitted", func(st protocol.Stats) bool {
		return st.Evicted == idle-maxPending && st.Pending == maxPending
	})

	start := time.Now()
	kiosk, _ := en.login("kiosk-1", 1)
	took := time.Since(start)
	kiosk.ticket(&wire.TakeTicket{Service: "A"})
	t.Logf("device logged in %v after %d idle connections (%d pending)", took, idle, maxPending)
	// It got in while the idle sockets were still held (evicting the
	// oldest), not after they timed out.
	if st := en.Server.Stats(); st.Pending != maxPending-1 || st.Evicted != idle-maxPending+1 {
		t.Errorf("after the login: %d pending, %d evicted; want %d and %d", st.Pending, st.Evicted, maxPending-1, idle-maxPending+1)
	}

	evicted := idle - maxPending + 1
	for i, cl := range conns {
		want := wire.ErrTooManyConnections.Code
		if i >= evicted {
			want = wire.ErrTimeout.Code
		}
		if codes := cl.expectClose(); len(codes) != 1 || codes[0] != want {
			t.Fatalf("idle connection %d: got %v, want ERROR 0x%02x then close", i, codes, want)
		}
		if i >= evicted {
			if held := time.Since(dialed[i]); held < handshake-50*time.Millisecond || held > handshake+2*time.Second {
				t.Errorf("idle connection %d closed after %v, want about %v", i, held, handshake)
			}
		}
	}
	en.waitStats("the idle connections closed", func(st protocol.Stats) bool { return st.Conns == 1 && st.Pending == 0 })
	kiosk.ticket(&wire.TakeTicket{Service: "A"})

	cm.mu.Lock()
	defer cm.mu.Unlock()
	if cm.evicted != evicted || cm.auth["timeout"] != maxPending-1 || cm.refused != 0 {
		t.Errorf("metrics: %d evicted, %d timeouts, %d refused; want %d, %d, 0", cm.evicted, cm.auth["timeout"], cm.refused, evicted, maxPending-1)
	}
	if len(cm.auth) != 1 {
		t.Errorf("auth failures %v, want only timeouts", cm.auth)
	}
}

// TestIdleRenewalNeverLocksOut: another host keeps twice the pending cap
// of idle sockets open, reopening each the moment it is closed, for as long
// as the test runs; devices keep logging in at the first attempt, in far
// less than the handshake timeout.
func TestIdleRenewalNeverLocksOut(t *testing.T) {
	const maxPending, attackers, logins = 32, 64, 20
	const handshake = 2 * time.Second
	en := newEnv(t, func(o *protocol.Opts) { o.MaxPending, o.HandshakeTimeout = maxPending, handshake })
	attacker := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: time.Second}
	if c, err := attacker.Dial("tcp", en.Addr); err != nil {
		t.Fatalf("dial from 127.0.0.2 (Linux routes all of 127/8 to loopback): %v", err)
	} else {
		c.Close()
	}

	var (
		mu     sync.Mutex
		live   = make([]net.Conn, attackers) // each attacker's open socket
		closed bool
		wg     sync.WaitGroup
		opened atomic.Int64
	)
	for i := range attackers {
		wg.Go(func() {
			for {
				c, err := attacker.Dial("tcp", en.Addr)
				mu.Lock()
				if closed {
					mu.Unlock()
					if err == nil {
						c.Close()
					}
					return
				}
				if err != nil {
					mu.Unlock()
					time.Sleep(time.Millisecond)
					continue
				}
				live[i] = c
				mu.Unlock()
				opened.Add(1)
				_, _ = io.Copy(io.Discard, c) // until the server closes it
				c.Close()
			}
		})
	}
	t.Cleanup(func() {
		mu.Lock()
		closed = true
		for _, c := range live {
			if c != nil {
				c.Close()
			}
		}
		mu.Unlock()
		wg.Wait()
	})
	en.waitStats("the pending cap full", func(st protocol.Stats) bool { return st.Pending == maxPending && st.Evicted > 0 })

	var worst time.Duration
	for i := range logins {
		start := time.Now()
		cl, _ := en.login("kiosk-2", uint64(i+1)) // fails the test on any refusal
		took := time.Since(start)
		worst = max(worst, took)
		if took > handshake/4 {
			t.Errorf("login %d took %v under the flood, want far less than the %v handshake timeout", i, took, handshake)
		}
		cl.ticket(&wire.TakeTicket{Service: "B"})
		cl.c.Close()
	}
	st := en.Server.Stats()
	t.Logf("%d logins, slowest %v, while %d attacker connections were opened and %d evicted", logins, worst, opened.Load(), st.Evicted)
	if st.Evicted < logins {
		t.Errorf("only %d evictions: the attacker did not keep the pending cap full", st.Evicted)
	}
	if st.AuthFailures != 0 {
		t.Errorf("%d handshake failures, want none: idle sockets are evicted before their deadline", st.AuthFailures)
	}
}

// TestMaxConnsCountsSessions: MaxConns caps authenticated sessions only;
// connections still authenticating neither count against it nor get a
// session when it is reached, even if they were admitted before.
func TestMaxConnsCountsSessions(t *testing.T) {
	cm := newCountMetrics()
	en := newEnv(t, func(o *protocol.Opts) {
		o.MaxConns, o.MaxPending, o.HandshakeTimeout, o.Metrics = 2, 8, time.Minute, cm
	})
	for range 6 {
		en.dial() // idle, never authenticates
	}
	en.waitStats("the idle connections", func(st protocol.Stats) bool { return st.Pending == 6 })
	a, _ := en.login("kiosk-1", 1)
	racer := en.dial() // admitted while there is room
	en.login("kiosk-2", 1)
	if _, err := racer.auth("kiosk-3", wire.RoleKiosk, 1, secretOf("kiosk-3")); !isCode(err, wire.ErrTooManyConnections.Code) {
		t.Errorf("AUTH over the cap: got %v, want ERROR 0x32", err)
	}
	if codes := racer.expectClose(); len(codes) != 0 {
		t.Errorf("after ERROR 0x32: more errors %v before close", codes)
	}
	late := en.dial() // arrives at the cap
	if codes := late.expectClose(); len(codes) != 1 || codes[0] != wire.ErrTooManyConnections.Code {
		t.Errorf("connection at the cap: got %v, want ERROR 0x32 then close", codes)
	}
	// The server counts a connection out just after closing it: wait for
	// the count to settle rather than read it the instant the client sees
	// the close.
	en.waitStats("the 6 idle connections still waiting, the refused ones gone", func(st protocol.Stats) bool { return st.Pending == 6 })
	a.c.Close()
	en.waitStats("kiosk-1's session ended", func(st protocol.Stats) bool { return st.Conns == 7 })
	b, _ := en.login("kiosk-3", 1)
	b.ticket(&wire.TakeTicket{Service: "A"})

	cm.mu.Lock()
	defer cm.mu.Unlock()
	if cm.refused != 2 || cm.evicted != 0 || len(cm.auth) != 0 {
		t.Errorf("metrics: %d refused, %d evicted, auth failures %v; want 2, 0, none", cm.refused, cm.evicted, cm.auth)
	}
}

func isCode(err error, code uint16) bool {
	var se *wire.StatusError
	return errors.As(err, &se) && se.Code == code
}
