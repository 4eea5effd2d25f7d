package protocol

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// ErrServerClosed is returned by Serve after Shutdown or Close.
var ErrServerClosed = errors.New("protocol: server closed")

// Device is the credential and binding of one device allowed to connect.
type Device struct {
	// ID is the device id sent in HELLO.
	ID string
	// Role is what the device is; HELLO must claim the same role.
	Role wire.Role
	// Site is the device's site. For a console, empty means every site.
	Site string
	// Counter is the counter a keypad is bound to (a queue counter id,
	// decimal digits on the wire); empty for other roles.
	Counter string
	// Secret is the shared HMAC secret.
	Secret []byte
	// Lang is the language of a keypad's LCD lines (its words and the
	// names in them); empty: the site's main language.
	Lang string
}

// RenderFunc renders a ticket as ESC/POS bytes for a kiosk that asked for
// them (TAKE_TICKET WantESCPOS), in language lang ("" for the site's main
// language).
type RenderFunc func(site string, t queue.Ticket, pos queue.Position, lang string) ([]byte, error)

// ReprintFunc prints ticket number of today at site again, on the network
// printer with id printer ("" for the printer of the kiosk that issued the
// ticket). An error wrapping queue.ErrNotFound means there is no such
// ticket; any other error means the ticket did not print and its text says
// why. *devices.Dispatcher's Reprint method has this signature.
type ReprintFunc func(ctx context.Context, site, number, printer string) error

// HealthFunc reports the hardware of a site (LED boards, printers, wired
// keypads) for SNAPSHOTs; *devices.Dispatcher's status gives it.
type HealthFunc func(site string) []wire.DeviceInfo

// PrintFunc prints a ticket a kiosk just took on the network printer that
// kiosk is bound to, and returns nil at once for a kiosk with no printer. An
// error means the ticket did not print and its text says why.
type PrintFunc func(ctx context.Context, device string, t queue.Ticket, pos queue.Position) error

// Metrics receives counts from the server; every method must be safe for
// concurrent use and cheap. Opts.Metrics may be nil.
type Metrics interface {
	// SessionOpened is called when a session is welcomed.
	SessionOpened(role wire.Role)
	// SessionClosed is called when a welcomed session ends, with a short
	// reason ("eof", "timeout", "slow consumer", "shutdown", ...).
	SessionClosed(role wire.Role, reason string)
	// AuthFailed is called for every failed handshake.
	AuthFailed(reason string)
	// Request is called after each request with its outcome: 0 for
	// success, else the wire error code sent.
	Request(t wire.MsgType, code uint16, d time.Duration)
	// ConnRefused is called when a connection is refused at the cap.
	ConnRefused()
	// ConnEvicted is called when a connection that had not authenticated
	// yet is closed to make room for a newer one (Opts.MaxPending).
	ConnEvicted()
}

