package conntest

import (
	"io"
	"net"
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
