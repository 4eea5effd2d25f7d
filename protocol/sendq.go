package protocol

import "sync"

// sendQueue is a session's bounded queue of encoded frames. It holds no
// memory while empty (most kiosk sessions), and the writer takes
// everything queued at once, so a burst of events goes out in one writev.
type sendQueue struct {
	max   int
	ready chan struct{} // one token: something was queued

	mu      sync.Mutex
	frames  [][]byte
	closing bool          // the close marker is queued
	room    chan struct{} // closed when the writer takes frames; nil if nobody waits
}

func newSendQueue(max int) *sendQueue {
	return &sendQueue{max: max, ready: make(chan struct{}, 1)}
}

// push queues b (nil: nothing to write) and, with closeAfter, the marker
// that makes the writer close the connection once b is written. When the
// queue is full it returns false and a channel closed when there is room.
func (q *sendQueue) push(b []byte, closeAfter bool) (bool, <-chan struct{}) {
	q.mu.Lock()
	if len(q.frames) >= q.max {
		if q.room == nil {
			q.room = make(chan struct{})
		}
		r := q.room
		q.mu.Unlock()
		return false, r
	}
	if b != nil {
		q.frames = append(q.frames, b)
	}
	q.closing = q.closing || closeAfter
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true, nil
}

// take removes and returns everything queued, and whether the connection
// is to be closed after writing it.
func (q *sendQueue) take() ([][]byte, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.frames
	q.frames = nil
	if q.room != nil {
		close(q.room)
		q.room = nil
	}
	return out, q.closing
}