// Opts configures a Server. Zero values take the defaults of DefaultOpts.
type Opts struct {
	// Engine applies the requests; required.
	Engine *queue.Engine
	// Devices lists who may connect.
	Devices []Device
	// Logger receives session and error logs; nil discards them.
	Logger *slog.Logger
	// Heartbeat is the interval announced in WELCOME; a peer silent for 3
	// intervals is dropped.
	Heartbeat time.Duration
	// IdleTimeout overrides the silence after which a welcomed peer is
	// dropped (default 3 × Heartbeat).
	IdleTimeout time.Duration
	// HandshakeTimeout bounds connect to the verified AUTH: a connection
	// that has not authenticated by then is sent ERROR 0x34 and closed.
	HandshakeTimeout time.Duration
	// WriteTimeout bounds one write to a peer: a peer that takes longer
	// to make room in its socket is dropped as a slow consumer.
	WriteTimeout time.Duration
	// MaxConns caps concurrent authenticated sessions: a connection that
	// arrives, or authenticates, when that many are open is sent ERROR 0x32
	// and closed. Connections still authenticating do not count.
	MaxConns int
	// MaxPending caps connections that have not authenticated yet. One
	// more closes the oldest of them, from the remote host holding the
	// most, with ERROR 0x32. So idle sockets cannot keep a device out: a
	// real device authenticates within milliseconds of connecting, while an
	// idle socket soon becomes the oldest, and a host renewing sockets as
	// fast as it can only ever closes its own.
	MaxPending int
	// SendQueueBytes bounds the bytes queued per session while its socket
	// is full, and SendLag how long the oldest of them may wait: a live
	// frame past either bound drops the session as a slow consumer at
	// once. A burst of events is never too many frames: a peer that reads
	// them stays. A catch-up (a subscriber joining behind) waits for room
	// instead, at its reader's pace.
	SendQueueBytes int
	SendLag        time.Duration
	// RateLimit is the average requests per second per device; RateBurst
	// the bucket size. RateLimit < 0 disables limiting.
	RateLimit float64
	RateBurst int
	// MaxFrame is the largest payload accepted and announced in WELCOME.
	MaxFrame int
	// MaxReplay is the largest gap a SUBSCRIBE catches up by events (and
	// a subscriber's catch-up takes by events); beyond it the subscriber
	// gets a SNAPSHOT and the events after it.
	MaxReplay int
	// TLSConfig, when set, makes Serve wrap its listener in TLS.
	TLSConfig *tls.Config
	// Render renders tickets for kiosks that ask for ESC/POS; nil answers
	// such requests with "printing not configured".
	Render RenderFunc
	// Health reports the site's hardware in SNAPSHOTs; nil reports only the
	// protocol devices' connections.
	Health HealthFunc
	// Print prints the ticket of a TAKE_TICKET that did not ask for ESC/POS
	// bytes, before the kiosk is answered; its failure is answered ERROR
	// 0x2A. Nil prints nothing.
	Print PrintFunc
	// Reprint prints a ticket again for a console's REPRINT; nil answers
	// REPRINT with ERROR 0x2A "printing not configured".
	Reprint ReprintFunc
	// Metrics receives counts; nil ignores them.
	Metrics Metrics
	// Clock is the time source for deadlines and rate limits (default
	// time.Now).
	Clock func() time.Time
}

// DefaultOpts returns the defaults for every field but Engine and Devices.
func DefaultOpts() Opts {
	return Opts{
		Heartbeat:        10 * time.Second,
		HandshakeTimeout: 3 * time.Second,
		WriteTimeout:     10 * time.Second,
		MaxConns:         10000,
		MaxPending:       256,
		SendQueueBytes:   512 << 10,
		SendLag:          10 * time.Second,
		RateLimit:        10,
		RateBurst:        20,
		MaxFrame:         wire.MaxPayload,
		MaxReplay:        1000,
		Clock:            time.Now,
	}
}

// Stats are the server's running counts.
type Stats struct {
	// Conns is the number of open connections, authenticated or not.
	Conns int
	// Pending is the number of connections that have not authenticated
	// yet.
	Pending int
	// Evicted counts connections closed unauthenticated to make room for
	// newer ones (Opts.MaxPending) since New.
	Evicted int64
	// AuthFailures counts failed handshakes since New.
	AuthFailures int64
	// SlowConsumers counts sessions dropped because their queue was full.
	SlowConsumers int64
	// RateLimited counts requests refused by the rate limit.
	RateLimited int64
}

