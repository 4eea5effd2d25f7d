package protocol

import (
	"bufio"
	"container/list"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// readBufferSize is the size of the bufio.Reader a session borrows while it
// reads: a header and a typical request fit; larger payloads are read
// straight into their buffer.
const readBufferSize = 1024

// readers lends read buffers to sessions that have bytes to read: an idle
// session holds none.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufferSize) }}

func getReader(c net.Conn) *bufio.Reader {
	br := readers.Get().(*bufio.Reader)
	br.Reset(c)
	return br
}

func putReader(br *bufio.Reader) {
	br.Reset(nil)
	readers.Put(br)
}

// errLameDuck stops a read loop when the server shuts down.
var errLameDuck = errors.New("protocol: server shutting down")

// errEvicted stops a handshake closed to make room for newer connections.
var errEvicted = errors.New("protocol: evicted while authenticating")

// errKilled stops the reads of a session that was killed.
var errKilled = errors.New("protocol: session killed")

// tooManyPending is the ERROR sent to an evicted connection.
var tooManyPending = wire.ErrTooManyConnections.WithMsg("too many connections: too many authenticating, reconnect")

// session is one connection. A welcomed session that has nothing to read
// has no goroutine: it is parked in the server's poller, which starts one
// (readable) when bytes arrive; that goroutine reads and handles frames
// until none are buffered and parks the session again. Writes go through
// out, whose flusher goroutine runs only while frames are queued.
// Heartbeats and the idle time-out come from the server's wheel.
//
// The read side has one owner at a time: the goroutine running the
// handshake, then a readable goroutine, or the poller while parked. Whoever
// ends the session (teardown) must own it: a goroutine that wants to end a
// parked session takes it from the poller first (take, stopReading).
type session struct {
	srv    *Server
	conn   net.Conn
	raw    syscall.RawConn // of the TCP socket, for the poller; nil: none
	remote string
	host   string // remote machine, for Server.pending
	seq    uint64 // admission order
	start  time.Time

	dev   *device // set once authenticated
	hello wire.Hello

	// Guarded by srv.mu.
	pending *list.Element // in srv.pending while not authenticated
	authed  bool          // counted in srv.authed
	evicted bool          // closed by admit for a newer connection

	out       sendQueue
	lastRead  atomic.Int64 // Opts.Clock unix nanoseconds of the last frame read or handled
	lastWrite atomic.Int64 // ... of the last frame queued
	polled    bool         // registered in the poller; owner only

	mu     sync.Mutex // guards stop, parked and read deadlines; before poller.mu
	stop   error      // errLameDuck, errEvicted or errKilled: reads stop
	parked bool       // in the poller: no goroutine reads

	sub *member // the subscription; the read side's owner's
	// resources is the resource filter of the last SUBSCRIBE, for the
	// SNAPSHOT the hub sends unasked (nil map: every resource).
	resources atomic.Pointer[map[string]bool]
}

// newSession returns the session of a connection just accepted.
func (s *Server) newSession(c net.Conn, seq uint64) *session {
	ss := &session{
		srv: s, conn: c, remote: c.RemoteAddr().String(), host: hostOf(c.RemoteAddr()), seq: seq, start: s.o.Clock(),
	}
	ss.out.maxBytes, ss.out.maxLag = s.o.SendQueueBytes, s.o.SendLag
	if sc, ok := netConn(c).(syscall.Conn); ok {
		ss.raw, _ = sc.SyscallConn()
	}
	return ss
}

// serve runs a session admitted by Server.admit: the handshake, then the
// frames that came with it, after which the session parks.
func (ss *session) serve() {
	s := ss.srv
	br := getReader(ss.conn)
	if !ss.handshake(br) {
		putReader(br)
		ss.conn.Close()
		s.release(ss)
		return
	}
	s.metrics.SessionOpened(ss.dev.Role)
	s.log.Info("session welcomed", "device", ss.dev.ID, "role", ss.dev.Role.String(), "remote", ss.remote,
		"firmware", ss.hello.Firmware, "boot_nonce", ss.hello.BootNonce, "last_version", ss.hello.LastVersion)
	now := s.o.Clock().UnixNano()
	ss.lastRead.Store(now)
	ss.lastWrite.Store(now)
	s.wheel.add(ss)
	ss.serveFrames(br, false)
}

// readable is started by the poller when a parked session has bytes (or
// an end) to read. br, when not nil, already holds them.
func (ss *session) readable(br *bufio.Reader) {
	ss.mu.Lock()
	mine := ss.parked
	ss.parked = false
	ss.mu.Unlock()
	if !mine {
		// Taken meanwhile by whoever ends the session.
		if br != nil {
			putReader(br)
		}
		return
	}
	if br == nil {
		br = getReader(ss.conn)
	}
	ss.serveFrames(br, true)
}

// serveFrames reads and handles frames while there are bytes buffered (and
// first the frame that made the socket readable, with ready), then returns
// br and parks the session, or ends it.
func (ss *session) serveFrames(br *bufio.Reader, ready bool) {
	s := ss.srv
	for ; ready || ss.more(br); ready = false {
		f, err := ss.readFrame(br, s.o.Clock().Add(s.o.IdleTimeout))
		if err != nil {
			putReader(br)
			ss.teardown(ss.readFailure(err))
			return
		}
		ss.lastRead.Store(s.o.Clock().UnixNano())
		ss.handle(context.Background(), f)
		// Silence counts from the end of the request, as a read
		// deadline set after it would.
		ss.lastRead.Store(s.o.Clock().UnixNano())
	}
	putReader(br)
	if err := ss.park(); err != nil {
		ss.teardown(ss.readFailure(err))
	}
}

// more reports whether br has, or can have without waiting, bytes to read:
// buffered in br, or in a TLS connection's record buffer (the poller sees
// only the socket). It is also true once reads are to stop, so that
// readFrame says why.
func (ss *session) more(br *bufio.Reader) bool {
	if br.Buffered() > 0 {
		return true
	}
	ss.mu.Lock()
	if ss.stop != nil {
		ss.mu.Unlock()
		return true
	}
	// A deadline in the past makes the read return what is buffered
	// above the socket, or time out at once.
	_ = ss.conn.SetReadDeadline(time.Unix(1, 0))
	ss.mu.Unlock()
	_, err := br.Peek(1)
	return err == nil || !isTimeout(err)
}

// park hands the session to the poller, unless reads are to stop or the
// poller refuses it (the reason is returned then, and the caller still
// owns the session). The session is armed in the poller and marked parked
// under ss.mu, so that nobody takes it before the poller has it.
func (ss *session) park() error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.stop != nil {
		return ss.stop
	}
	if err := ss.srv.poll.arm(ss); err != nil {
		if ss.out.killReason() == "" {
			ss.srv.log.Error("poll connection", "device", ss.dev.ID, "remote", ss.remote, "err", err)
		}
		return err
	}
	ss.parked = true
	return nil
}

