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
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
)

// readBufferSize is the bufio.Reader size per connection: a header and a
// typical request fit; larger payloads are read straight into their buffer.
const readBufferSize = 1024

// errLameDuck stops a read loop when the server shuts down.
var errLameDuck = errors.New("protocol: server shutting down")

// errEvicted stops a handshake closed to make room for newer connections.
var errEvicted = errors.New("protocol: evicted while authenticating")

// tooManyPending is the ERROR sent to an evicted connection.
var tooManyPending = wire.ErrTooManyConnections.WithMsg("too many connections: too many authenticating, reconnect")

// session is one connection. The reader goroutine (run) owns the handshake
// and the requests; the writer goroutine owns all writes after WELCOME.
type session struct {
	srv    *Server
	conn   net.Conn
	br     *bufio.Reader
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

	out        *sendQueue
	dead       chan struct{} // closed by kill
	writerDone chan struct{}
	killOnce   sync.Once
	killErr    *wire.StatusError // final ERROR the writer tries to send
	killReason string

	mu   sync.Mutex // guards stop and read deadlines
	stop error      // errLameDuck or errEvicted: reads stop

	subCancel context.CancelFunc
	subDone   chan struct{}
}

// newSession returns the session of a connection just accepted.
func (s *Server) newSession(c net.Conn, seq uint64) *session {
	return &session{
		srv: s, conn: c, remote: c.RemoteAddr().String(), host: hostOf(c.RemoteAddr()), seq: seq, start: s.o.Clock(),
		br:         bufio.NewReaderSize(c, readBufferSize),
		out:        newSendQueue(s.o.SendQueue),
		dead:       make(chan struct{}),
		writerDone: make(chan struct{}),
	}
}

// serve runs a session admitted by Server.admit to its end.
func (ss *session) serve() {
	s := ss.srv
	defer s.wg.Done()
	defer s.conns.Add(-1)
	defer s.untrack(ss)
	ss.run()
}

func (ss *session) run() {
	s := ss.srv
	if !ss.handshake() {
		ss.conn.Close()
		return
	}
	role := ss.dev.Role
	s.metrics.SessionOpened(role)
	log := s.log.With("device", ss.dev.ID, "role", role.String(), "remote", ss.remote)
	log.Info("session welcomed", "firmware", ss.hello.Firmware, "boot_nonce", ss.hello.BootNonce)
	go ss.writer()

	ctx, cancel := context.WithCancel(context.Background())
	final, reason := ss.readLoop(ctx)
	cancel()
	ss.stopPump()
	ss.finish(final, reason)
	select {
	case <-ss.writerDone:
	case <-time.After(s.o.WriteTimeout):
		ss.kill(nil, "flush timeout")
		<-ss.writerDone
	}
	ss.conn.Close()
	select {
	case <-ss.dead:
		if ss.killReason != "" {
			reason = ss.killReason
		}
	default:
	}
	s.metrics.SessionClosed(role, reason)
	log.Info("session closed", "reason", reason, "duration_s", s.o.Clock().Sub(ss.start).Seconds())
}

