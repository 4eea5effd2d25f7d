package client

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
)

// conn is one authenticated connection.
type conn struct {
	nc      net.Conn
	br      *bufio.Reader
	timeout time.Duration

	wmu sync.Mutex

	lastSend atomic.Int64 // unix nanoseconds
	lastRecv atomic.Int64

	once   sync.Once
	rmu    sync.Mutex
	reason error // an ERROR the daemon sent before closing
	err    error // set before dead is closed
	dead   chan struct{}
}

func newConn(nc net.Conn, timeout time.Duration) *conn {
	cn := &conn{nc: nc, br: bufio.NewReaderSize(nc, 4<<10), timeout: timeout, dead: make(chan struct{})}
	now := time.Now().UnixNano()
	cn.lastSend.Store(now)
	cn.lastRecv.Store(now)
	return cn
}

// write sends one encoded frame; a failure fails the connection.
func (cn *conn) write(b []byte) error {
	cn.wmu.Lock()
	defer cn.wmu.Unlock()
	select {
	case <-cn.dead:
		return cn.err
	default:
	}
	_ = cn.nc.SetWriteDeadline(time.Now().Add(cn.timeout))
	if _, err := cn.nc.Write(b); err != nil {
		err = fmt.Errorf("client: write: %w", err)
		cn.fail(err)
		return err
	}
	cn.lastSend.Store(time.Now().UnixNano())
	return nil
}

func (cn *conn) setReason(err error) {
	cn.rmu.Lock()
	cn.reason = err
	cn.rmu.Unlock()
}

// fail closes the connection once, recording why (the daemon's ERROR if it
// sent one, else err).
func (cn *conn) fail(err error) {
	cn.once.Do(func() {
		cn.rmu.Lock()
		if cn.reason != nil {
			err = cn.reason
		}
		cn.rmu.Unlock()
		cn.err = err
		_ = cn.nc.Close()
		close(cn.dead)
	})
}

// failoverDial bounds a TCP connect when the client has other daemons to
// try.
const failoverDial = time.Second

// connectAny dials the daemons of the list in turn, starting skip places
// after the current one (0: the current one first), and returns the first
// session; it stops at a refusal that says the device itself is wrong
// (authentication), which every daemon would repeat.
func (c *Client) connectAny(ctx context.Context, skip int) (*conn, wire.Welcome, error) {
	c.mu.Lock()
	start := c.at
	c.mu.Unlock()
	var err error
	for k := range len(c.addrs) {
		i := (start + skip + k) % len(c.addrs)
		var cn *conn
		var w wire.Welcome
		cn, w, err = c.connect(ctx, c.addrs[i])
		if err == nil {
			c.mu.Lock()
			c.at = i
			c.mu.Unlock()
			return cn, w, nil
		}
		var se *wire.StatusError
		if ctx.Err() != nil || (errors.As(err, &se) && !se.Retryable) {
			break
		}
		if len(c.addrs) > 1 {
			c.log.Info("daemon unavailable, trying the next", "addr", c.addrs[i], "err", err)
		}
	}
	return nil, wire.Welcome{}, err
}

// connect dials addr and authenticates.
func (c *Client) connect(ctx context.Context, addr string) (*conn, wire.Welcome, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	d := &net.Dialer{}
	if len(c.addrs) > 1 {
		// Another daemon waits: do not spend the whole time-out on one
		// whose host is down.
		d.Timeout = min(c.opts.Timeout, failoverDial)
	}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, wire.Welcome{}, fmt.Errorf("client: dial %s: %w: %w", addr, ErrUnreachable, err)
	}
	if c.opts.TLSConfig != nil {
		cfg := c.opts.TLSConfig
		if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
			cfg = cfg.Clone()
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			return nil, wire.Welcome{}, fmt.Errorf("client: TLS handshake with %s: %w", addr, err)
		}
		nc = tc
	}
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	cn := newConn(nc, c.opts.Timeout)
	w, err := c.handshake(cn)
	if !stop() && err != nil && ctx.Err() != nil {
		err = fmt.Errorf("client: authenticate with %s: %w", addr, ctx.Err())
	}
	if err != nil {
		_ = nc.Close()
		return nil, wire.Welcome{}, err
	}
	_ = nc.SetDeadline(time.Time{})
	return cn, w, nil
}

