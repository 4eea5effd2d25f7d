package led

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"go.bug.st/serial"
)

// Link is an open serial line: a serial port or a TCP connection to a serial
// device server. ReadTimeout returns what arrives within d, and (0, nil) when
// nothing did; d == 0 only takes what is already buffered.
type Link interface {
	io.Writer
	ReadTimeout(p []byte, d time.Duration) (int, error)
	io.Closer
}

// Open opens the line named by opts.Name: "tcp://host:port" dials a serial
// device server, "file:PATH" appends every frame to a file (for demos
// without hardware; nothing ever answers), anything else is a serial device
// opened with go.bug.st/serial in opts' mode (Baud, DataBits, Parity,
// StopBits).
func Open(opts PortOpts) (Link, error) {
	opts = opts.withDefaults()
	if path, ok := strings.CutPrefix(opts.Name, "file:"); ok {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("led: open %s: %w", opts.Name, err)
		}
		return fileLink{f}, nil
	}
	if addr, ok := strings.CutPrefix(opts.Name, "tcp://"); ok {
		c, err := net.DialTimeout("tcp", addr, opts.DialTimeout)
		if err != nil {
			return nil, fmt.Errorf("led: dial %s: %w", opts.Name, err)
		}
		return &tcpLink{c: c}, nil
	}
	if err := checkMode(opts.Name, opts.Mode); err != nil {
		return nil, err
	}
	p, err := serial.Open(opts.Name, opts.Mode.serial())
	if err != nil {
		return nil, fmt.Errorf("led: open %s: %w", opts.Name, err)
	}
	return &serialLink{p: p}, nil
}

// Mode is a serial line's mode as a config file writes it (the
// mapstructure tags are the configuration's keys); zeros take the defaults,
// 9600 8N1.
type Mode struct {
	// Baud is the speed, 1..4000000 (0: 9600).
	Baud int `mapstructure:"baud"`
	// DataBits is 5..8 (0: 8).
	DataBits int `mapstructure:"data_bits"`
	// Parity is none (default), odd, even, mark or space.
	Parity string `mapstructure:"parity"`
	// StopBits is 1 (0: 1) or 2.
	StopBits int `mapstructure:"stop_bits"`
}

// parities maps the Parity names onto go.bug.st/serial's.
var parities = map[string]serial.Parity{
	"": serial.NoParity, "none": serial.NoParity, "odd": serial.OddParity, "even": serial.EvenParity,
	"mark": serial.MarkParity, "space": serial.SpaceParity,
}

// Check returns nil or an error holding the [OptErrors] of the fields that
// NewPort and NewKeypadBus refuse.
func (m Mode) Check() error { return m.check().err("line mode") }

func (m Mode) check() OptErrors {
	var es OptErrors
	es.inRange("baud", m.Baud, 1, 4000000, "9600")
	if m.DataBits != 0 && (m.DataBits < 5 || m.DataBits > 8) {
		es.add("data_bits", "must be 5..8, got %d", m.DataBits)
	}
	if _, ok := parities[m.Parity]; !ok {
		es.add("parity", "must be none, odd, even, mark or space, got %q", m.Parity)
	}
	if m.StopBits != 0 && m.StopBits != 1 && m.StopBits != 2 {
		es.add("stop_bits", "must be 1 or 2, got %d", m.StopBits)
	}
	return es
}

// checkMode refuses the line mode of the line called name.
func checkMode(name string, m Mode) error {
	if es := m.check(); len(es) > 0 {
		return fmt.Errorf("led: %s: line mode: %w", name, es)
	}
	return nil
}

// serial returns the mode for go.bug.st/serial; Check passed.
func (m Mode) serial() *serial.Mode {
	sm := &serial.Mode{BaudRate: cmp.Or(m.Baud, 9600), DataBits: cmp.Or(m.DataBits, 8), Parity: parities[m.Parity],
		StopBits: serial.OneStopBit}
	if m.StopBits == 2 {
		sm.StopBits = serial.TwoStopBits
	}
	return sm
}

type serialLink struct{ p serial.Port }

func (s *serialLink) Write(b []byte) (int, error) { return s.p.Write(b) }
func (s *serialLink) Close() error                { return s.p.Close() }
func (s *serialLink) ReadTimeout(b []byte, d time.Duration) (int, error) {
	if err := s.p.SetReadTimeout(d); err != nil {
		return 0, err
	}
	return s.p.Read(b)
}

type fileLink struct{ *os.File }

func (f fileLink) ReadTimeout(_ []byte, d time.Duration) (int, error) {
	time.Sleep(min(d, 50*time.Millisecond))
	return 0, nil
}

type tcpLink struct{ c net.Conn }

func (t *tcpLink) Write(b []byte) (int, error) { return t.c.Write(b) }
func (t *tcpLink) Close() error                { return t.c.Close() }
func (t *tcpLink) ReadTimeout(b []byte, d time.Duration) (int, error) {
	// A deadline already past fails before reading, which would hide a
	// pending EOF: poll for at least a millisecond.
	d = max(d, time.Millisecond)
	if err := t.c.SetReadDeadline(time.Now().Add(d)); err != nil {
		return 0, err
	}
	n, err := t.c.Read(b)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return n, nil
	}
	return n, err
}

// conn runs the writes of one Link in their own goroutine so that a write
// stuck in the kernel (a jammed line, a full pty) costs the owner a timeout,
// never a hang. At most one write is in flight.
type conn struct {
	l    Link
	reqs chan []byte
	res  chan error
	done chan struct{} // closed when the writer goroutine has exited
}

func newConn(l Link) *conn {
	c := &conn{l: l, reqs: make(chan []byte), res: make(chan error, 1), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for p := range c.reqs {
			_, err := l.Write(p)
			c.res <- err
		}
	}()
	return c
}

// write sends p within d; on a timeout the caller must close the conn.
func (c *conn) write(p []byte, d time.Duration) error {
	c.reqs <- p
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-c.res:
		return err
	case <-t.C:
		return ErrTimeout
	}
}

// close closes the link and lets the writer exit once its write returns.
func (c *conn) close() error {
	close(c.reqs)
	return c.l.Close()
}

// drain discards bytes already received (a late reply, line noise).
func (c *conn) drain(buf []byte) error {
	for range 16 {
		n, err := c.l.ReadTimeout(buf, 0)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
	}
	return nil
}

// await reads until parse reports a complete reply, d has passed or ctx is
// done (checked every 50 ms).
func (c *conn) await(ctx context.Context, d time.Duration, parse func([]byte) (bool, error)) ([]byte, error) {
	deadline := time.Now().Add(d)
	var got []byte
	buf := make([]byte, 256)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return got, ErrTimeout
		}
		if err := ctx.Err(); err != nil {
			return got, err
		}
		n, err := c.l.ReadTimeout(buf, min(left, 50*time.Millisecond))
		if err != nil {
			return got, err
		}
		if n == 0 {
			continue
		}
		got = append(got, buf[:n]...)
		if len(got) > 64<<10 {
			return got, fmt.Errorf("led: reply over 64 KiB: %w", ErrReply)
		}
		done, err := parse(got)
		if done || err != nil {
			return got, err
		}
	}
}