// take takes a parked session from the poller, reporting whether it was
// parked: the caller then owns it and must end it.
func (ss *session) take() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	mine := ss.parked
	ss.parked = false
	return mine
}

// readFrame reads one frame with a read deadline, unless the server is
// shutting down, has evicted the session, or it was killed.
func (ss *session) readFrame(br *bufio.Reader, deadline time.Time) (wire.Frame, error) {
	ss.mu.Lock()
	if stop := ss.stop; stop != nil {
		ss.mu.Unlock()
		return wire.Frame{}, stop
	}
	_ = ss.conn.SetReadDeadline(deadline)
	ss.mu.Unlock()
	f, err := wire.ReadFrame(br, ss.srv.o.MaxFrame)
	if err != nil {
		ss.mu.Lock()
		stop := ss.stop
		ss.mu.Unlock()
		if stop != nil && isTimeout(err) {
			return wire.Frame{}, stop
		}
	}
	return f, err
}

// lameDuck makes the session end after the request it is handling, or
// now when it has none.
func (ss *session) lameDuck() { ss.stopReading(errLameDuck) }

// evict makes the handshake stop now; the peer is told ERROR 0x32. (A
// write stuck on a peer that does not read ends at the handshake deadline.)
func (ss *session) evict() { ss.stopReading(errEvicted) }

