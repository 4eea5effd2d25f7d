package client

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nowserving/nowserving/internal/backoff"
	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/protocol/wire"
)

// Defaults of Opts.
const (
	// DefaultTimeout bounds dialing, the handshake and each attempt of a
	// request.
	DefaultTimeout = 5 * time.Second
	// DefaultRetries is how many times a request is sent again after its
	// first attempt failed.
	DefaultRetries = 5
	// DefaultMinBackoff is the first pause before a redial or a retry.
	DefaultMinBackoff = 500 * time.Millisecond
	// DefaultMaxBackoff caps the pause between redials and retries.
	DefaultMaxBackoff = 5 * time.Second
	// DefaultHeartbeat is the heartbeat interval when WELCOME gives none.
	DefaultHeartbeat = 10 * time.Second
	// FirmwareName is sent in HELLO when Opts.Firmware is empty.
	FirmwareName = "nowserving-go-client/1"
)

// Opts configures a Client. DeviceID, Secret and Role are required and
// must match a device of the daemon's configuration.
type Opts struct {
	// DeviceID is the device id, e.g. "kiosk-1".
	DeviceID string
	// Secret is the device's shared HMAC secret; it never crosses the wire.
	Secret []byte
	// Role is the role the device claims (it must match its configuration).
	Role wire.Role
	// Counter is used by the counter actions when they are given counter 0:
	// 0 means "the keypad's own counter"; a console must name one.
	Counter uint32
	// Site is the site code sent in requests; empty means the device's site.
	Site string
	// BootNonce identifies this "boot" of the device: with the request id it
	// makes the idempotency key the daemon derives. 0 picks a random one.
	// A device that keeps it across restarts (a state file) must also keep
	// FirstRequestID past every id it used (see Client.NextRequestID).
	BootNonce uint64
	// FirstRequestID is the first request id to use; 0 means 1.
	FirstRequestID uint32
	// Firmware is sent in HELLO for the daemon's logs.
	Firmware string
	// TLSConfig, when set, wraps the connection in TLS.
	TLSConfig *tls.Config
	// Timeout bounds the dial, the handshake and each attempt of a request
	// (including waiting for a reconnection); 0 means DefaultTimeout.
	Timeout time.Duration
	// Retries is how many times a request is sent again after a time-out, a
	// dropped connection or a retryable error; 0 means DefaultRetries, a
	// negative value none.
	Retries int
	// Heartbeat overrides the interval from WELCOME; 0 uses WELCOME's.
	Heartbeat time.Duration
	// MinBackoff and MaxBackoff bound the pause between redials and retries;
	// 0 means DefaultMinBackoff and DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// OnState, when set, is called (from the client's goroutine; it must not
	// block) when the connection state changes, with the error that caused
	// it, if any.
	OnState func(State, error)
	// Logger receives connection-level events; nil discards them.
	Logger *slog.Logger
}

func (o Opts) withDefaults() Opts {
	o.Timeout = positive.Or(o.Timeout, DefaultTimeout)
	switch {
	case o.Retries == 0:
		o.Retries = DefaultRetries
	case o.Retries < 0:
		o.Retries = 0
	}
	o.MinBackoff = positive.Or(o.MinBackoff, DefaultMinBackoff)
	o.MaxBackoff = positive.Or(o.MaxBackoff, DefaultMaxBackoff)
	if o.FirstRequestID == 0 {
		o.FirstRequestID = 1
	}
	if o.Firmware == "" {
		o.Firmware = FirmwareName
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.BootNonce == 0 {
		o.BootNonce = RandomBootNonce()
	}
	return o
}

// RandomBootNonce returns a random non-zero boot nonce.
func RandomBootNonce() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
		if n := binary.BigEndian.Uint64(b[:]); n != 0 {
			return n
		}
	}
}

// State is the state of a client's connection.
type State int

// Connection states.
const (
	// StateConnected: authenticated, requests go out at once.
	StateConnected State = iota + 1
	// StateReconnecting: the connection dropped; the client is redialing
	// with back-off, requests wait (each attempt up to Opts.Timeout).
	StateReconnecting
	// StateClosed: Close was called.
	StateClosed
)