// Server serves the device protocol. Create it with New.
type Server struct {
	o       Opts
	log     *slog.Logger
	eng     *queue.Engine
	metrics Metrics
	frames  frameCache
	views   siteViews // pictures of the sites for keypad answers
	poll    poller    // parks idle sessions
	hubs    hubs      // fan events out to subscribers
	wheel   wheel     // heartbeats and idle time-outs
	loops   sync.Once // starts the poller and the wheel

	mu        sync.Mutex
	devices   map[string]*device // replaced whole by SetDevices
	listeners map[net.Listener]struct{}
	sessions  map[*session]struct{}
	pending   pendingSet // sessions not authenticated yet
	seq       uint64     // sessions admitted, numbering them
	authed    int        // authenticated sessions
	evictLog  evictLog
	guard     authGuard      // back-off of failing handshakes
	refusals  *refusalLog    // summary of refused handshakes
	online    map[string]int // welcomed sessions per device id
	closing   bool
	done      chan struct{} // closed by Shutdown
	wg        sync.WaitGroup

	conns         atomic.Int64
	evicted       atomic.Int64
	authFailures  atomic.Int64
	slowConsumers atomic.Int64
	rateLimited   atomic.Int64
}

// device is a configured device with its resolved binding and rate bucket.
type device struct {
	Device
	counterNum uint32 // keypad: wire number of Counter
	allowed    wire.Actions
	bucket     *bucket
}

// New checks the options and returns a server ready to Serve.
func New(o Opts) (*Server, error) {
	if o.Engine == nil {
		return nil, errors.New("protocol: new server: no engine")
	}
	d := DefaultOpts()
	o.Heartbeat = positive.Or(o.Heartbeat, d.Heartbeat)
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 3 * o.Heartbeat
	}
	o.HandshakeTimeout = positive.Or(o.HandshakeTimeout, d.HandshakeTimeout)
	o.WriteTimeout = positive.Or(o.WriteTimeout, d.WriteTimeout)
	o.MaxConns = positive.Or(o.MaxConns, d.MaxConns)
	o.MaxPending = positive.Or(o.MaxPending, d.MaxPending)
	o.SendQueueBytes = positive.Or(o.SendQueueBytes, d.SendQueueBytes)
	o.SendLag = positive.Or(o.SendLag, d.SendLag)
	o.RateLimit = cmp.Or(o.RateLimit, d.RateLimit)
	o.RateBurst = positive.Or(o.RateBurst, d.RateBurst)
	if o.MaxFrame <= 0 || o.MaxFrame > wire.MaxPayload {
		o.MaxFrame = d.MaxFrame
	}
	o.MaxReplay = positive.Or(o.MaxReplay, d.MaxReplay)
	if o.Clock == nil {
		o.Clock = d.Clock
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{
		o: o, log: o.Logger, eng: o.Engine, devices: map[string]*device{},
		metrics:   o.Metrics,
		listeners: map[net.Listener]struct{}{}, sessions: map[*session]struct{}{}, online: map[string]int{},
		done: make(chan struct{}),
	}
	if s.metrics == nil {
		s.metrics = nopMetrics{}
	}
	s.hubs.ctx, s.hubs.cancel = context.WithCancel(context.Background())
	s.refusals = &refusalLog{log: s.log, now: o.Clock, every: refusalLogEvery}
	devs, err := s.deviceTable(o.Devices)
	if err != nil {
		return nil, err
	}
	s.devices = devs
	return s, nil
}

// addDevice checks one configured device (id, secret, role, site, and a
// keypad's counter) and adds it to devs.
func (s *Server) addDevice(devs map[string]*device, dv Device) error {
	if dv.ID == "" || len(dv.ID) > wire.MaxIDLen {
		return fmt.Errorf("id must be 1..%d bytes", wire.MaxIDLen)
	}
	if _, dup := devs[dv.ID]; dup {
		return errors.New("defined twice")
	}
	if len(dv.Secret) == 0 {
		return errors.New("no secret")
	}
	allowed, ok := roleActions[dv.Role]
	if !ok {
		return fmt.Errorf("unknown role %d", dv.Role)
	}
	if dv.Site != "" {
		if _, err := s.eng.Site(dv.Site); err != nil {
			return err
		}
	} else if dv.Role != wire.RoleConsole {
		return errors.New("no site")
	}
	x := &device{Device: dv, allowed: allowed, bucket: newBucket(s.o.RateLimit, s.o.RateBurst)}
	if dv.Role == wire.RoleKeypad {
		n := queue.CounterNumber(dv.Counter)
		if n == 0 {
			return fmt.Errorf("keypad counter %q must be a decimal number 1..4294967295", dv.Counter)
		}
		site, _ := s.eng.Site(dv.Site)
		if !site.HasCounter(dv.Counter) {
			return fmt.Errorf("%w: %s at %s", queue.ErrUnknownCounter, dv.Counter, dv.Site)
		}
		x.counterNum = n
	}
	devs[dv.ID] = x
	return nil
}

