package client

import (
	"bufio"
	"fmt"
	"net"
	"sync"
	"testing"

	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/protocol/wire"
)

// fakeDaemon is a wire-level stand-in for the daemon, for tests of the
// client's own logic only (retries, reconnects, resume): it authenticates,
// issues tickets idempotently, keeps an event log and can be told to
// misbehave. The end-to-end tests against the real server live with the
// server and in cmd/nowserving.
type fakeDaemon struct {
	*conntest.Server // Accepted: the dials
	t                testing.TB

	mu       sync.Mutex
	secrets  map[string]string
	tickets  map[string]*wire.Ticket // by idempotency key
	seq      int
	frames   []wire.Frame // every request received, in order
	events   []wire.Event
	subs     map[net.Conn]*fakeSub
	hbSeen   int
	onReq    func(fc *fakeConn, f wire.Frame) bool // true: handled
	snapshot func(from uint64) bool                // true: answer SUBSCRIBE with a SNAPSHOT
}

type fakeSub struct {
	fc *fakeConn
}

type fakeConn struct {
	d     *fakeDaemon
	nc    net.Conn
	hello wire.Hello
	wmu   sync.Mutex
}

func newFakeDaemon(t testing.TB) *fakeDaemon {
	t.Helper()
	d := &fakeDaemon{
		Server:  conntest.Listen(t),
		t:       t,
		secrets: map[string]string{"kiosk-1": "kiosk-1-secret-xx", "display-1": "display-1-secret"},
		tickets: map[string]*wire.Ticket{},
		subs:    map[net.Conn]*fakeSub{},
	}
	d.Serve(d.serve)
	return d
}

// dropAll closes every connection (the daemon side of a network cut).
func (d *fakeDaemon) dropAll() {
	d.CutAll()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.subs = map[net.Conn]*fakeSub{}
}

func (fc *fakeConn) send(id uint32, fl wire.Flags, m wire.Message) {
	b, err := wire.EncodeMessage(nil, id, fl, m)
	if err != nil {
		panic(err)
	}
	fc.wmu.Lock()
	defer fc.wmu.Unlock()
	_, _ = fc.nc.Write(b)
}

func (d *fakeDaemon) serve(nc net.Conn) {
	defer nc.Close()
	fc := &fakeConn{d: d, nc: nc}
	br := bufio.NewReader(nc)
	f, err := wire.ReadFrame(br, 0)
	if err != nil || f.Type != wire.TypeHello {
		return
	}
	if err := fc.hello.Decode(f.Payload); err != nil {
		return
	}
	nonce := make([]byte, wire.NonceSize)
	for i := range nonce {
		nonce[i] = byte(i)
	}
	fc.send(f.RequestID, wire.FlagResponse, &wire.Challenge{Nonce: nonce})
	f, err = wire.ReadFrame(br, 0)
	if err != nil || f.Type != wire.TypeAuth {
		return
	}
	var a wire.Auth
	_ = a.Decode(f.Payload)
	d.mu.Lock()
	secret, ok := d.secrets[fc.hello.DeviceID]
	version := uint64(len(d.events))
	d.mu.Unlock()
	if !ok || !wire.VerifyMAC([]byte(secret), nonce, fc.hello.DeviceID, a.MAC) {
		fc.send(f.RequestID, wire.FlagResponse, wire.ErrAuthFailed.Reply(f.RequestID))
		return
	}
	fc.send(f.RequestID, wire.FlagResponse, &wire.Welcome{
		Site: "main", ServiceDay: "2026-11-30", Role: fc.hello.Role, HeartbeatMS: 60000, Version: version,
		Allowed: wire.Allow(wire.TypeTakeTicket, wire.TypeStatus, wire.TypeSubscribe),
	})
	for {
		f, err := wire.ReadFrame(br, 0)
		if err != nil {
			d.mu.Lock()
			delete(d.subs, nc)
			d.mu.Unlock()
			return
		}
		if f.Type == wire.TypeHeartbeat {
			d.mu.Lock()
			d.hbSeen++
			d.mu.Unlock()
			continue
		}
		d.mu.Lock()
		d.frames = append(d.frames, f)
		on := d.onReq
		d.mu.Unlock()
		if on != nil && on(fc, f) {
			continue
		}
		d.answer(fc, f)
	}
}

// answer is the well-behaved daemon.
func (d *fakeDaemon) answer(fc *fakeConn, f wire.Frame) {
	switch f.Type {
	case wire.TypeTakeTicket:
		t := d.issue(fc, f)
		fc.send(f.RequestID, wire.FlagResponse, t)
	case wire.TypeSubscribe:
		var s wire.Subscribe
		_ = s.Decode(f.Payload)
		d.mu.Lock()
		snap := s.FromVersion == 0 || s.Snapshot || (d.snapshot != nil && d.snapshot(s.FromVersion))
		if snap {
			fc.send(f.RequestID, wire.FlagResponse, &wire.Snapshot{Version: uint64(len(d.events)), Site: "main"})
			s.FromVersion = uint64(len(d.events))
		} else {
			fc.send(f.RequestID, wire.FlagResponse, &wire.OK{})
		}
		for _, e := range d.events[min(int(s.FromVersion), len(d.events)):] {
			fc.send(0, 0, &e)
		}
		d.subs[fc.nc] = &fakeSub{fc: fc}
		d.mu.Unlock()
	default:
		fc.send(f.RequestID, wire.FlagResponse, wire.ErrForbidden.Reply(f.RequestID))
	}
}

// issue returns the ticket for the request's idempotency key, issuing one
// (and an ISSUED event) the first time.
func (d *fakeDaemon) issue(fc *fakeConn, f wire.Frame) *wire.Ticket {
	var m wire.TakeTicket
	_ = m.Decode(f.Payload)
	key := m.IdemKey
	if key == "" {
		key = wire.DerivedKey(fc.hello.DeviceID, fc.hello.BootNonce, f.RequestID)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if t, ok := d.tickets[key]; ok {
		return t
	}
	d.seq++
	t := &wire.Ticket{ID: uint64(d.seq), Service: m.Service, Number: fmt.Sprintf("%s%03d", m.Service, d.seq), Status: wire.StatusWaiting}
	d.tickets[key] = t
	d.emitLocked(wire.Event{Kind: wire.EventIssued, Number: t.Number, Service: m.Service})
	return t
}

// emit appends an event and pushes it to the live subscribers.
func (d *fakeDaemon) emit(e wire.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.emitLocked(e)
}

func (d *fakeDaemon) emitLocked(e wire.Event) {
	e.Version = uint64(len(d.events) + 1)
	d.events = append(d.events, e)
	for _, s := range d.subs {
		s.fc.send(0, 0, &e)
	}
}

func (d *fakeDaemon) requests(t wire.MsgType) []wire.Frame {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []wire.Frame
	for _, f := range d.frames {
		if f.Type == t {
			out = append(out, f)
		}
	}
	return out
}

func (d *fakeDaemon) subscribed() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.subs)
}