// String returns "connected", "reconnecting" or "closed".
func (s State) String() string {
	switch s {
	case StateConnected:
		return "connected"
	case StateReconnecting:
		return "reconnecting"
	case StateClosed:
		return "closed"
	}
	return fmt.Sprintf("state(%d)", int(s))
}

// Client is an authenticated session with the daemon that reconnects by
// itself. Its methods are safe for concurrent use.
type Client struct {
	addrs []string // the daemons to try, in order (Dial's list)
	opts  Opts
	log   *slog.Logger

	nextID atomic.Uint32 // last request id handed out
	resent atomic.Uint64 // requests sent again (RETRY flag)

	mu      sync.Mutex
	at      int           // index in addrs of the current (or last) daemon
	cur     *conn         // nil while reconnecting
	ready   chan struct{} // closed when cur is set; replaced when it is lost
	welcome wire.Welcome
	state   State
	lastErr error // why the last connection or dial failed
	pending map[uint32]chan wire.Frame
	sub     *Subscription
	closed  bool

	done   chan struct{}      // closed by Close
	ctx    context.Context    // cancelled by Close: bounds redials
	cancel context.CancelFunc // cancels ctx
	wg     sync.WaitGroup
}

// Dial connects to the daemon at addr (host:port), authenticates and
// returns the client. addr may list several daemons that share one
// database, separated by commas ("a:7400,b:7400"): Dial takes the first
// that answers, and when the connection is lost the client goes on to
// the next one at once, then round the list with back-off (failover; see
// PROTOCOL.md §7). Requests in flight are resent there with the same
// request id, so the same idempotency key; a subscription resumes from the
// last version it delivered.
//
// A daemon that cannot be reached gives an error wrapping ErrUnreachable
// (once every daemon of the list was tried), a refused authentication one
// wrapping *wire.StatusError (wire.ErrAuthFailed). A daemon that answers
// with a retryable refusal (0x32 too many connections, 0x31 shutting down)
// is tried again with back-off for up to Opts.Timeout, as a device would.
// Once connected, the client reconnects by itself until Close.
func Dial(ctx context.Context, addr string, opts Opts) (*Client, error) {
	if opts.DeviceID == "" {
		return nil, errors.New("client: dial: no device id")
	}
	addrs := SplitList(addr)
	if len(addrs) == 0 {
		return nil, errors.New("client: dial: no daemon address")
	}
	o := opts.withDefaults()
	c := &Client{
		addrs:   addrs,
		opts:    o,
		log:     o.Logger.With("device", o.DeviceID),
		ready:   make(chan struct{}),
		pending: make(map[uint32]chan wire.Frame),
		done:    make(chan struct{}),
	}
	c.nextID.Store(o.FirstRequestID - 1)
	cn, w, err := c.connectAny(ctx, 0)
	deadline := time.Now().Add(o.Timeout)
	for attempt := 0; err != nil && retryableRefusal(err) && ctx.Err() == nil; attempt++ {
		pause := c.redialPause(attempt, err)
		if time.Now().Add(pause).After(deadline) {
			break
		}
		c.log.Info("dial refused for now, trying again", "attempt", attempt+1, "err", err)
		if backoff.Sleep(ctx, pause) != nil {
			break
		}
		cn, w, err = c.connectAny(ctx, 0)
	}
	if err != nil {
		return nil, err
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.install(cn, w)
	c.wg.Add(1)
	go c.run(cn)
	return c, nil
}

// retryableRefusal reports whether the daemon refused the session with an
// error that says trying again may help.
func retryableRefusal(err error) bool {
	var se *wire.StatusError
	return errors.As(err, &se) && se.Retryable
}

// waitError is a refused handshake whose ERROR asked for a pause
// (RetryAfterMS: 0x30 to a HELLO from an address backing off); it
// unwraps to the *wire.StatusError.
type waitError struct {
	err   *wire.StatusError
	after time.Duration
}

func (e *waitError) Error() string { return e.err.Error() }
func (e *waitError) Unwrap() error { return e.err }

// redialPause is the pause before the next dial after err: the jittered
// backoff of attempt, or longer when the daemon asked for a longer wait
// (PROTOCOL.md section 8: reconnect after RetryAfterMS).
func (c *Client) redialPause(attempt int, err error) time.Duration {
	pause := jitter(Backoff(attempt, c.opts.MinBackoff, c.opts.MaxBackoff))
	var we *waitError
	if errors.As(err, &we) {
		pause = max(pause, we.after)
	}
	return pause
}

// Welcome returns the WELCOME of the current (or last) session: site,
// service day, role, bound counter, allowed requests, heartbeat, version.
func (c *Client) Welcome() wire.Welcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.welcome
}

