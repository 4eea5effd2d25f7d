package conform

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/protocol/wire"
)

// Credential is a device the daemon under test knows.
type Credential struct {
	ID     string
	Secret []byte
	Role   wire.Role
}

// DaemonOpts configure a run against a daemon.
type DaemonOpts struct {
	// Addr is the daemon's protocol address.
	Addr string
	// Devices are the devices to play, at least one. The checks that need
	// a kiosk (or console) to make changes, or a display, keypad or
	// console to subscribe, are skipped when no device has such a role.
	Devices []Credential
	// TLS, when set, wraps each connection in TLS.
	TLS *tls.Config
	// Timeout bounds each answer; 0: 5 s.
	Timeout time.Duration
}

// Daemon plays the devices of o against the daemon at o.Addr and returns
// the report. It returns an error only when it could not run at all (no
// device, no daemon, ctx ended); what the daemon did wrong is in the
// report. The run makes changes at the site: it takes tickets (from
// the first service WELCOME lists) and pauses and resumes a keypad's
// counter; point it at a test site.
func Daemon(ctx context.Context, o DaemonOpts) (*Report, error) {
	if len(o.Devices) == 0 {
		return nil, errors.New("conform: daemon: give at least one device")
	}
	o.Timeout = positive.Or(o.Timeout, 5*time.Second)
	c := &checker{o: o, rep: NewReport(fmt.Sprintf("conform daemon: %s", o.Addr)), ctx: ctx}
	first, err := c.login(o.Devices[0], 1)
	if err != nil {
		return nil, fmt.Errorf("conform: daemon: %w", err)
	}
	c.welcome = first.w
	first.close()
	for _, run := range daemonChecks {
		if ctx.Err() != nil {
			return c.rep, fmt.Errorf("conform: %w", ctx.Err())
		}
		run(c)
	}
	return c.rep, nil
}

// daemonChecks run in order; the rate limit and the wrong MACs come last,
// as their effects (an empty bucket, a back-off) would slow the others.
var daemonChecks = []func(*checker){
	(*checker).checkHandshake,
	(*checker).checkHelloRefusals,
	(*checker).checkBadFrames,
	(*checker).checkPayloads,
	(*checker).checkRequests,
	(*checker).checkIdempotency,
	(*checker).checkSubscribe,
	(*checker).checkHeartbeats,
	(*checker).checkRateLimit,
	(*checker).checkWrongMAC,
	(*checker).checkFailedHandshakes,
}

// checker is the state of a run against a daemon.
type checker struct {
	o       DaemonOpts
	rep     *Report
	ctx     context.Context
	welcome wire.Welcome
	boot    uint64
}

// dconn is one session with the daemon.
type dconn struct {
	*peer
	c      *checker
	cred   Credential
	nextID uint32
	w      wire.Welcome
	events []*wire.Event
}

// role returns the first device with one of roles, in order.
func (c *checker) role(roles ...wire.Role) (Credential, bool) {
	for _, r := range roles {
		for _, d := range c.o.Devices {
			if d.Role == r {
				return d, true
			}
		}
	}
	return Credential{}, false
}

// dial connects to the daemon, without a handshake.
func (c *checker) dial() (*dconn, error) {
	d := net.Dialer{Timeout: c.o.Timeout}
	nc, err := d.DialContext(c.ctx, "tcp", c.o.Addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", c.o.Addr, err)
	}
	if c.o.TLS != nil {
		tc := tls.Client(nc, c.o.TLS)
		if err := tc.HandshakeContext(c.ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", c.o.Addr, err)
		}
		nc = tc
	}
	return &dconn{peer: newPeer(nc), c: c}, nil
}

// login connects as cred with boot nonce boot and authenticates.
func (c *checker) login(cred Credential, boot uint64) (*dconn, error) {
	d, err := c.dial()
	if err != nil {
		return nil, err
	}
	d.cred = cred
	f, err := d.exchange(0, &wire.Hello{DeviceID: cred.ID, Role: cred.Role, ProtocolVersion: wire.ProtocolVersion, BootNonce: boot})
	var ch wire.Challenge
	if err == nil {
		err = d.decode(f, &ch)
	}
	if err != nil {
		d.close()
		return nil, fmt.Errorf("HELLO as %s: %w", cred.ID, err)
	}
	f, err = d.exchange(0, &wire.Auth{MAC: wire.ComputeMAC(cred.Secret, ch.Nonce, cred.ID)})
	if err == nil {
		err = d.decode(f, &d.w)
	}
	if err != nil {
		d.close()
		return nil, fmt.Errorf("AUTH as %s: %w", cred.ID, err)
	}
	return d, nil
}

// decode decodes f into m, which must be of f's type; an ERROR comes back
// as its *wire.StatusError.
func (d *dconn) decode(f wire.Frame, m wire.Message) error {
	if f.Type == wire.TypeError {
		var e wire.ErrorMsg
		if err := e.Decode(f.Payload); err != nil {
			return err
		}
		return e.Err()
	}
	if f.Type != m.Type() {
		return fmt.Errorf("answered %s, want %s", f.Type, m.Type())
	}
	return m.Decode(f.Payload)
}

