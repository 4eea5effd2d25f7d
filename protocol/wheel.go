package protocol

import (
	"sync"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
)

// wheelSlots is how many groups of sessions the wheel visits in turn, one
// group per tick, so that the heartbeats of many sessions are spread over
// the interval instead of leaving all at once.
const wheelSlots = 16

// wheel holds the welcomed sessions for heartbeats and idle time-outs: one
// goroutine and one ticker for the whole server instead of a timer per
// session. A session is in slot seq % wheelSlots.
type wheel struct {
	mu    sync.Mutex
	slots [wheelSlots]map[*session]struct{}
	next  int
	due   []*session // the slot being visited; the wheel goroutine's only
}

func (w *wheel) add(ss *session) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := &w.slots[ss.seq%wheelSlots]
	if *m == nil {
		*m = map[*session]struct{}{}
	}
	(*m)[ss] = struct{}{}
}

func (w *wheel) remove(ss *session) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.slots[ss.seq%wheelSlots], ss)
}

// turn returns the sessions of the next slot (valid until the next turn).
func (w *wheel) turn() []*session {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.due = w.due[:0]
	for ss := range w.slots[w.next] {
		w.due = append(w.due, ss)
	}
	w.next = (w.next + 1) % wheelSlots
	return w.due
}

// wheelVisits is how many times per heartbeat interval (or idle time-out,
// when that is shorter) the wheel visits each session: a heartbeat then
// leaves within the last tenth of an interval of silence.
const wheelVisits = 10

// wheelPeriod is how often the wheel visits each session.
func (s *Server) wheelPeriod() time.Duration {
	return min(s.o.Heartbeat, s.o.IdleTimeout) / wheelVisits
}

// runWheel visits one slot of the wheel per tick until the server closes.
// A tick the ticker dropped (a busy machine) is made up at the next one,
// so that every session is still visited once per period.
func (s *Server) runWheel() {
	period := s.wheelPeriod()
	every := max(period/wheelSlots, time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		due := int(time.Since(last) / every)
		if due < 1 {
			continue
		}
		last = last.Add(time.Duration(due) * every)
		now := s.o.Clock()
		// One HEARTBEAT frame for the tick, shared read-only.
		hb, err := wire.EncodeMessage(nil, 0, 0, &wire.Heartbeat{TimeMS: now.UnixMilli()})
		if err != nil {
			s.log.Error("encode heartbeat", "err", err)
			continue
		}
		for range min(due, wheelSlots) {
			for _, ss := range s.wheel.turn() {
				s.visit(ss, now, hb)
			}
		}
	}
}

// visit ends a parked session silent for longer than IdleTimeout (ERROR
// 0x34), and queues a heartbeat for one that would otherwise reach one
// heartbeat interval without a frame before the next visit: sent nothing
// for more than an interval less a period. So a silent device hears a
// HEARTBEAT after between 0.9 and 1 interval of silence (PROTOCOL.md
// section 7), later only by the scheduling delay of a busy machine. A
// session busy reading has its read deadline instead.
func (s *Server) visit(ss *session, now time.Time, hb []byte) {
	n := now.UnixNano()
	if time.Duration(n-ss.lastRead.Load()) > s.o.IdleTimeout && ss.take() {
		go ss.teardown(wire.ErrTimeout, "timeout")
		return
	}
	if time.Duration(n-ss.lastWrite.Load()) > s.o.Heartbeat-s.wheelPeriod() {
		ss.enqueue(hb)
	}
}