// Class returns the ticket class named code (any case) that WELCOME lists
// for the site (the site's own classes, such as "priority", have values
// from wire.ClassSiteFirst), and false when the site has no such class or
// the daemon predates WELCOME.Classes.
func (c *Client) Class(code string) (wire.ClassDef, bool) {
	for _, cd := range c.Welcome().Classes {
		if strings.EqualFold(cd.Code, code) {
			return cd, true
		}
	}
	return wire.ClassDef{}, false
}

// State returns the connection state and the error behind the last
// disconnection (nil while connected).
func (c *Client) State() (State, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == StateConnected {
		return c.state, nil
	}
	return c.state, c.lastErr
}

// BootNonce returns the boot nonce sent in HELLO (random unless Opts set it).
func (c *Client) BootNonce() uint64 { return c.opts.BootNonce }

// NextRequestID returns the request id the next request will use; a device
// that keeps its boot nonce across restarts stores it and passes it as
// Opts.FirstRequestID.
func (c *Client) NextRequestID() uint32 { return c.nextID.Load() + 1 }

// Resent returns how many times a request was sent again (after a
// time-out, a lost connection or a retryable error such as rate limiting).
func (c *Client) Resent() uint64 { return c.resent.Load() }

// Addr returns the address of the daemon the client is connected to (or
// was last).
func (c *Client) Addr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.addrs[c.at]
}

// SplitList splits a comma-separated list (of daemon addresses, say),
// dropping blanks.
func SplitList(list string) []string {
	var out []string
	for _, a := range strings.Split(list, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// Close ends the session: pending requests fail with ErrClosed, the
// subscription's channel is closed, the connection is closed.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.state = StateClosed
	cn := c.cur
	sub := c.sub
	close(c.done)
	c.cancel()
	c.mu.Unlock()
	if cn != nil {
		cn.fail(ErrClosed)
	}
	if sub != nil {
		sub.finish(ErrClosed)
	}
	c.wg.Wait()
	c.notify(StateClosed, nil)
	return nil
}

func (c *Client) notify(s State, err error) {
	if c.opts.OnState != nil {
		c.opts.OnState(s, err)
	}
}

// newID returns a fresh request id, never 0.
func (c *Client) newID() uint32 {
	for {
		if id := c.nextID.Add(1); id != 0 {
			return id
		}
	}
}

// install makes cn the current connection.
func (c *Client) install(cn *conn, w wire.Welcome) {
	c.mu.Lock()
	c.cur = cn
	c.welcome = w
	c.state = StateConnected
	c.lastErr = nil
	close(c.ready)
	c.mu.Unlock()
}

// run reads the current connection until it drops, then redials with
// back-off and resubscribes, until Close.
func (c *Client) run(cn *conn) {
	defer c.wg.Done()
	for {
		c.serve(cn)
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return
		}
		c.cur = nil
		c.ready = make(chan struct{})
		c.state = StateReconnecting
		c.lastErr = cn.err
		c.mu.Unlock()
		c.log.Warn("connection lost, reconnecting", "addr", c.Addr(), "err", cn.err)
		c.notify(StateReconnecting, cn.err)

		var w wire.Welcome
		var err error
		for attempt := 0; ; attempt++ {
			// With other daemons to go to, the first try is at once and at
			// the next one: the lost daemon is likely down.
			if (attempt > 0 || len(c.addrs) == 1) && !c.sleep(c.redialPause(attempt, err)) {
				return
			}
			cn, w, err = c.connectAny(c.ctx, 1)
			if err == nil {
				break
			}
			c.mu.Lock()
			c.lastErr = err
			c.mu.Unlock()
			c.log.Info("redial failed", "attempt", attempt+1, "err", err)
			c.notify(StateReconnecting, err)
		}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			cn.fail(ErrClosed)
			return
		}
		c.mu.Unlock()
		c.install(cn, w)
		c.log.Info("reconnected", "addr", c.Addr(), "service_day", w.ServiceDay, "version", w.Version)
		c.notify(StateConnected, nil)
		c.mu.Lock()
		sub := c.sub
		c.mu.Unlock()
		if sub != nil {
			c.wg.Go(func() {
				c.resubscribe(sub)
			})
		}
	}
}

