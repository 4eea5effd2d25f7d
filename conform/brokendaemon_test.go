package conform

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
)

// mangle is a listener whose connections rewrite the frames the daemon
// sends: fix returns the frame to send instead (ok false: drop it).
type mangle struct {
	net.Listener
	fix func(wire.Frame) (wire.Frame, bool)
}

func (l *mangle) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &mangledConn{Conn: c, fix: l.fix}, nil
}

type mangledConn struct {
	net.Conn
	fix func(wire.Frame) (wire.Frame, bool)
	mu  sync.Mutex
	buf []byte
}

// Write passes on the whole frames in b, each as fix has it.
func (c *mangledConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = append(c.buf, b...)
	var out []byte
	for {
		f, n, err := wire.DecodeFrame(c.buf)
		if err != nil {
			break
		}
		if g, ok := c.fix(f); ok {
			out = wire.AppendFrame(out, g)
		}
		c.buf = c.buf[n:]
	}
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

func TestBrokenDaemons(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		fix  func(wire.Frame) (wire.Frame, bool)
		fail string
	}{
		{"sends no heartbeats", func(f wire.Frame) (wire.Frame, bool) { return f, f.Type != wire.TypeHeartbeat },
			"the daemon sends HEARTBEAT (request id 0) when idle"},
		{"answers without RESPONSE", func(f wire.Frame) (wire.Frame, bool) {
			if f.Type == wire.TypeSnapshot {
				f.Flags &^= wire.FlagResponse
			}
			return f, true
		}, "an answer has the request's id and the RESPONSE flag"},
		{"puts request id 0 in ERROR", func(f wire.Frame) (wire.Frame, bool) {
			var e wire.ErrorMsg
			if f.Type == wire.TypeError && e.Decode(f.Payload) == nil {
				e.RequestID = 0
				f.Payload, _ = e.AppendBinary(nil)
			}
			return f, true
		}, "ERROR's RequestID field is its frame's request id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := protocoltest.NewHQ(t, heartbeat)
			d.Wrap = func(ln net.Listener) net.Listener { return &mangle{ln, c.fix} }
			d.Start()
			t.Cleanup(d.Stop)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			all := credentials()
			rep, err := Daemon(ctx, DaemonOpts{Addr: d.Addr, Devices: []Credential{all[0], all[2]}, Timeout: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if got := rep.Failures(); !strings.Contains(got, " "+c.fail+": ") {
				t.Errorf("the report does not fail %q; its failures:\n%s", c.fail, got)
			}
		})
	}
}
