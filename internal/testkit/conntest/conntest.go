// Package conntest holds the loopback TCP listener tests stand in for a
// peer with (a serial device server, a daemon, a proxy in front of one): it
// serves every connection on a goroutine of its own, keeps them, and cuts
// them all at once, the peer's side of a network cut; closed, it refuses
// connections until ListenOn brings it back on its port. Listener is the
// bare loopback listener, for a server of the test's own; Pump is the
// byte pump of a proxy the test puts between a client and its server. It
// imports only the standard library.
package conntest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Server accepts on 127.0.0.1 and hands each connection to the handler
// given to Serve.
type Server struct {
	ln net.Listener

	mu       sync.Mutex
	conns    []net.Conn // open ones, as far as Server knows: cleared by CutAll
	accepted int
}

// Listener returns a listener on a free loopback port, closed when the
// test ends: for a server of the test's own that takes a net.Listener
// (HTTP, the protocol, a harness).
func Listener(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("conntest: listen on loopback: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// Listen returns a Server listening on a free loopback port; it accepts
// once Serve is called (so that a handler may use what holds the Server).
// The listener and every connection are closed when the test ends.
func Listen(t testing.TB) *Server {
	t.Helper()
	return ListenOn(t, "127.0.0.1:0")
}

// ListenOn is Listen on addr: the address of a Server closed before, for
// a peer that comes back on its port.
func ListenOn(t testing.TB, addr string) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("conntest: listen on %s: %v", addr, err)
	}
	s := &Server{ln: ln}
	t.Cleanup(s.Close)
	return s
}

// Close stops accepting and closes every connection: the peer is down,
// and its port refuses connections.
func (s *Server) Close() {
	s.ln.Close()
	s.CutAll()
}

// Serve starts accepting: every connection c is kept and served by
// serve(c) on a goroutine of its own; serve need not close c.
func (s *Server) Serve(serve func(c net.Conn)) {
	go func() {
		for {
			c, err := s.ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.accepted++
			s.mu.Unlock()
			go serve(c)
		}
	}()
}

// Addr is the host:port the Server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Accepted is how many connections the Server has accepted.
func (s *Server) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// Keep adds c, e.g. a proxy's connection onward, to what CutAll closes.
func (s *Server) Keep(c net.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns = append(s.conns, c)
}

// CutAll closes every connection accepted or kept so far.
func (s *Server) CutAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
	s.conns = nil
}

// Pump copies what it reads from src to dst until a read fails (EOF
// included) or a write does, calling before ahead of each write: where a
// proxy counts the turns of a conversation, or holds the bytes back.
func Pump(dst io.Writer, src io.Reader, before func()) {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			before()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
