package ledtest

import (
	"bytes"
	"context"
	"os"
	"sync"
	"testing"
	"time"
)

// Line is the far end of a pseudo-terminal, played by a test: the driver
// opens Name as its serial port, and the Line keeps every byte it writes.
// It is safe for concurrent use.
type Line struct {
	master *os.File
	name   string
	mu     sync.Mutex
	got    []byte
	more   chan struct{} // closed and replaced when bytes arrive
}

// NewLine opens a pty pair and starts collecting; the line hangs up when
// the test ends.
func NewLine(t testing.TB) *Line {
	t.Helper()
	m, s := OpenPTY(t)
	// The driver opens the slave by name; this handle keeps the pts node
	// until the master is closed.
	t.Cleanup(func() { s.Close() })
	l := &Line{master: m, name: s.Name(), more: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := m.Read(buf)
			if n > 0 {
				l.mu.Lock()
				l.got = append(l.got, buf[:n]...)
				close(l.more)
				l.more = make(chan struct{})
				l.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		l.Unplug()
		<-done
	})
	return l
}

// Name is the path of the line's serial port.
func (l *Line) Name() string { return l.name }

// Unplug hangs up the line, as a pulled cable.
func (l *Line) Unplug() { l.master.Close() }

// Write sends p to the driver, as the device answering.
func (l *Line) Write(p []byte) (int, error) { return l.master.Write(p) }

// WaitBytes waits up to 10 s until the bytes received contain want, then
// forgets them up to the end of want.
func (l *Line) WaitBytes(t testing.TB, want []byte) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		l.mu.Lock()
		i := bytes.Index(l.got, want)
		got := append([]byte(nil), l.got...)
		ch := l.more
		if i >= 0 {
			l.got = l.got[i+len(want):]
		}
		l.mu.Unlock()
		if i >= 0 {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("pty never received\n% x\ngot\n% x", want, got)
		}
	}
}

// Serve plays the device until ctx is done: whenever bytes arrive, answer
// is given those not yet consumed and returns how many it consumed (0: it
// needs more) and a reply to write back (nil: none).
func (l *Line) Serve(ctx context.Context, answer func(got []byte) (n int, reply []byte)) {
	go func() {
		for {
			l.mu.Lock()
			n, reply := answer(l.got)
			l.got = l.got[n:]
			ch := l.more
			l.mu.Unlock()
			if n > 0 {
				if reply != nil {
					l.master.Write(reply)
				}
				continue
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
	}()
}
