package conform

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

var secret = []byte("device-secret-0123456789")

// runDevice runs the harness for role against the device that drive
// starts on the harness's address, and returns the report.
func runDevice(t *testing.T, role wire.Role, drive func(ctx context.Context, addr string)) *Report {
	t.Helper()
	return runDeviceOn(t, conntest.Listener(t), role, drive)
}

// runDeviceOn is runDevice with the harness listening on ln.
func runDeviceOn(t *testing.T, ln net.Listener, role wire.Role, drive func(ctx context.Context, addr string)) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addr := ln.Addr().String()
	dctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		drive(dctx, addr)
	}()
	rep, err := Device(ctx, ln, DeviceOpts{Role: role, DeviceID: "dut-1", Secret: secret, Heartbeat: 500 * time.Millisecond, Wait: 10 * time.Second})
	stop()
	<-done
	if err != nil {
		t.Fatalf("Device: %v", err)
	}
	if testing.Verbose() {
		rep.WriteTo(os.Stderr)
	}
	return rep
}

// clientOpts are the options of the project's client as device "dut-1".
func clientOpts(role wire.Role) client.Opts {
	return client.Opts{DeviceID: "dut-1", Secret: secret, Role: role, MinBackoff: 300 * time.Millisecond, MaxBackoff: time.Second}
}

// loop dials as role and calls act until ctx ends.
func loop(role wire.Role, act func(ctx context.Context, c *client.Client)) func(ctx context.Context, addr string) {
	return func(ctx context.Context, addr string) {
		c, err := client.Dial(ctx, addr, clientOpts(role))
		if err != nil {
			return
		}
		defer c.Close()
		for ctx.Err() == nil {
			act(ctx, c)
		}
	}
}

func TestClientKioskConforms(t *testing.T) {
	t.Parallel()
	rep := runDevice(t, wire.RoleKiosk, loop(wire.RoleKiosk, func(ctx context.Context, c *client.Client) {
		_, _ = c.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{})
	}))
	if f := rep.Failures(); f != "" {
		t.Errorf("the client as a kiosk fails:\n%s", f)
	}
}

func TestClientKeypadConforms(t *testing.T) {
	t.Parallel()
	rep := runDevice(t, wire.RoleKeypad, loop(wire.RoleKeypad, func(ctx context.Context, c *client.Client) {
		_, _ = c.CallNext(ctx, 0)
	}))
	if f := rep.Failures(); f != "" {
		t.Errorf("the client as a keypad fails:\n%s", f)
	}
}

func TestClientDisplayConforms(t *testing.T) {
	t.Parallel()
	rep := runDevice(t, wire.RoleDisplay, func(ctx context.Context, addr string) {
		c, err := client.Dial(ctx, addr, clientOpts(wire.RoleDisplay))
		if err != nil {
			return
		}
		defer c.Close()
		for ctx.Err() == nil {
			s, err := c.Subscribe(ctx, client.Filter{})
			if err != nil {
				continue
			}
			for range s.Updates() {
			}
		}
	})
	if f := rep.Failures(); f != "" {
		t.Errorf("the client as a display fails:\n%s", f)
	}
}
