package protocol_test

import (
	"bufio"
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

func testSite() queue.Site {
	cs := []queue.CounterService{{Service: "A", Weight: 1}, {Service: "B", Weight: 1}}
	return queue.Site{
		ID: "hq", Location: storetest.Shanghai, Rollover: 4 * time.Hour,
		Services: []queue.Service{
			{Code: "A", Prefix: "A", Width: 3, AvgService: 5 * time.Minute, MaxReentries: 2, Names: map[string]string{"en": "General"}},
			{Code: "B", Prefix: "B", Width: 3, AvgService: time.Minute},
			{Code: "F", Prefix: "F", Width: 2, DailyCap: 1},
		},
		Counters: []queue.Counter{
			{ID: "1", Services: cs}, {ID: "2", Services: cs}, {ID: "3", Services: cs},
			{ID: "4", Services: cs}, {ID: "5", Services: cs},
		},
	}
}

// testDevices: kiosk-1..8, keypad-1..5 on counters 1..5, display-1..3,
// console-1. The secret of each is "<id>-secret-0123456789".
func testDevices() []protocol.Device {
	var ds []protocol.Device
	add := func(id string, role wire.Role, counter string) {
		ds = append(ds, protocol.Device{ID: id, Role: role, Site: "hq", Counter: counter, Secret: secretOf(id)})
	}
	for i := 1; i <= 8; i++ {
		add(fmt.Sprintf("kiosk-%d", i), wire.RoleKiosk, "")
	}
	for i := 1; i <= 5; i++ {
		add(fmt.Sprintf("keypad-%d", i), wire.RoleKeypad, fmt.Sprint(i))
	}
	for i := 1; i <= 3; i++ {
		add(fmt.Sprintf("display-%d", i), wire.RoleDisplay, "")
	}
	add("console-1", wire.RoleConsole, "")
	return ds
}

var secretOf = protocoltest.Secret

func roleOf(id string) wire.Role {
	for _, d := range testDevices() {
		if d.ID == id {
			return d.Role
		}
	}
	return wire.RoleKiosk
}

// env is a daemon on loopback: a SQLite store, an engine and a server.
type env struct {
	*protocoltest.Daemon
	t testing.TB
	// tlsClient, when set, makes dial speak TLS.
	tlsClient *tls.Config
}

// engineClock is a fixed day that moves a millisecond per reading.
var engineClock = storetest.NewClock(time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)) // 10:00 in Shanghai

// unstarted returns the test daemon, not started yet; opts adjusts the
// server options.
func unstarted(t testing.TB, opts func(*protocol.Opts)) *env {
	return unstartedSite(t, testSite(), opts)
}

// unstartedSite is unstarted for another site definition (same id, same
// devices).
func unstartedSite(t testing.TB, site queue.Site, opts func(*protocol.Opts)) *env {
	d := protocoltest.New(t, site, testDevices())
	d.Clock, d.ServerOpts = engineClock.Now, opts
	return &env{Daemon: d, t: t}
}

// newEnv starts a daemon; opts adjusts the server options.
func newEnv(t testing.TB, opts func(*protocol.Opts)) *env {
	t.Helper()
	return newEnvSite(t, testSite(), opts)
}

// newEnvSite is newEnv for another site definition.
func newEnvSite(t testing.TB, site queue.Site, opts func(*protocol.Opts)) *env {
	t.Helper()
	en := unstartedSite(t, site, opts)
	en.Start()
	t.Cleanup(en.Stop)
	return en
}

// client is a raw protocol client for tests, written on protocol/wire.
type client struct {
	t     testing.TB
	c     net.Conn
	br    *bufio.Reader
	id    string
	boot  uint64
	next  uint32
	evs   []*wire.Event // events read while waiting for an answer
	other []wire.Message
	// patience is how long read waits for a frame; 0: 10 s.
	patience time.Duration
	// lastVersion is the HELLO's LastVersion: the last event the device
	// says it has seen.
	lastVersion uint64
}

func (en *env) dial() *client {
	en.t.Helper()
	var c net.Conn
	var err error
	if en.tlsClient != nil {
		c, err = tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", en.Addr, en.tlsClient)
	} else {
		c, err = net.DialTimeout("tcp", en.Addr, 5*time.Second)
	}
	if err != nil {
		en.t.Fatalf("dial: %v", err)
	}
	cl := &client{t: en.t, c: c, br: bufio.NewReader(c)}
	en.t.Cleanup(func() { c.Close() })
	return cl
}

// login dials and authenticates device id with boot nonce boot.
func (en *env) login(id string, boot uint64) (*client, *wire.Welcome) {
	en.t.Helper()
	cl := en.dial()
	w, err := cl.auth(id, roleOf(id), boot, secretOf(id))
	if err != nil {
		en.t.Fatalf("login %s: %v", id, err)
	}
	return cl, w
}

func (cl *client) auth(id string, role wire.Role, boot uint64, secret []byte) (*wire.Welcome, error) {
	cl.id, cl.boot = id, boot
	cl.next = 2
	cl.write(1, 0, &wire.Hello{DeviceID: id, Role: role, ProtocolVersion: 1, BootNonce: boot, LastVersion: cl.lastVersion})
	f, m, err := cl.read()
	if err != nil {
		return nil, err
	}
	ch, ok := m.(*wire.Challenge)
	if !ok {
		return nil, fmt.Errorf("got %s, want CHALLENGE: %v", f.Type, m)
	}
	cl.write(2, 0, &wire.Auth{MAC: wire.ComputeMAC(secret, ch.Nonce, id)})
	f, m, err = cl.read()
	if err != nil {
		return nil, err
	}
	switch m := m.(type) {
	case *wire.Welcome:
		cl.next = 3
		return m, nil
	case *wire.ErrorMsg:
		return nil, m.Err()
	}
	return nil, fmt.Errorf("got %s, want WELCOME", f.Type)
}

