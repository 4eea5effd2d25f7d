package protocol

import (
	"container/list"
	"net"
)

// pendingSet holds the sessions that have not authenticated yet, grouped by
// remote host, oldest first. It is guarded by Server.mu.
type pendingSet struct {
	n     int
	hosts map[string]*list.List // of *session
}

// add puts ss in the set as its newest member.
func (p *pendingSet) add(ss *session) {
	if p.hosts == nil {
		p.hosts = map[string]*list.List{}
	}
	l := p.hosts[ss.host]
	if l == nil {
		l = list.New()
		p.hosts[ss.host] = l
	}
	ss.pending = l.PushBack(ss)
	p.n++
}

// remove takes ss out of the set; it does nothing when ss is not in it.
func (p *pendingSet) remove(ss *session) {
	if ss.pending == nil {
		return
	}
	l := p.hosts[ss.host]
	l.Remove(ss.pending)
	if l.Len() == 0 {
		delete(p.hosts, ss.host)
	}
	ss.pending = nil
	p.n--
}

// victim returns the session to close when the set is over its cap: the
// oldest of the host with the most pending sessions (the oldest of all
// among hosts with as many). A flood of sockets from one host thus only
// ever closes its own, never the handshake of a device elsewhere; with one
// pending session per host it is plain oldest-first. The scan costs one
// step per host, and there are at most as many hosts as pending sessions.
func (p *pendingSet) victim() *session {
	var v *session
	most := 0
	for _, l := range p.hosts {
		first := l.Front().Value.(*session)
		if l.Len() > most || l.Len() == most && first.seq < v.seq {
			v, most = first, l.Len()
		}
	}
	return v
}

// hostOf is the part of a remote address that identifies the peer's
// machine: the IP of a TCP address, else the whole address.
func hostOf(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	s := a.String()
	if h, _, err := net.SplitHostPort(s); err == nil {
		return h
	}
	return s
}
