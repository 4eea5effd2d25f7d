package protocol

import (
	"sync"

	"github.com/nowserving/nowserving/protocol/wire"
)

// sendQueueBytes bounds the bytes a session's send queue holds, besides
// Opts.SendQueue frames: a SNAPSHOT is up to 64 KiB, an EVENT ~150 bytes.
const sendQueueBytes = 256 << 10

// sendQueue is a session's bounded queue of encoded frames waiting for the
// socket. It holds no memory and no goroutine while empty (an idle
// session): push reports when a flusher must be started, which takes
// everything queued at once (a burst of events goes out in one writev) and
// ends when the queue is empty.
type sendQueue struct {
	maxFrames int

	mu       sync.Mutex
	frames   [][]byte
	bytes    int
	flushing bool // a flusher runs
	closing  bool // close the connection once the queue is written
	killed   bool // drop the queue, write killErr, close
	killErr  *wire.StatusError
	reason   string        // of the kill
	over     bool          // the flusher closed the connection
	done     chan struct{} // closed once over; made by finished
}

// push queues b (nil: nothing to write) and, with closeAfter, the marker
// that makes the flusher close the connection once b is written. It
// returns ok false, queuing nothing, when the queue is closing or killed,
// or would pass its bounds (full; an empty queue takes any frame); start
// true when the caller must start the flusher.
func (q *sendQueue) push(b []byte, closeAfter bool) (ok, start, full bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.killed || q.closing || q.over {
		return false, false, false
	}
	if b != nil && len(q.frames) > 0 && (len(q.frames) >= q.maxFrames || q.bytes+len(b) > sendQueueBytes) {
		return false, false, true
	}
	if b != nil {
		q.frames = append(q.frames, b)
		q.bytes += len(b)
	}
	q.closing = closeAfter
	start = !q.flushing
	q.flushing = true
	return true, start, false
}

// take removes and returns everything queued, and what to do after
// writing it: close the connection (closing), or stop because the queue is
// empty (idle; the flusher ends). Killed: write killErr and close instead.
// Call it with q.mu held.
func (q *sendQueue) take() (frames [][]byte, closing, idle bool) {
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
