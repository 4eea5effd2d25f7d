package conform

import (
	"context"
	"io"
	"testing"

	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/sim"
)

// The simulators (package sim, `nowserving sim`) as devices under test:
// each of their commands is one process, so each request is a new boot.

func simEnv(t *testing.T, addr string) *sim.Env {
	e, err := sim.New(sim.Opts{Addr: addr, Device: "dut-1", Secret: string(secret), Retries: 5})
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
