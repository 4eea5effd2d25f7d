package protocol

import (
	"net"
	"testing"
)

func TestPendingVictim(t *testing.T) {
	tests := []struct {
		name  string
		hosts []string // of the sessions, in admission order
		want  int      // index of the victim
	}{
		{"one host: the oldest", []string{"a", "a", "a"}, 0},
		{"one per host: the oldest", []string{"c", "a", "b"}, 0},
		{"the host with the most", []string{"dev", "x", "x", "dev2", "x"}, 1},
		{"tie: the older front", []string{"b", "a", "a", "b"}, 0},
		{"tie: the older front, other order", []string{"a", "b", "b", "a"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p pendingSet
			ss := make([]*session, len(tt.hosts))
			for i, h := range tt.hosts {
				ss[i] = &session{host: h, seq: uint64(i + 1)}
				p.add(ss[i])
			}
			if got := p.victim(); got != ss[tt.want] {
				t.Errorf("victim is %s #%d, want %s #%d", got.host, got.seq-1, tt.hosts[tt.want], tt.want)
			}
		})
	}
}

func TestPendingRemove(t *testing.T) {
	var p pendingSet
	a, b, c := &session{host: "h", seq: 1}, &session{host: "h", seq: 2}, &session{host: "g", seq: 3}
	for _, s := range []*session{a, b, c} {
		p.add(s)
	}
	p.remove(a)
	p.remove(a) // not in the set any more: nothing happens
	if p.n != 2 || p.victim() != b {
		t.Errorf("after removing the oldest: %d pending, victim #%d; want 2 and #2", p.n, p.victim().seq)
	}
	p.remove(b)
	p.remove(c)
	if p.n != 0 || len(p.hosts) != 0 {
		t.Errorf("emptied set holds %d sessions in %d hosts", p.n, len(p.hosts))
	}
}

func TestHostOf(t *testing.T) {
	tests := []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 5000}, "10.0.0.7"},
		{&net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 5000}, "fe80::1"},
		{&net.UnixAddr{Name: "/run/x.sock", Net: "unix"}, "/run/x.sock"},
		{pipeAddr("10.0.0.8:99"), "10.0.0.8"},
	}
	for _, tt := range tests {
		if got := hostOf(tt.addr); got != tt.want {
			t.Errorf("hostOf(%v) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

type pipeAddr string

func (a pipeAddr) Network() string { return "pipe" }
func (a pipeAddr) String() string  { return string(a) }
