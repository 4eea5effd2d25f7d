package conntest

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/internal/testkit/poll"
)

// A Server hands each connection to its handler, counts it, and CutAll
// closes it: the client then reads EOF.
func TestServerCutAll(t *testing.T) {
	got := make(chan string, 1)
	s := Listen(t)
	s.Serve(func(c net.Conn) {
		b := make([]byte, 5)
		if _, err := io.ReadFull(c, b); err != nil {
			got <- err.Error()
			return
		}
		got <- string(b)
	})
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if g, _ := poll.Recv(t, got, "the handler's read"); g != "hello" {
		t.Fatalf("handler read %q, want hello", g)
	}
	if n := s.Accepted(); n != 1 {
		t.Errorf("Accepted = %d, want 1", n)
	}
	s.CutAll()
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("read after CutAll: %v, want EOF", err)
	}
}

// A closed Server refuses connections and has cut its own; ListenOn
// brings it back on the same address.
func TestServerCloseAndListenOn(t *testing.T) {
	s := Listen(t)
	s.Serve(func(c net.Conn) { io.Copy(c, c) })
	addr := s.Addr()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	poll.Until(t, "the connection accepted", func() bool { return s.Accepted() == 1 })
	s.Close()
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("read after Close: %v, want EOF", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("dial %s after Close: connected, want refused", addr)
	}
	back := ListenOn(t, addr)
	back.Serve(func(c net.Conn) { io.Copy(c, c) })
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s after ListenOn: %v", addr, err)
	}
	defer c2.Close()
	if _, err := c2.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c2, make([]byte, 1)); err != nil {
		t.Errorf("echo after ListenOn: %v", err)
	}
}

// Listener listens on loopback until the test ends.
func TestListener(t *testing.T) {
	var addr string
	t.Run("in", func(t *testing.T) {
		ln := Listener(t)
		addr = ln.Addr().String()
		if host, _, _ := net.SplitHostPort(addr); host != "127.0.0.1" {
			t.Errorf("listening on %s, want 127.0.0.1", addr)
		}
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		c.Close()
	})
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Errorf("dial %s after the test: connected, want refused", addr)
	}
}

// Pump forwards every read, calling before ahead of each, and stops at
// the end of its source or at the first write that fails.
func TestPump(t *testing.T) {
	var dst bytes.Buffer
	calls := 0
	Pump(&dst, io.MultiReader(strings.NewReader("ab"), strings.NewReader("cd")), func() { calls++ })
	if dst.String() != "abcd" || calls != 2 {
		t.Errorf("pumped %q with %d calls of before, want abcd with 2", dst.String(), calls)
	}
	calls = 0
	Pump(failingWriter{}, io.MultiReader(strings.NewReader("ab"), strings.NewReader("cd")), func() { calls++ })
	if calls != 1 {
		t.Errorf("%d calls of before past a failed write, want 1", calls)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("write refused") }
