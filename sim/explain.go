package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

// UnreachableError says that nothing answers at the daemon's address; it
// unwraps to the client's error (client.ErrUnreachable).
type UnreachableError struct {
	Addr string
	Err  error
}

func (u *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the daemon at %s: is `nowserving serve` running?", u.Addr)
}

func (u *UnreachableError) Unwrap() error { return u.Err }

// Explain turns a client error met as d into a clear message.
func (e *Env) Explain(err error, d Device) error {
	var se *wire.StatusError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, wire.ErrAuthFailed):
		return fmt.Errorf("the daemon at %s refused device %q (role %s): check the device id, its role and its secret", e.Addr, d.ID, d.Role)
	case errors.As(err, &se):
		return fmt.Errorf("refused: %s (code 0x%02x)", se.Msg, se.Code)
	case errors.Is(err, client.ErrUnreachable):
		return &UnreachableError{Addr: e.Addr, Err: err}
	case (errors.Is(err, client.ErrHandshake) || errors.Is(err, client.ErrTimeout) || errors.Is(err, context.DeadlineExceeded)) &&
		e.TLS == nil && answersHTTP(e.Addr):
		return fmt.Errorf("%s answers HTTP: it looks like the daemon's HTTP port (listen.http); give --addr its device protocol port (listen.protocol, %s in the demo)", e.Addr, DefaultAddr)
	case errors.Is(err, client.ErrHandshake) && e.TLS == nil:
		return fmt.Errorf("the daemon at %s closed the session before welcoming device %q: if it listens with TLS, give --tls-ca (%w)", e.Addr, d.ID, err)
	case errors.Is(err, client.ErrHandshake):
		return fmt.Errorf("the daemon at %s did not complete the session for device %q: %w", e.Addr, d.ID, err)
	case errors.Is(err, client.ErrTimeout):
		return fmt.Errorf("the daemon at %s did not answer in time", e.Addr)
	}
	return err
}

// Reason says why a connection was lost: the daemon's own words when it
// sent an ERROR before closing, else what Explain says.
func (e *Env) Reason(err error, d Device) string {
	var se *wire.StatusError
	if errors.As(err, &se) && !errors.Is(err, wire.ErrAuthFailed) {
		return se.Msg
	}
	if err == nil {
		return ""
	}
	return e.Explain(err, d).Error()
}

// answersHTTP reports whether an HTTP server answers at addr: a device
// pointed at the daemon's HTTP port instead of its protocol port.
func answersHTTP(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("HEAD / HTTP/1.0\r\n\r\n")); err != nil {
		return false
	}
	b := make([]byte, 5)
	n, _ := io.ReadFull(c, b)
	return string(b[:n]) == "HTTP/"
}
