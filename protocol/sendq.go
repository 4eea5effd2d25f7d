package protocol

import (
	"sync"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
)

// sendQueue is a session's bounded queue of encoded frames waiting for the
// socket. It holds no memory and no goroutine while empty (an idle
// session): push reports when a flusher must be started, which takes
// everything queued at once (a burst of events goes out in one writev) and
// ends when the queue is empty.
//
// It is bounded by bytes (maxBytes: a SNAPSHOT is up to 64 KiB, an EVENT
// ~150 bytes) and by time behind (maxLag: how long the oldest queued frame
// may wait), not by a count of frames: a burst of events to a peer that
// reads them is never too many.
type sendQueue struct {
	maxBytes int
	maxLag   time.Duration

	mu       sync.Mutex
	frames   [][]byte
	bytes    int
	oldest   time.Time     // when the first of frames was queued
	taken    chan struct{} // closed when the flusher next takes the queue; made by pushPaced
	flushing bool          // a flusher runs
	closing  bool          // close the connection once the queue is written
	killed   bool          // drop the queue, write killErr, close
	killErr  *wire.StatusError
	reason   string        // of the kill
	over     bool          // the flusher closed the connection
	done     chan struct{} // closed once over; made by finished
}

// push queues b (nil: nothing to write), at now, and, with closeAfter,
// the marker that makes the flusher close the connection once b is
// written. It returns ok false, queuing nothing, when the queue is closing
// or killed, or would pass its bounds (full; an empty queue takes any
// frame); start true when the caller must start the flusher.
func (q *sendQueue) push(b []byte, now time.Time, closeAfter bool) (ok, start, full bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.killed || q.closing || q.over {
		return false, false, false
	}
	if q.passes(b, now) {
		return false, false, true
	}
	return true, q.add(b, now, closeAfter), false
}

// pushPaced is push for a sender that may wait for its peer (a catch-up,
// on a goroutine of its own): where the queue holds half its bytes, it
// queues nothing and returns room, a channel closed when the flusher next
// takes the queue (or the connection ends), to try again after. The other
// half is for what cannot wait: answers, heartbeats, live events.
func (q *sendQueue) pushPaced(b []byte, now time.Time) (ok, start bool, room <-chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.killed || q.closing || q.over {
		return false, false, nil
	}
	if len(q.frames) > 0 && q.bytes+len(b) > q.maxBytes/2 {
		if q.taken == nil {
			q.taken = make(chan struct{})
		}
		return false, false, q.taken
	}
	return true, q.add(b, now, false), nil
}

// passes reports whether b would pass the queue's bounds: too many bytes,
// or the oldest frame queued too long ago. An empty queue takes any frame.
func (q *sendQueue) passes(b []byte, now time.Time) bool {
	if b == nil || len(q.frames) == 0 {
		return false
	}
	return q.bytes+len(b) > q.maxBytes || (q.maxLag > 0 && now.Sub(q.oldest) > q.maxLag)
}

// add queues b and reports whether the caller must start the flusher.
// Call it with q.mu held.
func (q *sendQueue) add(b []byte, now time.Time, closeAfter bool) (start bool) {
	if b != nil {
		if len(q.frames) == 0 {
			q.oldest = now
		}
		q.frames = append(q.frames, b)
		q.bytes += len(b)
	}
	q.closing = closeAfter
	start = !q.flushing
	q.flushing = true
	return start
}

// wake tells a paced sender that there is room. Call it with q.mu held.
func (q *sendQueue) wake() {
	if q.taken != nil {
		close(q.taken)
		q.taken = nil
	}
}

// take removes and returns everything queued, and what to do after
// writing it: close the connection (closing), or stop because the queue is
// empty (idle; the flusher ends). Killed: write killErr and close instead.
// Call it with q.mu held.
func (q *sendQueue) take() (frames [][]byte, closing, idle bool) {
	q.wake()
	if q.killed {
		q.frames, q.bytes = nil, 0
		return nil, true, false
	}
	frames = q.frames
	q.frames, q.bytes = nil, 0
	if len(frames) == 0 && !q.closing {
		q.flushing = false
		return nil, false, true
	}
	return frames, q.closing && len(frames) == 0, false
}

// kill marks the queue killed with the final ERROR e (nil: none) and
// reports whether this was the first kill, and whether the caller must
// start a flusher to write e and close.
func (q *sendQueue) kill(e *wire.StatusError, reason string) (first, start bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.killed || q.over {
		return false, false
	}
	q.killed, q.killErr, q.reason = true, e, reason
	start = !q.flushing
	q.flushing = true
	return true, start
}

// closed records that the flusher closed the connection.
func (q *sendQueue) closed() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.over, q.flushing = true, false
	q.frames, q.bytes = nil, 0
	q.wake()
	if q.done != nil {
		close(q.done)
	}
}

// finished returns a channel closed once the flusher closed the
// connection.
func (q *sendQueue) finished() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.done == nil {
		q.done = make(chan struct{})
		if q.over {
			close(q.done)
		}
	}
	return q.done
}

// killReason is the reason of the kill, "" when the session was not
// killed.
func (q *sendQueue) killReason() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.reason
}