// sleep waits d, or returns false when the client is closed first.
func (c *Client) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.done:
		return false
	}
}

func jitter(d time.Duration) time.Duration {
	return d + time.Duration(mrand.Int64N(int64(d)/5+1))
}

// serve reads frames from cn until it fails, with a heartbeat goroutine
// alongside.
func (c *Client) serve(cn *conn) {
	every := c.opts.Heartbeat
	if every <= 0 {
		every = time.Duration(c.Welcome().HeartbeatMS) * time.Millisecond
	}
	every = positive.Or(every, DefaultHeartbeat)
	c.wg.Go(func() {
		c.heartbeat(cn, every)
	})
	for {
		f, err := wire.ReadFrame(cn.br, 0)
		if err != nil {
			cn.fail(err)
			return
		}
		cn.lastRecv.Store(time.Now().UnixNano())
		c.dispatch(cn, f)
	}
}

// heartbeat sends a HEARTBEAT when nothing was sent for one interval and
// drops the connection after three silent intervals.
func (c *Client) heartbeat(cn *conn, every time.Duration) {
	tick := max(every/4, time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-cn.dead:
			return
		case now := <-t.C:
			if now.Sub(time.Unix(0, cn.lastRecv.Load())) > 3*every {
				cn.fail(ErrPeerSilent)
				return
			}
			if now.Sub(time.Unix(0, cn.lastSend.Load())) >= every-tick {
				hb := &wire.Heartbeat{TimeMS: now.UnixMilli(), Version: c.seenVersion()}
				b, err := wire.EncodeMessage(nil, 0, 0, hb)
				if err == nil {
					_ = cn.write(b) // a failed write fails cn; serve sees it
				}
			}
		}
	}
}

func (c *Client) seenVersion() uint64 {
	c.mu.Lock()
	sub := c.sub
	c.mu.Unlock()
	if sub == nil {
		return 0
	}
	return sub.Version()
}

// dispatch routes one frame: answers to their request, events and
// snapshots to the subscription.
func (c *Client) dispatch(cn *conn, f wire.Frame) {
	c.mu.Lock()
	sub := c.sub
	ch := c.pending[f.RequestID]
	c.mu.Unlock()
	switch f.Type {
	case wire.TypeHeartbeat:
		return
	case wire.TypeEvent:
		if sub == nil {
			return
		}
		var e wire.Event
		if err := e.Decode(f.Payload); err != nil {
			c.log.Warn("bad event", "err", err)
			return
		}
		if !sub.push(Update{Event: &e}) {
			cn.fail(ErrSlowConsumer)
		}
		return
	case wire.TypeSnapshot:
		if sub != nil && (f.RequestID == 0 || f.RequestID == sub.reqID.Load()) {
			var s wire.Snapshot
			if err := s.Decode(f.Payload); err == nil {
				if !sub.push(Update{Snapshot: &s}) {
					cn.fail(ErrSlowConsumer)
				}
			}
		}
	case wire.TypeError:
		if f.RequestID == 0 || ch == nil {
			var m wire.ErrorMsg
			if err := m.Decode(f.Payload); err == nil {
				c.log.Warn("daemon error", "code", m.Code, "msg", m.Msg, "request_id", f.RequestID)
				cn.setReason(m.Err())
			}
		}
	}
	if f.RequestID != 0 && ch != nil {
		select {
		case ch <- f:
		default: // an answer already waits: this one is a duplicate
		}
	}
}
