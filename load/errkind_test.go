package load

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/conntest"
)

// TestErrKind sorts the transport errors a client really gets: a server
// that resets the connection, one that closes it before answering, and
// one that does not answer in time.
func TestErrKind(t *testing.T) {
	srv := conntest.Listen(t) // closes the /slow connections when the test ends
	srv.Serve(func(c net.Conn) {
		buf := make([]byte, 4096)
		n, _ := c.Read(buf)
		switch {
		case strings.Contains(string(buf[:n]), "/reset"):
			c.(*net.TCPConn).SetLinger(0) // close sends RST
			c.Close()
		case strings.Contains(string(buf[:n]), "/eof"):
			c.Close()
		default: // /slow: never answers
		}
	})
	cl := &http.Client{Timeout: 200 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
	for path, want := range map[string]string{"/reset": "reset", "/eof": "eof", "/slow": "timeout"} {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", "http://"+srv.Addr()+path, nil)
		resp, err := cl.Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("%s: answered %s", path, resp.Status)
		}
		if got := errKind(err); got != want {
			t.Errorf("%s: errKind(%v) = %s, want %s", path, err, got, want)
		}
	}
	o := &outcome{status: map[int]int{}}
	o.add(0, 0, 0, &net.OpError{Op: "read", Err: context.DeadlineExceeded})
	if l := o.line(); !strings.Contains(l, "transport errors: 1 (timeout 1)") {
		t.Errorf("line %q: want the errors by kind", l)
	}
}