// stopReading makes readFrame return why (unless it already stops for
// another reason) and wakes a read in progress; a parked session is taken
// from the poller and ended.
func (ss *session) stopReading(why error) {
	ss.mu.Lock()
	if ss.stop == nil {
		ss.stop = why
	}
	mine := ss.parked
	ss.parked = false
	_ = ss.conn.SetReadDeadline(time.Unix(1, 0))
	ss.mu.Unlock()
	if mine {
		go ss.teardown(ss.readFailure(why))
	}
}

// readFailure classifies why reading ended: the ERROR to send before
// closing (nil for none) and a reason for the log.
func (ss *session) readFailure(err error) (*wire.StatusError, string) {
	if r := ss.out.killReason(); r != "" || errors.Is(err, errKilled) {
		return nil, r
	}
	e, reason := readErr(err)
	if reason == "bad frame" || reason == "read error" {
		ss.srv.log.Warn("closing session", "device", ss.dev.ID, "remote", ss.remote, "reason", reason, "err", err)
	}
	return e, reason
}

// readErr classifies a read error: the ERROR to send before closing (nil
// for none) and a reason for the log.
func readErr(err error) (*wire.StatusError, string) {
	switch {
	case errors.Is(err, errLameDuck):
		return shuttingDown, "shutdown"
	case errors.Is(err, errEvicted):
		return tooManyPending, "evicted"
	case errors.Is(err, io.EOF):
		return nil, "eof"
	case isTimeout(err):
		return wire.ErrTimeout, "timeout"
	case wire.IsFatal(err) || errors.Is(err, wire.ErrBadVersion):
		return wire.StatusOf(err), "bad frame"
	}
	return nil, "read error"
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded)
}

// teardown ends a welcomed session its caller owns: it leaves the poller
// and the wheel, ends its subscription, writes what is queued and final,
// closes the connection and releases the session.
func (ss *session) teardown(final *wire.StatusError, reason string) {
	s := ss.srv
	s.poll.remove(ss)
	s.wheel.remove(ss)
	ss.unsubscribe()
	ss.finish(final, reason)
	select {
	case <-ss.out.finished():
	case <-time.After(s.o.WriteTimeout):
		ss.kill(nil, "flush timeout")
		<-ss.out.finished()
	}
	if r := ss.out.killReason(); r != "" {
		reason = r
	}
	s.metrics.SessionClosed(ss.dev.Role, reason)
	s.log.Info("session closed", "device", ss.dev.ID, "role", ss.dev.Role.String(), "remote", ss.remote,
		"reason", reason, "duration_s", s.o.Clock().Sub(ss.start).Seconds())
	s.release(ss)
}

// finish queues the last frame and the close marker.
func (ss *session) finish(final *wire.StatusError, reason string) {
	var b []byte
	if final != nil {
		var err error
		if b, err = wire.EncodeMessage(nil, 0, 0, final.Reply(0)); err != nil {
			b = nil
		}
	}
	ok, start, _ := ss.out.push(b, ss.srv.o.Clock(), true)
	if !ok {
		ss.kill(final, reason)
		return
	}
	if start {
		go ss.flush()
	}
}