// readFrame reads one frame with a read deadline, unless the server is
// shutting down or has evicted the session.
func (ss *session) readFrame(deadline time.Time) (wire.Frame, error) {
	ss.mu.Lock()
	if stop := ss.stop; stop != nil {
		ss.mu.Unlock()
		return wire.Frame{}, stop
	}
	_ = ss.conn.SetReadDeadline(deadline)
	ss.mu.Unlock()
	f, err := wire.ReadFrame(ss.br, ss.srv.o.MaxFrame)
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

// lameDuck makes the reader stop after the request it is handling.
func (ss *session) lameDuck() { ss.stopReading(errLameDuck) }

// evict makes the handshake stop now; the peer is told ERROR 0x32. (A
// write stuck on a peer that does not read ends at the handshake deadline.)
func (ss *session) evict() { ss.stopReading(errEvicted) }

// stopReading makes readFrame return why (unless it already stops for
// another reason) and wakes a read in progress.
func (ss *session) stopReading(why error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.stop == nil {
		ss.stop = why
	}
	_ = ss.conn.SetReadDeadline(time.Unix(1, 0))
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

// handshake runs HELLO, CHALLENGE, AUTH, WELCOME with direct writes. It
// reports whether the session was welcomed; if not, the peer was sent the
// reason where the framing allowed it.
func (ss *session) handshake() bool {
	s := ss.srv
	deadline := ss.start.Add(s.o.HandshakeTimeout)
	// Bound the writes before the first frame too: a TLS handshake writes
	// the server's certificates from inside the first read.
	_ = ss.conn.SetWriteDeadline(deadline)
	fail := func(e *wire.StatusError, reqID uint32, reason string) bool {
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
	f, err := ss.readFrame(deadline)
	if err != nil {
		e, reason := readErr(err)
		return fail(e, 0, reason)
	}
	if f.Type != wire.TypeHello {
		return fail(wire.ErrNotAuthenticated.WithMsg("not authenticated: send HELLO first"), f.RequestID, "no hello")
	}
	if err := ss.hello.Decode(f.Payload); err != nil {
		return fail(wire.StatusOf(err), f.RequestID, "bad hello")
	}
	if e, reason := s.admitHello(ss); e != nil {
		return fail(e, f.RequestID, reason)
	}
	nonce := make([]byte, wire.NonceSize)
	if _, err := rand.Read(nonce); err != nil {
		s.log.Error("challenge nonce", "err", err)
		return fail(wire.ErrInternal, f.RequestID, "no randomness")
	}
	if !ss.writeNow(&wire.Challenge{Nonce: nonce}, f.RequestID, s.o.WriteTimeout) {
		return false
	}
	f, err = ss.readFrame(deadline)
	if err != nil {
		e, reason := readErr(err)
		return fail(e, 0, reason)
	}
	if f.Type != wire.TypeAuth {
		return fail(wire.ErrNotAuthenticated.WithMsg("not authenticated: send AUTH"), f.RequestID, "no auth")
	}
	var auth wire.Auth
	if err := auth.Decode(f.Payload); err != nil {
		return fail(wire.StatusOf(err), f.RequestID, "bad auth")
	}
	dev, known := s.devices[ss.hello.DeviceID]
	secret := dummySecret
	if known {
		secret = dev.Secret
	}
	// Always compute the MAC so an unknown device costs the same time.
	macOK := wire.VerifyMAC(secret, nonce, ss.hello.DeviceID, auth.MAC)
	if reason := authFault(known, macOK, known && dev.Role == ss.hello.Role); reason != "" {
		ss.holdBack(deadline)
		return fail(wire.ErrAuthFailed, f.RequestID, reason)
	}
	s.guard.succeeded(ss.host, dev.ID)
	if e, reason := s.authenticate(ss, dev); e != nil {
		return fail(e, f.RequestID, reason)
	}
	ss.dev = dev
	w, err := s.welcome(dev)
	if err != nil {
		s.log.Error("welcome", "device", dev.ID, "err", err)
		return fail(wire.ErrInternal, f.RequestID, "welcome failed")
	}
	return ss.writeNow(w, f.RequestID, s.o.WriteTimeout)
}

// dummySecret keys the MAC computed for an unknown device.
var dummySecret = make([]byte, 32)

// writeNow encodes m and writes it directly (before the writer runs).
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

// readLoop reads and handles requests until the peer leaves, misbehaves
// beyond repair, falls silent, or the server shuts down.
func (ss *session) readLoop(ctx context.Context) (*wire.StatusError, string) {
	s := ss.srv
	for {
		f, err := ss.readFrame(s.o.Clock().Add(s.o.IdleTimeout))
		if err != nil {
			select {
			case <-ss.dead:
				return nil, ss.killReason
			default:
			}
			e, reason := readErr(err)
			if reason == "bad frame" || reason == "read error" {
				s.log.Warn("closing session", "device", ss.dev.ID, "remote", ss.remote, "reason", reason, "err", err)
			}
			return e, reason
		}
		ss.handle(ctx, f)
	}
}

// writer writes queued frames, sends heartbeats when idle, and closes the
// connection when told to or killed.
func (ss *session) writer() {
	s := ss.srv
	defer close(ss.writerDone)
	defer ss.conn.Close()
	hb := time.NewTimer(s.o.Heartbeat)
	defer hb.Stop()
	for {
		select {
		case <-ss.dead:
			ss.writeFinal()
			return
		default:
		}
		var bufs net.Buffers
		var closeAfter bool
		select {
		case <-ss.out.ready:
			bufs, closeAfter = ss.out.take()
		case <-hb.C:
			b, err := wire.EncodeMessage(nil, 0, 0, &wire.Heartbeat{TimeMS: s.o.Clock().UnixMilli()})
			if err != nil {
				continue
			}
			bufs = net.Buffers{b}
		case <-ss.dead:
			ss.writeFinal()
			return
		}
		if len(bufs) > 0 {
			_ = ss.conn.SetWriteDeadline(s.o.Clock().Add(s.o.WriteTimeout))
			if _, err := bufs.WriteTo(ss.conn); err != nil {
				if isTimeout(err) {
					// The peer stopped reading: its socket is full.
					ss.dropSlow("write timed out")
				} else {
					ss.kill(nil, "write failed")
				}
				return
			}
		}
		if closeAfter {
			return
		}
		hb.Reset(s.o.Heartbeat)
	}
}

// writeFinal tries, briefly, to tell a killed peer why.
func (ss *session) writeFinal() {
	if ss.killErr == nil {
		return
	}
	b, err := wire.EncodeMessage(nil, 0, 0, ss.killErr.Reply(0))
	if err != nil {
		return
	}
	_ = ss.conn.SetWriteDeadline(ss.srv.o.Clock().Add(100 * time.Millisecond))
	_, _ = ss.conn.Write(b)
}

// kill drops the session now: the writer sends e (if any) with a short
// deadline and closes the connection, which ends the reader.
func (ss *session) kill(e *wire.StatusError, reason string) {
	ss.killOnce.Do(func() {
		ss.killErr, ss.killReason = e, reason
		close(ss.dead)
		// Unblock a write stuck on a peer that does not read.
		_ = ss.conn.SetWriteDeadline(ss.srv.o.Clock().Add(100 * time.Millisecond))
		if ss.dev == nil {
			ss.conn.Close()
		}
	})
}

// enqueue queues an encoded frame, waiting up to WriteTimeout for room.
// A queue that stays full drops the session as a slow consumer (the wait
// blocks only this session's reader or event pump, never anyone else). It
// reports whether the frame was queued.
func (ss *session) enqueue(b []byte) bool {
	var timeout <-chan time.Time
	for {
		select {
		case <-ss.dead:
			return false
		default:
		}
		ok, room := ss.out.push(b, false)
		if ok {
			return true
		}
		if timeout == nil {
			t := time.NewTimer(ss.srv.o.WriteTimeout)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-room:
		case <-ss.dead:
			return false
		case <-timeout:
			ss.dropSlow("send queue full")
			return false
		}
	}
}

// dropSlow drops a peer that does not read what it is sent.
func (ss *session) dropSlow(why string) {
	select {
	case <-ss.dead:
		return
	default:
	}
	ss.srv.slowConsumers.Add(1)
	ss.srv.log.Warn("dropping slow consumer", "device", ss.dev.ID, "remote", ss.remote, "why", why,
		"queue", ss.out.max, "timeout_s", ss.srv.o.WriteTimeout.Seconds())
	ss.kill(wire.ErrSlowConsumer, "slow consumer")
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
	if ok, _ := ss.out.push(b, true); !ok {
		ss.kill(final, reason)
	}
}

// send encodes m as the answer to reqID (or unsolicited when reqID is 0)
// and queues it.
func (ss *session) send(reqID uint32, m wire.Message) bool {
	fl := wire.FlagResponse
	if reqID == 0 {
		fl = 0
	}
	b, err := wire.EncodeMessage(nil, reqID, fl, m)
	if err != nil {
		ss.srv.log.Error("encode answer", "device", ss.dev.ID, "type", m.Type().String(), "err", err)
		b, _ = wire.EncodeMessage(nil, reqID, fl, wire.ErrInternal.Reply(reqID))
	}
	return ss.enqueue(b)
}