// exchange sends m with flags fl under a new request id and returns the
// frame answering it.
func (d *dconn) exchange(fl wire.Flags, m wire.Message) (wire.Frame, error) {
	d.nextID++
	return d.exchangeID(d.nextID, fl, m)
}

// exchangeID sends m under request id id and returns its answer.
func (d *dconn) exchangeID(id uint32, fl wire.Flags, m wire.Message) (wire.Frame, error) {
	if err := d.send(id, fl, m); err != nil {
		return wire.Frame{}, err
	}
	return d.answer(id)
}

// do sends m under request id id with flags fl and decodes the answer
// into into (an ERROR comes back as its *wire.StatusError).
func (d *dconn) do(id uint32, fl wire.Flags, m, into wire.Message) error {
	d.nextID = max(d.nextID, id)
	f, err := d.exchangeID(id, fl, m)
	if err != nil {
		return err
	}
	return d.decode(f, into)
}

// rawExchange sends frame b, whose request id is id, and returns its answer.
func (d *dconn) rawExchange(id uint32, b []byte) (wire.Frame, error) {
	if err := d.raw(b); err != nil {
		return wire.Frame{}, err
	}
	return d.answer(id)
}

// answer reads frames until the one answering request id (or an ERROR
// with request id 0), keeping events and skipping heartbeats.
func (d *dconn) answer(id uint32) (wire.Frame, error) {
	for {
		f, err := d.read(d.c.o.Timeout)
		if err != nil {
			return f, err
		}
		switch {
		case f.Type == wire.TypeEvent:
			var e wire.Event
			if e.Decode(f.Payload) == nil {
				d.events = append(d.events, &e)
			}
		case f.RequestID == id && f.Type != wire.TypeHeartbeat, f.Type == wire.TypeError && f.RequestID == 0:
			d.c.checkAnswer(f, id)
			return f, nil
		}
	}
}

// checkAnswer checks the frame answering request id (section 5 and 9).
func (c *checker) checkAnswer(f wire.Frame, id uint32) {
	c.rep.Check(Requests, "an answer has the request's id and the RESPONSE flag", f.RequestID == 0 || f.Flags&wire.FlagResponse != 0,
		fmt.Sprintf("%s for request %d has flags 0x%02x", f.Type, id, f.Flags))
	if f.Type != wire.TypeError {
		return
	}
	var e wire.ErrorMsg
	if err := e.Decode(f.Payload); err != nil {
		c.rep.Fail(Payload, "the daemon's payloads follow the field rules", "ERROR: %v", err)
		return
	}
	c.rep.Check(Errors, "ERROR's RequestID field is its frame's request id", e.RequestID == f.RequestID,
		fmt.Sprintf("field %d, header %d (code 0x%02x)", e.RequestID, f.RequestID, e.Code))
	for _, se := range wire.StatusErrors() {
		if se.Code == e.Code {
			ok := len(e.Msg) <= wire.MaxMsgLen && (e.Msg == se.Msg || strings.HasPrefix(e.Msg, se.Msg+": "))
			c.rep.Check(Errors, "an ERROR's message starts with the table's, is short and stable", ok,
				fmt.Sprintf("0x%02x %q", e.Code, e.Msg))
			c.rep.Check(Errors, "an ERROR's Retryable is the table's", e.Retryable == se.Retryable,
				fmt.Sprintf("0x%02x Retryable %v", e.Code, e.Retryable))
		}
	}
}

// wantError checks that f is ERROR code; then, when closes, that the
// connection is closed, else that it stays open (a STATUS is answered).
func (d *dconn) wantError(s Section, name string, f wire.Frame, err error, code uint16, closes bool) {
	rep := d.c.rep
	if err != nil {
		rep.Fail(s, name, "no answer: %v", err)
		return
	}
	var e wire.ErrorMsg
	if f.Type != wire.TypeError || e.Decode(f.Payload) != nil || e.Code != code {
		rep.Fail(s, name, "answered %s %s, want ERROR 0x%02x", f.Type, describe(f), code)
		return
	}
	if closes {
		_, closed := d.closed(d.c.o.Timeout)
		rep.Check(s, name, closed, "the connection stayed open")
		return
	}
	g, err := d.exchange(0, &wire.Status{})
	rep.Check(s, name, err == nil && g.Type == wire.TypeSnapshot, fmt.Sprintf("the connection did not go on: STATUS got %s %v", g.Type, err))
}

// describe says what an answer frame holds, for a failure's detail.
func describe(f wire.Frame) string {
	m, err := wire.DecodeMessage(f)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	if e, ok := m.(*wire.ErrorMsg); ok {
		return fmt.Sprintf("0x%02x %q", e.Code, e.Msg)
	}
	return fmt.Sprintf("%+v", m)
}