func (cl *client) write(reqID uint32, fl wire.Flags, m wire.Message) {
	cl.t.Helper()
	b, err := wire.EncodeMessage(nil, reqID, fl, m)
	if err != nil {
		cl.t.Fatalf("encode %s: %v", m.Type(), err)
	}
	cl.raw(b)
}

func (cl *client) raw(b []byte) {
	cl.t.Helper()
	_ = cl.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := cl.c.Write(b); err != nil {
		cl.t.Fatalf("write: %v", err)
	}
}

// heartbeat sends a HEARTBEAT every interval until stop is closed or a
// write fails. It may run beside the test's own writes: each frame goes
// out in one write.
func (cl *client) heartbeat(stop <-chan struct{}, every time.Duration) {
	hb, _ := wire.EncodeMessage(nil, 0, 0, &wire.Heartbeat{})
	for {
		select {
		case <-stop:
			return
		case <-time.After(every):
		}
		_ = cl.c.SetWriteDeadline(time.Now().Add(time.Second))
		if _, err := cl.c.Write(hb); err != nil {
			return
		}
	}
}

// readUntilError reads frames until a read fails, and returns them and
// the codes of the ERROR frames among them.
func (cl *client) readUntilError() (frames []wire.Frame, codes []uint16) {
	for {
		f, m, err := cl.read()
		if err != nil {
			return frames, codes
		}
		frames = append(frames, f)
		if e, ok := m.(*wire.ErrorMsg); ok {
			codes = append(codes, e.Code)
		}
	}
}

// read reads one frame (10 s at most, or cl.patience) and decodes it.
func (cl *client) read() (wire.Frame, wire.Message, error) {
	return cl.readWithin(cmp.Or(cl.patience, 10*time.Second))
}

func (cl *client) readWithin(d time.Duration) (wire.Frame, wire.Message, error) {
	_ = cl.c.SetReadDeadline(time.Now().Add(d))
	f, err := wire.ReadFrame(cl.br, 0)
	if err != nil {
		return f, nil, err
	}
	m, err := wire.DecodeMessage(f)
	return f, m, err
}

// do sends m as the next request and returns the answer with its id,
// keeping events and unsolicited frames that arrive before it.
func (cl *client) do(m wire.Message) wire.Message {
	cl.t.Helper()
	id := cl.next
	cl.next++
	cl.write(id, 0, m)
	return cl.await(id)
}

func (cl *client) await(id uint32) wire.Message {
	cl.t.Helper()
	for {
		f, m, err := cl.read()
		if err != nil {
			cl.t.Fatalf("%s: waiting for answer %d: %v", cl.id, id, err)
		}
		if f.RequestID == id && f.Flags&wire.FlagResponse != 0 {
			return m
		}
		if ev, ok := m.(*wire.Event); ok {
			cl.evs = append(cl.evs, ev)
			continue
		}
		if _, ok := m.(*wire.Heartbeat); ok {
			continue
		}
		cl.other = append(cl.other, m)
	}
}

// ticket sends m and wants a TICKET back.
func (cl *client) ticket(m wire.Message) *wire.Ticket {
	cl.t.Helper()
	a := cl.do(m)
	tk, ok := a.(*wire.Ticket)
	if !ok {
		cl.t.Fatalf("%s: %s: got %T %+v, want TICKET", cl.id, m.Type(), a, a)
	}
	return tk
}

// wantError sends m and wants ERROR code back.
func (cl *client) wantError(m wire.Message, code uint16) *wire.ErrorMsg {
	cl.t.Helper()
	a := cl.do(m)
	e, ok := a.(*wire.ErrorMsg)
	if !ok || e.Code != code {
		cl.t.Fatalf("%s: %s: got %T %+v, want ERROR 0x%02x", cl.id, m.Type(), a, a, code)
	}
	return e
}

// expectClose reads until the server closes, and returns the ERROR codes
// seen on the way (heartbeats and events skipped).
func (cl *client) expectClose() []uint16 {
	cl.t.Helper()
	var codes []uint16
	for {
		_, m, err := cl.read()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, wire.ErrTruncated) || isReset(err) {
				return codes
			}
			cl.t.Fatalf("%s: waiting for close: %v", cl.id, err)
		}
		if e, ok := m.(*wire.ErrorMsg); ok {
			codes = append(codes, e.Code)
		}
	}
}

func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}

// waitConns waits until the server counts n connections.
func (en *env) waitConns(n int) {
	en.t.Helper()
	if !poll.Within(5*time.Second, 2*time.Millisecond, func() bool { return en.Server.Stats().Conns == n }) {
		en.t.Fatalf("server has %d connections, want %d", en.Server.Stats().Conns, n)
	}
}

// refusal is a request a device sends and the error code it must get back
// (0: a ticket), not retryable, with msg in its message.
type refusal struct {
	name string
	c    *client
	m    wire.Message
	code uint16
	msg  string
}

// wantRefusals sends each request in a subtest of its own.
func wantRefusals(t *testing.T, tests []refusal) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.c.t = t
			if tt.code == 0 {
				tt.c.ticket(tt.m)
				return
			}
			e := tt.c.wantError(tt.m, tt.code)
			if !strings.Contains(e.Msg, tt.msg) || e.Retryable {
				t.Errorf("ERROR %q retryable %v, want a message naming %q, not retryable", e.Msg, e.Retryable, tt.msg)
			}
		})
	}
}
