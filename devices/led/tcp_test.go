package led_test

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices/led"
	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
)

// deviceServer is a loopback stand-in for a serial device server: it
// accepts connections and collects what arrives.
type deviceServer struct {
	*conntest.Server
	mu  sync.Mutex
	got []byte
}

func newDeviceServer(t *testing.T) *deviceServer {
	t.Helper()
	s := &deviceServer{Server: conntest.Listen(t)}
	s.Serve(func(c net.Conn) {
		buf := make([]byte, 1024)
		for {
			n, err := c.Read(buf)
			s.mu.Lock()
			s.got = append(s.got, buf[:n]...)
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	})
	return s
}

func (s *deviceServer) has(b []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Contains(s.got, b)
}

// TestPortTCPDeviceServer: "tcp://host:port" reaches a serial device
// server; when the server drops the connection the port reconnects and
// writes the latest content.
func TestPortTCPDeviceServer(t *testing.T) {
	srv := newDeviceServer(t)
	d := template(t)
	p := startPort(t, fastOpts("tcp://"+srv.Addr(), d))

	c1 := led.Content{Number: "A100", Counter: "1"}
	p.Show(5, c1)
	poll.Until(t, "first frame over tcp", func() bool { return srv.has(encode(t, d, 5, c1)) })

	srv.CutAll()
	time.Sleep(20 * time.Millisecond) // let the FIN arrive
	c2 := led.Content{Number: "A101", Counter: "2"}
	p.Show(5, c2)
	poll.Until(t, "frame after reconnect", func() bool { return srv.has(encode(t, d, 5, c2)) && srv.Accepted() >= 2 })
}

func TestNewPortErrors(t *testing.T) {
	d := template(t)
	tests := []led.PortOpts{
		{Driver: d},
		{Name: "/dev/null"},
		{Name: "/dev/ttyS0", Driver: d, Mode: led.Mode{Parity: "weird"}},
		{Name: "/dev/ttyS0", Driver: d, Mode: led.Mode{StopBits: 3}},
		{Name: "/dev/ttyS0", Driver: d, Mode: led.Mode{DataBits: 9}},
		{Name: "tcp://127.0.0.1:1", Driver: d, Mode: led.Mode{Baud: -1}},
	}
	for _, o := range tests {
		if _, err := led.NewPort(o); err == nil {
			t.Errorf("NewPort(%+v): want error", o)
		}
	}
}

// TestPortFile: "file:PATH" appends frames, for demos without hardware.
func TestPortFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "led.bin")
	d := template(t)
	p := startPort(t, fastOpts("file:"+path, d))
	c := led.Content{Number: "A001", Counter: "7"}
	p.Show(1, c)
	want := encode(t, d, 1, c)
	poll.Until(t, "frame in file", func() bool {
		b, _ := os.ReadFile(path)
		return bytes.Equal(b, want)
	})
}
