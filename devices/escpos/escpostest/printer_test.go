package escpostest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
)

// TestStatusReplies talks to the fake over a plain TCP connection and checks
// the exact status bytes an Epson printer would send.
func TestStatusReplies(t *testing.T) {
	tests := []struct {
		name  string
		state State
		want  []byte // replies to DLE EOT 1, 2, 3, 4
	}{
		{"ok", State{}, []byte{0x12, 0x12, 0x12, 0x12}},
		{"near end", State{Paper: PaperNearEnd}, []byte{0x12, 0x12, 0x12, 0x1E}},
		{"paper out", State{Paper: PaperOut}, []byte{0x1A, 0x32, 0x12, 0x7E}},
		{"cover open", State{CoverOpen: true}, []byte{0x1A, 0x16, 0x12, 0x12}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPrinter()
			defer p.Close()
			p.SetState(tt.state)
			c, err := net.Dial("tcp", p.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(5 * time.Second))
			if _, err := c.Write([]byte{0x10, 0x04, 1, 0x10, 0x04, 2, 0x10, 0x04, 3, 0x10, 0x04, 4}); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, 4)
			if _, err := io.ReadFull(c, got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Errorf("replies % X, want % X", got, tt.want)
			}
		})
	}
}

func TestRecordsJobsWithoutQueries(t *testing.T) {
	p := NewPrinter()
	defer p.Close()
	for _, job := range [][]byte{[]byte("\x1b@first\n"), []byte("\x1b@second\n")} {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte{0x10, 0x04, 1})
		c.Write(job)
		c.Write([]byte{0x10, 0x04, 4})
		c.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	jobs, err := p.WaitJobs(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if string(jobs[0]) != "\x1b@first\n" || string(jobs[1]) != "\x1b@second\n" {
		t.Errorf("jobs = %q", jobs)
	}
	if got := string(p.Received()); got != "\x1b@first\n\x1b@second\n" {
		t.Errorf("received %q", got)
	}
	if got := p.Queries(); !bytes.Equal(got, []byte{1, 4, 1, 4}) {
		t.Errorf("queries = %v", got)
	}
	p.Reset()
	if len(p.Received()) != 0 || len(p.Jobs()) != 0 || len(p.Queries()) != 0 {
		t.Errorf("Reset kept data")
	}
}

func TestSilentAndWaitTimeout(t *testing.T) {
	p := NewPrinter()
	defer p.Close()
	p.SetState(State{Silent: true})
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte{0x10, 0x04, 1})
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	var b [1]byte
	if n, err := c.Read(b[:]); n != 0 || err == nil {
		t.Errorf("silent printer answered % X", b[:n])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := p.WaitJobs(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitJobs = %v, want deadline exceeded", err)
	}
}

func TestCloseWithOpenConnection(t *testing.T) {
	p := NewPrinter()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("partial"))
	done := make(chan struct{})
	go func() { p.Close(); close(done) }()
	poll.Recv(t, done, "Close (hangs on an open connection)")
}