// ParseRole maps a configuration role name (kiosk, keypad, display,
// console) onto its wire value.
func ParseRole(name string) (wire.Role, error) {
	if r, ok := wire.RoleNamed(name); ok {
		return r, nil
	}
	return 0, fmt.Errorf("protocol: unknown role %q", name)
}

// roleActions is what each role may send (PROTOCOL.md §4).
var roleActions = map[wire.Role]wire.Actions{
	wire.RoleKiosk: wire.Allow(wire.TypeTakeTicket, wire.TypeStatus, wire.TypeCheckIn),
	wire.RoleKeypad: wire.Allow(wire.TypeCallNext, wire.TypeCallNumber, wire.TypeRecall, wire.TypeNoShow,
		wire.TypeReenter, wire.TypeStart, wire.TypeComplete, wire.TypeTransfer, wire.TypePause,
		wire.TypeResume, wire.TypeStatus, wire.TypeSubscribe),
	wire.RoleDisplay: wire.Allow(wire.TypeSubscribe, wire.TypeStatus),
	wire.RoleConsole: wire.Allow(wire.TypeTakeTicket, wire.TypeCallNext, wire.TypeCallNumber, wire.TypeRecall,
		wire.TypeNoShow, wire.TypeReenter, wire.TypeStart, wire.TypeComplete, wire.TypeTransfer,
		wire.TypeCancel, wire.TypePause, wire.TypeResume, wire.TypeStatus, wire.TypeSubscribe, wire.TypeReprint, wire.TypeCheckIn),
}

// Stats returns the running counts.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	pending := s.pending.n
	s.mu.Unlock()
	return Stats{
		Conns:         int(s.conns.Load()),
		Pending:       pending,
		Evicted:       s.evicted.Load(),
		AuthFailures:  s.authFailures.Load(),
		SlowConsumers: s.slowConsumers.Load(),
		RateLimited:   s.rateLimited.Load(),
	}
}

// Serve accepts connections on ln until Shutdown or Close, and returns
// ErrServerClosed then. With Opts.TLSConfig the listener is wrapped in TLS.
// Serve may be called on several listeners at once.
func (s *Server) Serve(ln net.Listener) error {
	if s.o.TLSConfig != nil {
		ln = tls.NewListener(ln, s.o.TLSConfig)
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	s.loops.Do(func() {
		s.poll.start(s.log)
		go s.runWheel()
	})
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
		ln.Close()
	}()
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			select {
			case <-s.done:
				return ErrServerClosed
			default:
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", "err", err, "backoff_s", backoff.Seconds())
				select {
				case <-time.After(backoff):
				case <-s.done:
					return ErrServerClosed
				}
				continue
			}
			return fmt.Errorf("protocol: accept: %w", err)
		}
		backoff = 0
		if ss := s.admit(c); ss != nil {
			go ss.serve()
		}
	}
}

