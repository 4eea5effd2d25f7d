package protocol

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
)

// authGuard backs off peers whose handshakes keep failing (wrong MAC,
// unknown device, role mismatch), per source address and per device id,
// without locking the real device out for long:
//
//   - a source address with guardFree failures in a row is refused at
//     its next HELLO (ERROR 0x30 with RetryAfterMS, no MAC computed) for a pause
//     that doubles from guardBase up to guardHostMax; a success from it
//     clears it;
//   - a device id with guardFree failures has its further failed AUTHs answered
//     only after such a pause, up to guardIDMax (bounded by the handshake
//     deadline): a loop on one id slows down to one try per pause and
//     connection, while the real device, whose MAC is right, is welcomed
//     at once and clears the count.
//
// Failures older than guardForget are forgotten.
type authGuard struct {
	mu    sync.Mutex
	hosts map[string]*strikes
	ids   map[string]*strikes
}

// strikes counts the failures of one key in a row.
type strikes struct {
	n    int
	last time.Time // of the last failure
}

const (
	guardFree    = 5
	guardBase    = 500 * time.Millisecond
	guardHostMax = 30 * time.Second
	guardIDMax   = 5 * time.Second
	guardForget  = 10 * time.Minute
	guardMaxKeys = 100000 // beyond, the oldest half is forgotten
)

// pause is the back-off after n failures in a row, at most max: 0 below
// guardFree, guardBase at guardFree, doubling with each further failure.
func pause(n int, max time.Duration) time.Duration {
	if n < guardFree {
		return 0
	}
	d := guardBase
	for i := guardFree; i < n && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

// hostWait is how long a source address must still wait before its next
// handshake; 0: go on.
func (g *authGuard) hostWait(host string, now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.hosts[host]
	if st == nil || now.Sub(st.last) > guardForget {
		return 0
	}
	return max(st.last.Add(pause(st.n, guardHostMax)).Sub(now), 0)
}

// failed records a failed handshake of device id from host and returns
// how long to hold back its answer (the id's pause).
func (g *authGuard) failed(host, id string, now time.Time) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.hosts == nil {
		g.hosts, g.ids = map[string]*strikes{}, map[string]*strikes{}
	}
	hs := note(g.hosts, host, now)
	// The id's pause counts the failures before this one: the 6th failed
	// AUTH in a row is the first held back.
	hold := pause(note(g.ids, id, now).n-1, guardIDMax)
	// The address's pause runs from the answer, which the id's holds back.
	hs.last = now.Add(hold)
	return hold
}

// succeeded clears the failures of host and id.
func (g *authGuard) succeeded(host, id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.hosts, host)
	delete(g.ids, id)
}

func note(m map[string]*strikes, key string, now time.Time) *strikes {
	st := m[key]
	if st == nil || now.Sub(st.last) > guardForget {
		if len(m) >= guardMaxKeys {
			forgetOld(m, now)
		}
		st = &strikes{}
		m[key] = st
	}
	st.n++
	st.last = now
	return st
}

// forgetOld drops the keys not failed for guardForget, or, if none, every
// key (a flood of addresses: the guard starts over rather than grow).
func forgetOld(m map[string]*strikes, now time.Time) {
	for k, st := range m {
		if now.Sub(st.last) > guardForget {
			delete(m, k)
		}
	}
	if len(m) >= guardMaxKeys {
		clear(m)
	}
}

// refusalLog keeps refused handshakes from flooding the log: the first
// refusal is logged at once, the ones after it within every are counted by
// reason and logged as one summary when that interval ends. The metrics
// count every refusal.
type refusalLog struct {
	log   *slog.Logger
	now   func() time.Time
	every time.Duration

	mu      sync.Mutex
	at      time.Time      // of the last line
	counts  map[string]int // refusals not logged yet, by reason
	last    []any          // attributes of the last of them
	pending bool           // a summary is scheduled
}

// refusalLogEvery is the interval of refusalLog summaries.
const refusalLogEvery = 10 * time.Second

// note records one refusal; attrs describe it (remote, device).
func (l *refusalLog) note(reason string, attrs ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.pending && (l.at.IsZero() || now.Sub(l.at) >= l.every) {
		l.at = now
		l.log.Warn("handshake refused", append([]any{"reason", reason}, attrs...)...)
		return
	}
	if l.counts == nil {
		l.counts = map[string]int{}
	}
	l.counts[reason]++
	l.last = attrs
	if !l.pending {
		l.pending = true
		time.AfterFunc(min(max(l.at.Add(l.every).Sub(now), 0), l.every), l.flush)
	}
}

// flush logs the summary of the refusals counted since the last line.
func (l *refusalLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	total := 0
	var byReason []any
	for reason, n := range l.counts {
		total += n
		byReason = append(byReason, slog.Int(strings.ReplaceAll(reason, " ", "_"), n))
	}
	l.log.Warn("handshakes refused", "refused", total, "interval_s", l.every.Seconds(),
		slog.Group("by_reason", byReason...), slog.Group("last", l.last...))
	l.counts, l.last, l.pending = nil, nil, false
	l.at = l.now()
}

// admitHello checks a decoded HELLO before it is challenged: the protocol
// version it speaks, and whether its address is backing off. It returns
// the ERROR to answer and a reason, or nil.
func (s *Server) admitHello(ss *session) (*wire.StatusError, string) {
	if ss.hello.ProtocolVersion < wire.ProtocolVersion {
		return wire.ErrUnsupportedVersion.WithMsg(fmt.Sprintf("unsupported protocol version: HELLO names %d, this daemon speaks %d",
			ss.hello.ProtocolVersion, wire.ProtocolVersion)), "bad version"
	}
	if s.guard.hostWait(ss.host, s.o.Clock()) > 0 {
		return wire.ErrRateLimited.WithMsg("rate limited: too many failed logins from this address"), "backing off"
	}
	return nil, ""
}

// authFault is the reason an AUTH fails, "" when it does not.
func authFault(known, macOK, roleOK bool) string {
	switch {
	case !known:
		return "unknown device"
	case !macOK:
		return "wrong mac"
	case !roleOK:
		return "role mismatch"
	}
	return ""
}

// holdBack counts a failed AUTH and waits the device id's pause before it
// is answered (never past the handshake deadline, nor a shutdown).
func (ss *session) holdBack(deadline time.Time) {
	s := ss.srv
	now := s.o.Clock()
	d := min(s.guard.failed(ss.host, ss.hello.DeviceID, now), deadline.Sub(now)-100*time.Millisecond)
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.done:
	}
}
