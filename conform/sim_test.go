package conform

import (
	"context"
	"crypto/tls"
	"io"
	"testing"

	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/sim"
)

// The simulators (package sim, `nowserving sim`) as devices under test:
// each of their commands is one process, so each request is a new boot.

func simEnv(t *testing.T, addr string) *sim.Env { return simEnvOpts(t, sim.Opts{Addr: addr}) }

// simEnvOpts is simEnv with o's other options (TLS).
func simEnvOpts(t *testing.T, o sim.Opts) *sim.Env {
	o.Device, o.Secret, o.Retries = "dut-1", string(secret), 5
	e, err := sim.New(o)
	if err != nil {
		t.Error(err)
	}
	return e
}

func TestSimConforms(t *testing.T) {
	t.Parallel()
	cases := []struct {
		role wire.Role
		act  func(ctx context.Context, e *sim.Env)
	}{
		{wire.RoleKiosk, func(ctx context.Context, e *sim.Env) {
			_ = e.Kiosk(ctx, sim.KioskOpts{Service: "A", Class: "normal"}, io.Discard)
		}},
		{wire.RoleKeypad, func(ctx context.Context, e *sim.Env) {
			_ = e.Keypad(ctx, sim.KeypadOpts{Counter: "1", Action: "next"}, io.Discard)
		}},
		{wire.RoleDisplay, func(ctx context.Context, e *sim.Env) {
			_ = e.Display(ctx, sim.DisplayOpts{}, io.Discard, io.Discard)
		}},
	}
	for _, c := range cases {
		t.Run(c.role.String(), func(t *testing.T) {
			t.Parallel()
			rep := runDevice(t, c.role, func(ctx context.Context, addr string) {
				e := simEnv(t, addr)
				for e != nil && ctx.Err() == nil {
					c.act(ctx, e)
				}
			})
			if f := rep.Failures(); f != "" {
				t.Errorf("sim %s fails:\n%s", c.role, f)
			}
		})
	}
}

// TestSimConformsTLS: the harness plays the daemon over TLS, as `conform
// kiosk --tls-cert --tls-key` does, for a kiosk that connects with TLS.
func TestSimConformsTLS(t *testing.T) {
	t.Parallel()
	cert, _ := protocoltest.SelfSigned(t)
	ln := tls.NewListener(conntest.Listener(t), &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	rep := runDeviceOn(t, ln, wire.RoleKiosk, func(ctx context.Context, addr string) {
		e := simEnvOpts(t, sim.Opts{Addr: addr, TLSInsecure: true})
		for e != nil && ctx.Err() == nil {
			_ = e.Kiosk(ctx, sim.KioskOpts{Service: "A", Class: "normal"}, io.Discard)
		}
	})
	if f := rep.Failures(); f != "" {
		t.Errorf("sim kiosk over TLS fails:\n%s", f)
	}
	if len(rep.Results()) < 10 {
		t.Errorf("%d checks ran over TLS", len(rep.Results()))
	}
}