// admit registers c as a pending session, closing the oldest pending one
// when there are more than MaxPending, or refuses c when MaxConns sessions
// are authenticated or the server is shutting down (nil then).
func (s *Server) admit(c net.Conn) *session {
	s.mu.Lock()
	closing, full := s.closing, s.authed >= s.o.MaxConns
	if closing || full {
		s.mu.Unlock()
		reason := shuttingDown
		if !closing {
			reason = wire.ErrTooManyConnections
			s.metrics.ConnRefused()
			s.log.Warn("connection refused: too many connections", "remote", c.RemoteAddr().String(), "max", s.o.MaxConns)
		}
		go refuse(c, reason, s.o.Clock())
		return nil
	}
	s.seq++
	if tc, ok := netConn(c).(*net.TCPConn); ok {
		// Bound what the kernel holds for a peer that stops reading.
		_ = tc.SetWriteBuffer(socketSendBuffer)
	}
	ss := s.newSession(c, s.seq)
	s.sessions[ss] = struct{}{}
	s.pending.add(ss)
	var old *session
	if s.pending.n > s.o.MaxPending {
		old = s.pending.victim()
		s.pending.remove(old)
		old.evicted = true
		s.evictLog.note(s, old)
	}
	s.conns.Add(1)
	s.wg.Add(1)
	s.mu.Unlock()
	if old != nil {
		s.evicted.Add(1)
		s.metrics.ConnEvicted()
		old.evict()
	}
	return ss
}

// evictLog keeps evictions from flooding the log: one warning, then at
// most one every evictLogEvery with the count since the last. Guarded by
// Server.mu.
type evictLog struct {
	at time.Time // of the last warning
	n  int       // evictions not reported yet
}

const evictLogEvery = 10 * time.Second

func (l *evictLog) note(s *Server, old *session) {
	l.n++
	now := s.o.Clock()
	if !l.at.IsZero() && now.Sub(l.at) < evictLogEvery {
		return
	}
	s.log.Warn("unauthenticated connections closed: too many pending", "evicted", l.n,
		"last_remote", old.remote, "last_pending_s", now.Sub(old.start).Seconds(), "max_pending", s.o.MaxPending)
	l.at, l.n = now, 0
}

// refuse tells c briefly why it is not served, and closes it.
func refuse(c net.Conn, e *wire.StatusError, now time.Time) {
	_ = c.SetWriteDeadline(now.Add(time.Second))
	if b, err := wire.EncodeMessage(nil, 0, 0, e.Reply(0)); err == nil {
		_, _ = c.Write(b)
	}
	c.Close()
}

// shuttingDown is the ERROR sent to every session at Shutdown.
var shuttingDown = wire.ErrBusy.WithMsg("server busy: shutting down")

// Shutdown stops accepting, tells every session the server is shutting
// down (ERROR 0x31, retryable), lets requests in flight finish and returns
// when every connection is closed, or closes them all when ctx ends first
// and returns ctx's error.
func (s *Server) Shutdown(ctx context.Context) error {
	sessions := s.beginClose()
	for _, ss := range sessions {
		ss.lameDuck()
	}
	idle := make(chan struct{})
	go func() { s.wg.Wait(); s.stopLoops(); close(idle) }()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		for ss := range s.sessions {
			ss.kill(shuttingDown, "shutdown deadline")
		}
		s.mu.Unlock()
		<-idle
		return fmt.Errorf("protocol: shutdown: %w", ctx.Err())
	}
}

// Close closes every listener and connection at once.
func (s *Server) Close() error {
	s.beginClose()
	s.mu.Lock()
	for ss := range s.sessions {
		ss.kill(shuttingDown, "close")
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.stopLoops()
	return nil
}

// StoreDown is the ERROR (request id 0) Release sends when the daemon's
// store has been unreachable too long: retryable, the device goes to the
// next daemon of its list.
var StoreDown = wire.ErrStoreUnavailable.WithMsg("store unavailable: go to another daemon")

// Release closes every welcomed session, sending each e first (with
// request id 0), and returns how many it closed; the server goes on
// accepting. The daemon calls it with StoreDown when its store has been
// unreachable for a while, so devices that know another daemon move
// there instead of being answered 0x41 here. A request in flight loses
// its answer: the device resends it, with the same idempotency key, to
// the daemon it reaches next. Sessions still authenticating are left to
// finish.
func (s *Server) Release(e *wire.StatusError, reason string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for ss := range s.sessions {
		if ss.dev != nil && ss.kill(e, reason) {
			n++
		}
	}
	return n
}

func (s *Server) beginClose() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closing {
		s.closing = true
		close(s.done)
		for ln := range s.listeners {
			ln.Close()
		}
	}
	out := make([]*session, 0, len(s.sessions))
	for ss := range s.sessions {
		out = append(out, ss)
	}
	return out
}

