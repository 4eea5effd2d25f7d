package protocol_test

import (
	"net"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/wire"
)

// idleSessions is how many idle sessions TestIdleSessionCost opens.
const idleSessions = 1000

// idleBudget is what an idle authenticated session may cost (issue 12:
// 8 KiB), here with the test's own end of the connection counted in.
const idleBudget = 8 << 10

// TestIdleSessionCost: idle authenticated sessions, kiosks and subscribed
// displays, hold no goroutine, and 1,000 of them cost less than 8 KiB each
// in heap objects and goroutine stacks (from runtime/metrics, after a GC),
// counting both ends of each connection since the test holds them. (RSS of
// a real daemon: `nowserving bench conns --pid`.)
func TestIdleSessionCost(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what memory costs; the goroutine count is checked by the other builds")
	}
	needFiles(t, 2*idleSessions+100)
	en := newEnv(t, nil)
	// Log in once first, so that what the first session sets up (engine
	// caches, pools, the poller) is not counted.
	first, _ := en.login("display-1", 1)
	first.do(&wire.Subscribe{Snapshot: true})
	g0, mem0 := idleCost()
	conns := make([]net.Conn, 0, idleSessions)
	for i := range idleSessions {
		id := "kiosk-1"
		if i%2 == 1 {
			id = "display-2"
		}
		cl, _ := en.login(id, uint64(i+2))
		if id != "kiosk-1" {
			cl.do(&wire.Subscribe{Snapshot: true})
		}
		conns = append(conns, cl.c) // the client's read buffer is let go
	}
	en.waitConns(idleSessions + 1)
	g1, mem1 := idleCost()
	per := float64(mem1-mem0) / idleSessions
	t.Logf("%d idle sessions: %+d goroutines, %.0f bytes each (heap objects and stacks, both ends)", idleSessions, g1-g0, per)
	if g1-g0 > idleSessions/100 {
		t.Errorf("%d idle sessions added %d goroutines, want none per session", idleSessions, g1-g0)
	}
	if per > idleBudget {
		t.Errorf("an idle session costs %.0f bytes, want at most %d", per, idleBudget)
	}
	runtime.KeepAlive(conns)
}

// idleCost returns the goroutines and the bytes of heap objects and
// goroutine stacks in use, after a collection.
func idleCost() (goroutines int, bytes uint64) {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(s)
	return runtime.NumGoroutine(), s[0].Value.Uint64() + s[1].Value.Uint64()
}

// needFiles raises the soft limit on open files to n, failing the test
// when the hard limit is lower.
func needFiles(t *testing.T, n uint64) {
	t.Helper()
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		t.Fatalf("getrlimit: %v", err)
	}
	if r.Cur >= n {
		return
	}
	if r.Max < n {
		t.Fatalf("open files limited to %d, the test needs %d (ulimit -n)", r.Max, n)
	}
	r.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		t.Fatalf("setrlimit: %v", err)
	}
}

// plainConns hides the sockets of accepted connections behind a net.Conn
// with no SyscallConn, as a listener wrapper might: the server cannot put
// them in its epoll set and parks each idle session on a goroutine. It
// counts the sessions parked: reads in progress without a deadline (every
// other read of a session has one).
type plainConns struct {
	net.Listener
	parked *atomic.Int32
}

type plainConn struct {
	net.Conn
	parked     *atomic.Int32
	noDeadline atomic.Bool
}

func (l plainConns) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &plainConn{Conn: c, parked: l.parked}, nil
}

func (c *plainConn) SetReadDeadline(t time.Time) error {
	c.noDeadline.Store(t.IsZero())
	return c.Conn.SetReadDeadline(t)
}

func (c *plainConn) Read(p []byte) (int, error) {
	if c.noDeadline.Load() {
		c.parked.Add(1)
		defer c.parked.Add(-1)
	}
	return c.Conn.Read(p)
}

// TestUnpolledSessions: sessions the poller cannot watch still serve
// requests after parking, get heartbeats, time out when silent, and end at
// shutdown.
func TestUnpolledSessions(t *testing.T) {
	en := unstarted(t, func(o *protocol.Opts) { o.Heartbeat = 40 * time.Millisecond; o.IdleTimeout = 300 * time.Millisecond })
	var parked atomic.Int32
	isParked := func() bool { return parked.Load() == 1 }
	en.Wrap = func(l net.Listener) net.Listener { return plainConns{l, &parked} }
	en.Start()
	t.Cleanup(en.Stop)
	kiosk, _ := en.login("kiosk-1", 1)
	for _, want := range []string{"A001", "A002"} {
		if tk := kiosk.ticket(&wire.TakeTicket{Service: "A"}); tk.Number != want {
			t.Errorf("ticket %s, want %s", tk.Number, want)
		}
		poll.Until(t, "the session parked in between", isParked)
	}
	frames, codes := kiosk.readUntilError()
	beats := 0
	for _, f := range frames {
		if f.Type == wire.TypeHeartbeat {
			beats++
		}
	}
	if beats == 0 || len(codes) != 1 || codes[0] != wire.ErrTimeout.Code {
		t.Errorf("silent session: %d heartbeats, errors %v; want heartbeats, then ERROR 0x34", beats, codes)
	}
	en.waitConns(0)
	// A parked session ends at shutdown, told why.
	idle, _ := en.login("kiosk-1", 2)
	poll.Until(t, "the session parked", isParked)
	en.Stop()
	if codes := idle.expectClose(); len(codes) == 0 || codes[len(codes)-1] != wire.ErrBusy.Code {
		t.Errorf("parked session at shutdown: errors %v, want ERROR 0x31 last", codes)
	}
}