// handshake runs HELLO, CHALLENGE, AUTH, WELCOME with direct writes. It
// reports whether the session was welcomed; if not, the peer was sent the
// reason where the framing allowed it.
func (ss *session) handshake(br *bufio.Reader) bool {
	s := ss.srv
	deadline := ss.start.Add(s.o.HandshakeTimeout)
	// Bound the writes before the first frame too: a TLS handshake writes
	// the server's certificates from inside the first read.
	_ = ss.conn.SetWriteDeadline(deadline)
	f, ok := ss.expect(br, deadline, wire.TypeHello, "not authenticated: send HELLO first", "no hello")
	if !ok {
		return false
	}
	if err := ss.hello.Decode(f.Payload); err != nil {
		return ss.refuse(wire.StatusOf(err), f.RequestID, "bad hello")
	}
	if e, reason := s.admitHello(ss); e != nil {
		return ss.refuse(e, f.RequestID, reason)
	}
	nonce := make([]byte, wire.NonceSize)
	if _, err := rand.Read(nonce); err != nil {
		s.log.Error("challenge nonce", "err", err)
		return ss.refuse(wire.ErrInternal, f.RequestID, "no randomness")
	}
	if !ss.writeNow(&wire.Challenge{Nonce: nonce}, f.RequestID, s.o.WriteTimeout) {
		return false
	}
	if f, ok = ss.expect(br, deadline, wire.TypeAuth, "not authenticated: send AUTH", "no auth"); !ok {
		return false
	}
	var auth wire.Auth
	if err := auth.Decode(f.Payload); err != nil {
		return ss.refuse(wire.StatusOf(err), f.RequestID, "bad auth")
	}
	dev, known := s.device(ss.hello.DeviceID)
	secret := dummySecret
	if known {
		secret = dev.Secret
	}
	// Always compute the MAC so an unknown device costs the same time.
	macOK := wire.VerifyMAC(secret, nonce, ss.hello.DeviceID, auth.MAC)
	if reason := authFault(known, macOK, known && dev.Role == ss.hello.Role); reason != "" {
		ss.holdBack(deadline)
		return ss.refuse(wire.ErrAuthFailed, f.RequestID, reason)
	}
	s.guard.succeeded(ss.host, dev.ID)
	if e, reason := s.authenticate(ss, dev); e != nil {
		return ss.refuse(e, f.RequestID, reason)
	}
	w, err := s.welcome(dev, int64(ss.hello.LastVersion))
	if errors.Is(err, queue.ErrUnavailable) {
		// The site's version could not be read: the device retries, as
		// after any 0x41, and the store's trouble is logged where it is.
		s.log.Warn("welcome: store unavailable", "device", dev.ID, "err", err)
		return ss.refuse(wire.ErrStoreUnavailable, f.RequestID, "welcome: store unavailable")
	}
	if err != nil {
		s.log.Error("welcome", "device", dev.ID, "err", err)
		return ss.refuse(wire.ErrInternal, f.RequestID, "welcome failed")
	}
	return ss.writeNow(w, f.RequestID, s.o.WriteTimeout)
}

// expect reads the next handshake frame, which must be of type typ; a read
// error or another type refuses the session (hint is the message of the
// latter) and ok is false.
func (ss *session) expect(br *bufio.Reader, deadline time.Time, typ wire.MsgType, hint, reason string) (f wire.Frame, ok bool) {
	f, err := ss.readFrame(br, deadline)
	if err != nil {
		e, why := readErr(err)
		return f, ss.refuse(e, 0, why)
	}
	if f.Type != typ {
		return f, ss.refuse(wire.ErrNotAuthenticated.WithMsg(hint), f.RequestID, reason)
	}
	return f, true
}

// refuse ends a handshake: it counts the failure (unless the peer is not to
// blame for it) and, when e is not nil, answers request reqID with it. It
// returns false, the handshake's verdict.
func (ss *session) refuse(e *wire.StatusError, reqID uint32, reason string) bool {
	s := ss.srv
	switch reason {
	case "eof", "shutdown", "read error", "evicted", "too many connections":
		// Not the peer's failure to authenticate (evictions and
		// refusals have their own counts).
	default:
		s.authFailures.Add(1)
		s.metrics.AuthFailed(reason)
		s.refusals.note(reason, "remote", ss.remote, "device", ss.hello.DeviceID)
	}
	if e != nil {
		m := e.Reply(reqID)
		if e.Code == wire.ErrRateLimited.Code {
			m.RetryAfterMS = uint32(s.guard.hostWait(ss.host, s.o.Clock()).Milliseconds())
		}
		ss.writeNow(m, reqID, time.Second)
	}
	return false
}

// dummySecret keys the MAC computed for an unknown device.
var dummySecret = make([]byte, 32)

// writeNow encodes m and writes it directly (before the send queue is used).
func (ss *session) writeNow(m wire.Message, reqID uint32, timeout time.Duration) bool {
	fl := wire.FlagResponse
	if reqID == 0 {
		fl = 0
	}
	b, err := wire.EncodeMessage(nil, reqID, fl, m)
	if err != nil {
		ss.srv.log.Error("encode", "type", m.Type().String(), "err", err)
		return false
	}
	_ = ss.conn.SetWriteDeadline(ss.srv.o.Clock().Add(timeout))
	_, err = ss.conn.Write(b)
	return err == nil
}
