package protocol

import (
	"context"
	"net"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
)

// killWriteTimeout bounds the write of the final ERROR of a killed session.
const killWriteTimeout = 100 * time.Millisecond

// flush writes what is queued until the queue is empty, then ends. It
// closes the connection after the close marker, or when the session is
// killed, after trying briefly to send the kill's ERROR.
func (ss *session) flush() {
	s := ss.srv
	q := &ss.out
	for {
		q.mu.Lock()
		frames, closing, idle := q.take()
		killed, final := q.killed, q.killErr
		if !killed && len(frames) > 0 {
			// Under q.mu, so that kill's shorter deadline wins.
			_ = ss.conn.SetWriteDeadline(s.o.Clock().Add(s.o.WriteTimeout))
		}
		q.mu.Unlock()
		switch {
		case idle:
			return
		case killed:
			ss.writeFinal(final)
			ss.conn.Close()
			q.closed()
			return
		case closing:
			ss.conn.Close()
			q.closed()
			return
		}
		bufs := net.Buffers(frames)
		if _, err := bufs.WriteTo(ss.conn); err != nil {
			if isTimeout(err) {
				// The peer stopped reading: its socket is full.
				ss.dropSlow("write timed out")
			} else {
				ss.kill(nil, "write failed")
			}
		}
	}
}

// writeFinal tries, briefly, to tell a killed peer why.
func (ss *session) writeFinal(e *wire.StatusError) {
	if e == nil {
		return
	}
	b, err := wire.EncodeMessage(nil, 0, 0, e.Reply(0))
	if err != nil {
		return
	}
	_ = ss.conn.SetWriteDeadline(ss.srv.o.Clock().Add(killWriteTimeout))
	_, _ = ss.conn.Write(b)
}

// kill drops the session now: the flusher sends e (if any) with a short
// deadline and closes the connection; the session's reads stop. It
// reports whether this call killed the session (false: it was already).
func (ss *session) kill(e *wire.StatusError, reason string) bool {
	if ss.dev == nil {
		// Still authenticating: the handshake owns the connection.
		ss.conn.Close()
		return true
	}
	first, start := ss.out.kill(e, reason)
	if !first {
		return false
	}
	ss.out.mu.Lock()
	// Unblock a write stuck on a peer that does not read.
	_ = ss.conn.SetWriteDeadline(ss.srv.o.Clock().Add(killWriteTimeout))
	ss.out.mu.Unlock()
	if start {
		go ss.flush()
	}
	ss.stopReading(errKilled)
	return true
}

// dropSlow drops a peer that does not read what it is sent.
func (ss *session) dropSlow(why string) {
	if !ss.kill(wire.ErrSlowConsumer, "slow consumer") {
		return
	}
	ss.srv.slowConsumers.Add(1)
	ss.srv.log.Warn("dropping slow consumer", "device", ss.dev.ID, "remote", ss.remote, "why", why,
		"queue_bytes", ss.out.maxBytes, "lag_s", ss.out.maxLag.Seconds(), "timeout_s", ss.srv.o.WriteTimeout.Seconds())
}

// enqueue queues an encoded frame without waiting. A peer whose backlog
// passes the queue's bounds is dropped as a slow consumer (which never
// blocks anyone: the caller is the session's reader, its site's event hub or the
// heartbeat wheel). It reports whether the frame was queued.
func (ss *session) enqueue(b []byte) bool {
	now := ss.srv.o.Clock()
	ok, start, full := ss.out.push(b, now, false)
	if full {
		ss.dropSlow("send queue full")
	}
	if !ok {
		return false
	}
	ss.queued(now, start)
	return true
}

// enqueuePaced queues an encoded frame once it fits in the send queue's
// bytes, waiting for the peer to read meanwhile: for a catch-up, on a
// goroutine of its own, which may go at its reader's pace. A peer that
// reads nothing is still dropped, by the write timeout. It reports false
// when the session is gone or ctx ended.
func (ss *session) enqueuePaced(ctx context.Context, b []byte) bool {
	for {
		now := ss.srv.o.Clock()
		ok, start, room := ss.out.pushPaced(b, now)
		if ok {
			ss.queued(now, start)
			return true
		}
		if room == nil {
			return false
		}
		select {
		case <-room:
		case <-ctx.Done():
			return false
		}
	}
}

// queued notes a frame queued at now and starts the flusher if needed.
func (ss *session) queued(now time.Time, start bool) {
	ss.lastWrite.Store(now.UnixNano())
	if start {
		go ss.flush()
	}
}

// send encodes m as the answer to reqID (or unsolicited when reqID is 0)
// and queues it.
func (ss *session) send(reqID uint32, m wire.Message) bool {
	fl := wire.FlagResponse
	if reqID == 0 {
		fl = 0
		// An unasked SNAPSHOT (after a gap) comes whole from the hub: it
		// gets the page the device's SUBSCRIBE selects, as the answer did.
		if sm, ok := m.(*wire.Snapshot); ok {
			var only map[string]bool
			if p := ss.resources.Load(); p != nil {
				only = *p
			}
			_ = pageResources(sm, only, "") // no after: no error
		}
	}
	b, err := wire.EncodeMessage(nil, reqID, fl, m)
	if err != nil {
		ss.srv.log.Error("encode answer", "device", ss.dev.ID, "type", m.Type().String(), "err", err)
		b, _ = wire.EncodeMessage(nil, reqID, fl, wire.ErrInternal.Reply(reqID))
	}
	return ss.enqueue(b)
}
