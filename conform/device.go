package conform

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"time"

	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/protocol/wire"
)

// DeviceOpts configure a run against a device under test.
type DeviceOpts struct {
	// Role is what the device is: kiosk, keypad or display.
	Role wire.Role
	// DeviceID is the id the device must send in HELLO; empty: any.
	DeviceID string
	// Secret is the device's secret: its AUTH must carry the HMAC with it.
	Secret []byte
	// Heartbeat is the interval announced in WELCOME; 0: 500 ms (short, so
	// the run takes seconds).
	Heartbeat time.Duration
	// Wait bounds how long the device may take to connect or to send its
	// next request (a person may have to press a key); 0: 30 s.
	Wait time.Duration
	// Prompt, when set, is told what the person at the device should do
	// next (press a key, take a ticket).
	Prompt io.Writer
}

func (o DeviceOpts) withDefaults() DeviceOpts {
	o.Heartbeat = positive.Or(o.Heartbeat, 500*time.Millisecond)
	o.Wait = positive.Or(o.Wait, 30*time.Second)
	return o
}

// Device plays the daemon for the device under test, which connects to ln,
// and returns the report. It returns an error only when it could not run
// (ctx ended); what the device did wrong is in the report. It closes ln.
func Device(ctx context.Context, ln net.Listener, o DeviceOpts) (*Report, error) {
	o = o.withDefaults()
	switch o.Role {
	case wire.RoleKiosk, wire.RoleKeypad, wire.RoleDisplay:
	default:
		return nil, fmt.Errorf("conform: device role %s: want kiosk, keypad or display", o.Role)
	}
	h := &harness{o: o, rep: NewReport(fmt.Sprintf("conform %s: device under test on %s", o.Role, ln.Addr())),
		conns: make(chan net.Conn), seen: map[reqKey]wire.Message{}, answered: map[reqKey]bool{}, bootOf: map[uint32]uint64{}, noRetry: map[reqKey]bool{}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go h.accept(ctx, ln)
	defer ln.Close()
	steps := requestSteps
	if o.Role == wire.RoleDisplay {
		steps = displaySteps
	}
	for _, s := range steps {
		if err := s.run(h, ctx); err != nil {
			if ctx.Err() != nil {
				return h.rep, fmt.Errorf("conform: %w", ctx.Err())
			}
			h.rep.Fail(s.section, s.name, "%v", err)
			if errors.Is(err, errGone) {
				break // the device is not coming back: the rest cannot run
			}
		}
	}
	if h.p != nil {
		h.p.close()
	}
	return h.rep, nil
}

// errGone: the device did not connect or send within DeviceOpts.Wait.
var errGone = errors.New("the device did not connect or send in time")

// reqKey names a request: a request id is unique within a boot of the
// device (a new process or a reboot starts again at 1).
type reqKey struct {
	boot uint64
	id   uint32
}

// pending is a request read ahead by one step, for the next.
type pending struct {
	f wire.Frame
	m wire.Message
}

// harness is the state of a run: the device's current connection and what
// it has sent.
type harness struct {
	o     DeviceOpts
	rep   *Report
	conns chan net.Conn
	p     *peer

	hello     wire.Hello              // of the current connection
	bootOf    map[uint32]uint64       // boot nonce of the connection each request id came on
	seen      map[reqKey]wire.Message // requests by boot and request id
	answered  map[reqKey]bool         // request ids answered with success
	noRetry   map[reqKey]bool         // request ids refused without Retryable
	tickets   int
	version   uint64 // the site version WELCOME announces
	pending   *pending
	badFrames int // in a row
	prompted  string
}

func (h *harness) accept(ctx context.Context, ln net.Listener) {
	for {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		select {
		case h.conns <- nc:
		case <-ctx.Done():
			nc.Close()
			return
		}
	}
}

// prompt tells the person at the device what to do, once per instruction.
func (h *harness) prompt(what string) {
	if h.o.Prompt != nil && what != h.prompted {
		fmt.Fprintf(h.o.Prompt, "conform: %s\n", what)
	}
	h.prompted = what
}

// nextConn waits for the device's next connection.
func (h *harness) nextConn(ctx context.Context) (*peer, time.Time, error) {
	if h.p != nil {
		h.p.close()
		h.p = nil
	}
	if h.hello.DeviceID == "" {
		h.prompt("connect the device")
	}
	t := time.NewTimer(h.o.Wait)
	defer t.Stop()
	select {
	case nc := <-h.conns:
		return newPeer(nc), time.Now(), nil
	case <-t.C:
		return nil, time.Time{}, errGone
	case <-ctx.Done():
		return nil, time.Time{}, ctx.Err()
	}
}

// connect waits for the device to connect and walks it through the
// handshake, checking its HELLO and AUTH.
func (h *harness) connect(ctx context.Context) error {
	p, _, err := h.nextConn(ctx)
	if err != nil {
		return err
	}
	return h.handshake(p)
}

// handshake reads HELLO on p, sends CHALLENGE, checks AUTH and welcomes
// the device.
func (h *harness) handshake(p *peer) error {
	hello, id, err := h.readHello(p)
	if err != nil {
		return err
	}
	nonce := make([]byte, wire.NonceSize)
	_, _ = rand.Read(nonce)
	if err := p.send(id, wire.FlagResponse, &wire.Challenge{Nonce: nonce}); err != nil {
		return err
	}
	f, err := p.read(3 * time.Second)
	if err != nil {
		h.rep.Fail(Session, "AUTH within 3 s of CHALLENGE", "%v", err)
		return err
	}
	h.rep.Pass(Session, "AUTH within 3 s of CHALLENGE")
	var auth wire.Auth
	if !h.frameOK(f, wire.TypeAuth, &auth) {
		return errors.New("no AUTH after CHALLENGE")
	}
	if !wire.VerifyMAC(h.o.Secret, nonce, hello.DeviceID, auth.MAC) {
		h.rep.Fail(Session, "AUTH carries HMAC-SHA256(secret, nonce || device id)", "the MAC does not match the secret given")
		_ = p.send(f.RequestID, wire.FlagResponse, wire.ErrAuthFailed.Reply(f.RequestID))
		p.close()
		return errors.New("authentication failed")
	}
	h.rep.Pass(Session, "AUTH carries HMAC-SHA256(secret, nonce || device id)")
	h.p = p
	return p.send(f.RequestID, wire.FlagResponse, h.welcome())
}

// readHello reads and checks the first frame of a connection.
func (h *harness) readHello(p *peer) (*wire.Hello, uint32, error) {
	f, err := p.read(3 * time.Second)
	if err != nil {
		h.rep.Fail(Session, "HELLO is the first frame, sent at once", "%v", err)
		return nil, 0, err
	}
	var hello wire.Hello
	if !h.frameOK(f, wire.TypeHello, &hello) {
		h.rep.Fail(Session, "HELLO is the first frame, sent at once", "got %s", f.Type)
		return nil, 0, errors.New("no HELLO")
	}
	h.rep.Pass(Session, "HELLO is the first frame, sent at once")
	h.rep.Check(Session, "HELLO claims the role under test", hello.Role == h.o.Role, fmt.Sprintf("role %s", hello.Role))
	h.rep.Check(Session, "HELLO ProtocolVersion is 1", hello.ProtocolVersion == wire.ProtocolVersion, fmt.Sprintf("version %d", hello.ProtocolVersion))
	if h.o.DeviceID != "" {
		h.rep.Check(Session, "HELLO DeviceID is the device's id", hello.DeviceID == h.o.DeviceID, fmt.Sprintf("%q", hello.DeviceID))
	}
	h.hello = hello
	return &hello, f.RequestID, nil
}

// welcome is the WELCOME of the conformance "site".
func (h *harness) welcome() *wire.Welcome {
	w := &wire.Welcome{
		ServerTimeMS: time.Now().UnixMilli(), Site: "conform", ServiceDay: time.Now().UTC().Format("2006-01-02"),
		Role: h.o.Role, Allowed: wire.RoleActions(h.o.Role), HeartbeatMS: uint32(h.o.Heartbeat.Milliseconds()),
		Version: h.version, MaxPayload: wire.MaxPayload, RateLimit: 10, RateBurst: 20,
		Languages: []string{"en"}, Services: []wire.ServiceDef{{Code: "A", Names: []string{"General"}}},
		Classes: []wire.ClassDef{{Value: wire.ClassNormal, Code: "normal", Names: []string{"Normal"}}},
	}
	if h.o.Role == wire.RoleKeypad {
		w.Counter = 1
	}
	return w
}

// frameOK checks a frame from the device against sections 2, 3 and 5 and
// decodes it into m when it is of type want.
func (h *harness) frameOK(f wire.Frame, want wire.MsgType, m wire.Message) bool {
	h.rep.Check(Frame, "reserved flag bits are 0", f.Flags&^(wire.FlagResponse|wire.FlagRetry) == 0, fmt.Sprintf("flags 0x%02x on %s", f.Flags, f.Type))
	h.rep.Check(Frame, "a device never sets RESPONSE", f.Flags&wire.FlagResponse == 0, fmt.Sprintf("on %s", f.Type))
	if f.Type != want {
		return false
	}
	if err := m.Decode(f.Payload); err != nil {
		h.rep.Fail(Payload, "payloads follow the field rules and the required fields", "%s: %v", f.Type, err)
		return false
	}
	h.rep.Pass(Payload, "payloads follow the field rules and the required fields")
	return true
}

// request returns the next request the device sends, reconnecting (and
// checking the handshake) when the connection is gone. Heartbeats are
// checked and skipped on the way.
func (h *harness) request(ctx context.Context, what string) (wire.Frame, wire.Message, error) {
	if p := h.pending; p != nil {
		h.pending = nil
		return p.f, p.m, nil
	}
	for {
		if h.p == nil {
			if err := h.connect(ctx); err != nil {
				return wire.Frame{}, nil, err
			}
		}
		h.prompt(what)
		f, err := h.p.read(h.o.Wait)
		switch {
		case errors.Is(err, errTimeout):
			return wire.Frame{}, nil, errGone
		case errors.Is(err, io.EOF):
			h.p.close()
			h.p = nil
			continue
		case err != nil:
			h.rep.Fail(Frame, "frames are sound (magic, version, length, CRC-32)", "%v", err)
			if h.badFrames++; h.badFrames >= 5 {
				return wire.Frame{}, nil, fmt.Errorf("%w: %d bad frames in a row", errGone, h.badFrames)
			}
			_ = h.p.send(0, 0, wire.StatusOf(err).Reply(0))
			h.p.close()
			h.p = nil
			continue
		}
		h.rep.Pass(Frame, "frames are sound (magic, version, length, CRC-32)")
		h.badFrames = 0
		if f.Type == wire.TypeHeartbeat {
			h.heartbeat(f)
			continue
		}
		if m, ok := h.checkRequest(f); ok {
			return f, m, nil
		}
	}
}

// heartbeat checks a HEARTBEAT from the device.
func (h *harness) heartbeat(f wire.Frame) {
	var hb wire.Heartbeat
	if h.frameOK(f, wire.TypeHeartbeat, &hb) {
		h.rep.Check(Frame, "HEARTBEAT carries request id 0", f.RequestID == 0, fmt.Sprintf("request id %d", f.RequestID))
	}
}

// checkRequest checks a frame that should be a request; false when it is
// none (answered with ERROR as the daemon would).
func (h *harness) checkRequest(f wire.Frame) (wire.Message, bool) {
	if !f.Type.IsRequest() {
		h.rep.Fail(Requests, "a device sends only HELLO, AUTH, HEARTBEAT and requests", "sent %s after WELCOME", f.Type)
		_ = h.p.send(f.RequestID, wire.FlagResponse, wire.ErrUnsupportedType.Reply(f.RequestID))
		return nil, false
	}
	m, err := wire.New(f.Type)
	if err != nil || !h.frameOK(f, f.Type, m) {
		_ = h.p.send(f.RequestID, wire.FlagResponse, wire.ErrBadPayload.Reply(f.RequestID))
		return nil, false
	}
	allowed := wire.RoleActions(h.o.Role).Allows(f.Type)
	h.rep.Check(Session, "requests are within WELCOME's Allowed", allowed, fmt.Sprintf("%s from a %s", f.Type, h.o.Role))
	if !allowed {
		_ = h.p.send(f.RequestID, wire.FlagResponse, wire.ErrForbidden.Reply(f.RequestID))
		return nil, false
	}
	h.rep.Check(Frame, "a request has a request id other than 0", f.RequestID != 0, f.Type.String())
	if h.o.Role == wire.RoleKeypad {
		c := reflect.ValueOf(m).Elem().FieldByName("Counter")
		h.rep.Check(Session, "a keypad names counter 0 or its own", !c.IsValid() || c.Uint() == 0 || c.Uint() == 1,
			fmt.Sprintf("%s for counter %v, bound to 1", f.Type, c))
	}
	h.checkIDs(f, m)
	return m, true
}

// checkIDs checks the request id and retry rules of sections 2, 5, 6 and 9.
func (h *harness) checkIDs(f wire.Frame, m wire.Message) {
	key := reqKey{h.hello.BootNonce, f.RequestID}
	prev, known := h.seen[key]
	if f.Flags&wire.FlagRetry == 0 {
		h.rep.Check(Frame, "a request id is not reused within a boot", !known,
			fmt.Sprintf("request id %d sent again without RETRY", f.RequestID))
		h.seen[key] = m
		h.bootOf[f.RequestID] = h.hello.BootNonce
		return
	}
	if boot, ok := h.bootOf[f.RequestID]; ok && !known {
		h.rep.Fail(Retries, "the boot nonce is kept across reconnects", "request %d sent with boot nonce %016x, retried with %016x", f.RequestID, boot, key.boot)
		prev, known = h.seen[reqKey{boot, f.RequestID}]
	} else if known {
		h.rep.Pass(Retries, "the boot nonce is kept across reconnects")
	}
	h.rep.Check(Retries, "RETRY is set only on a request sent before", known, fmt.Sprintf("request id %d is new", f.RequestID))
	if !known {
		h.seen[key] = m
		return
	}
	h.rep.Check(Retries, "a retry has the same request id, fields and idempotency key", reflect.DeepEqual(prev, m),
		fmt.Sprintf("request %d was %+v, its retry %+v", f.RequestID, prev, m))
	if h.answered[h.key(f)] {
		h.rep.Fail(Requests, "an answered request is not sent again", "request %d resent after its answer", f.RequestID)
	}
	if h.noRetry[h.key(f)] {
		h.rep.Fail(Errors, "a request refused without Retryable is not retried", "request %d resent after a non-retryable ERROR", f.RequestID)
	}
}

// answer sends the success answer to request m of frame f.
func (h *harness) answer(f wire.Frame, m wire.Message) error {
	h.answered[h.key(f)] = true
	return h.p.send(f.RequestID, wire.FlagResponse, h.answerFor(m))
}

// answerFor is the success answer to m.
func (h *harness) answerFor(m wire.Message) wire.Message {
	switch m := m.(type) {
	case *wire.TakeTicket:
		h.tickets++
		h.version++
		return &wire.Ticket{ID: uint64(h.tickets), Site: "conform", Service: "A", Number: fmt.Sprintf("A%03d", h.tickets),
			Status: wire.StatusWaiting, IssuedMS: time.Now().UnixMilli(), ServiceDay: time.Now().UTC().Format("2006-01-02"), Version: h.version}
	case *wire.Pause, *wire.Resume, *wire.Reprint:
		h.version++
		return &wire.OK{Version: h.version, LCD: []string{"counter 1"}}
	case *wire.Subscribe:
		return h.snapshot(h.version)
	case *wire.Status:
		if m.Number == "" {
			return h.snapshot(h.version)
		}
	}
	h.version++
	return &wire.Ticket{ID: 1, Site: "conform", Service: "A", Number: "A001", Status: wire.StatusCalled, Counter: 1, CallCount: 1,
		ServiceDay: time.Now().UTC().Format("2006-01-02"), Version: h.version, LCD: []string{"A001 -> 1"}}
}

func (h *harness) snapshot(v uint64) *wire.Snapshot {
	return &wire.Snapshot{Version: v, Site: "conform", ServiceDay: time.Now().UTC().Format("2006-01-02"), TimeMS: time.Now().UnixMilli(),
		Services: []wire.ServiceInfo{{Code: "A", Name: "General", Open: true}},
		Counters: []wire.CounterInfo{{ID: 1, Name: "1", State: wire.CounterOpen}}}
}

// refuse answers request f with e (for f's request id).
func (h *harness) refuse(f wire.Frame, e *wire.ErrorMsg) error {
	if !e.Retryable {
		h.noRetry[h.key(f)] = true
	}
	return h.p.send(f.RequestID, wire.FlagResponse, e)
}

// key names request f of the current connection's boot.
func (h *harness) key(f wire.Frame) reqKey { return reqKey{h.hello.BootNonce, f.RequestID} }