// handshake runs HELLO, CHALLENGE, AUTH, WELCOME.
func (c *Client) handshake(cn *conn) (wire.Welcome, error) {
	fail := func(err error) (wire.Welcome, error) {
		var se *wire.StatusError
		if !errors.As(err, &se) {
			err = fmt.Errorf("%w: %w", ErrHandshake, err)
		}
		return wire.Welcome{}, fmt.Errorf("client: authenticate as %s: %w", c.opts.DeviceID, err)
	}
	_ = cn.nc.SetDeadline(time.Now().Add(c.opts.Timeout))
	c.mu.Lock()
	sub := c.sub
	c.mu.Unlock()
	var last uint64
	if sub != nil {
		last = sub.Version()
	}
	hello := &wire.Hello{
		DeviceID: c.opts.DeviceID, Role: c.opts.Role, ProtocolVersion: wire.ProtocolVersion,
		BootNonce: c.opts.BootNonce, LastVersion: last, Firmware: c.opts.Firmware,
	}
	var ch wire.Challenge
	if err := c.exchange(cn, hello, &ch); err != nil {
		return fail(err)
	}
	if len(ch.Nonce) != wire.NonceSize {
		return fail(fmt.Errorf("%w: challenge nonce of %d bytes", ErrUnexpected, len(ch.Nonce)))
	}
	var w wire.Welcome
	if err := c.exchange(cn, &wire.Auth{MAC: wire.ComputeMAC(c.opts.Secret, ch.Nonce, c.opts.DeviceID)}, &w); err != nil {
		return fail(err)
	}
	return w, nil
}

// exchange sends m and reads the answer into want, skipping heartbeats.
func (c *Client) exchange(cn *conn, m wire.Message, want wire.Message) error {
	id := c.newID()
	b, err := wire.EncodeMessage(nil, id, 0, m)
	if err != nil {
		return err
	}
	if _, err := cn.nc.Write(b); err != nil {
		return fmt.Errorf("send %s: %w", m.Type(), err)
	}
	for {
		f, err := wire.ReadFrame(cn.br, 0)
		if err != nil {
			return fmt.Errorf("read answer to %s: %w", m.Type(), err)
		}
		switch f.Type {
		case wire.TypeHeartbeat:
			continue
		case wire.TypeError:
			var e wire.ErrorMsg
			if err := e.Decode(f.Payload); err != nil {
				return err
			}
			if e.RetryAfterMS > 0 {
				return &waitError{err: e.Err(), after: time.Duration(e.RetryAfterMS) * time.Millisecond}
			}
			return e.Err()
		case want.Type():
			return want.Decode(f.Payload)
		}
		return fmt.Errorf("%w: %s answered with %s", ErrUnexpected, m.Type(), f.Type)
	}
}

// waitConn returns the current connection, waiting up to d for one other
// than lost (the connection a request was just lost on; nil: any).
func (c *Client) waitConn(ctx context.Context, d time.Duration, lost *conn) (*conn, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		c.mu.Lock()
		cn, ready, closed, last := c.cur, c.ready, c.closed, c.lastErr
		c.mu.Unlock()
		if closed {
			return nil, ErrClosed
		}
		if cn != nil && cn != lost {
			return cn, nil
		}
		if cn != nil {
			// Lost but not replaced yet: the reader is about to notice.
			ready = cn.dead
			cn = nil
		}
		select {
		case <-ready:
		case <-t.C:
			if last == nil {
				last = errors.New("no connection")
			}
			return nil, fmt.Errorf("client: reconnecting to %s: %w", strings.Join(c.addrs, ", "), last)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.done:
			return nil, ErrClosed
		}
	}
}