// stopLoops ends the goroutines the sessions shared, once they are gone.
func (s *Server) stopLoops() {
	s.poll.close()
	s.hubs.stop()
}

// socketSendBuffer is the SO_SNDBUF of every connection (Linux doubles
// it): with the send queue's bounds it caps the backlog the daemon holds
// for a peer that does not read.
const socketSendBuffer = 32 << 10

// netConn is the connection under TLS, else c.
func netConn(c net.Conn) net.Conn {
	if tc, ok := c.(*tls.Conn); ok {
		return tc.NetConn()
	}
	return c
}

// release forgets a session whose connection is closed.
func (s *Server) release(ss *session) {
	s.untrack(ss)
	s.conns.Add(-1)
	s.wg.Done()
}

// untrack forgets a session that has ended.
func (s *Server) untrack(ss *session) {
	s.mu.Lock()
	delete(s.sessions, ss)
	s.pending.remove(ss)
	if ss.authed {
		s.authed--
		if s.online[ss.dev.ID]--; s.online[ss.dev.ID] <= 0 {
			delete(s.online, ss.dev.ID)
		}
	}
	s.mu.Unlock()
}

// authenticate moves a session whose AUTH verified from the pending ones to
// the authenticated ones, and counts its device online. When MaxConns
// sessions are authenticated already, or the session was evicted meanwhile,
// it returns the ERROR to send and a reason instead, and leaves the session
// for untrack.
func (s *Server) authenticate(ss *session, dev *device) (*wire.StatusError, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss.evicted {
		return tooManyPending, "evicted"
	}
	if s.authed >= s.o.MaxConns {
		s.metrics.ConnRefused()
		s.log.Warn("session refused: too many connections", "remote", ss.remote, "device", dev.ID, "max", s.o.MaxConns)
		return wire.ErrTooManyConnections, "too many connections"
	}
	s.pending.remove(ss)
	ss.authed = true
	ss.dev = dev // under s.mu: SetDevices reads it
	s.authed++
	s.online[dev.ID]++
	return nil, ""
}

// snapshotMsg is the SNAPSHOT of a site with the health of its devices: the
// configured keypads, kiosks and displays (connected or not) and what
// Opts.Health reports of the hardware.
func (s *Server) snapshotMsg(site *queue.Site, snap *queue.Snapshot) *wire.Snapshot {
	m := snapshotBody(site, snap)
	s.mu.Lock()
	ids := make([]string, 0, len(s.devices))
	for id, d := range s.devices {
		if d.Site == site.ID && d.Role != wire.RoleConsole {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		d := s.devices[id]
		di := wire.DeviceInfo{ID: id, Kind: "device", Counter: d.counterNum, Online: s.online[id] > 0}
		if !di.Online {
			di.Detail = "not connected"
		}
		m.Devices = append(m.Devices, di)
	}
	s.mu.Unlock()
	if s.o.Health != nil {
		m.Devices = append(m.Devices, s.o.Health(site.ID)...)
	}
	return m
}

type nopMetrics struct{}

func (nopMetrics) SessionOpened(wire.Role)                     {}
func (nopMetrics) SessionClosed(wire.Role, string)             {}
func (nopMetrics) AuthFailed(string)                           {}
func (nopMetrics) Request(wire.MsgType, uint16, time.Duration) {}
func (nopMetrics) ConnRefused()                                {}
func (nopMetrics) ConnEvicted()                                {}
