package sim_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/sim"
	"github.com/nowserving/nowserving/sim/simtest"
)

// env resolves the test daemon's configuration.
func env(t *testing.T, d *simtest.Daemon, o sim.Opts) *sim.Env {
	t.Helper()
	o.Config, o.Timeout = d.Config, 5*time.Second
	e, err := sim.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestActions plays a kiosk, the keypad of counter 1, a status query and a
// display that replays the events after the first against a real daemon.
func TestActions(t *testing.T) {
	d := simtest.Start(t)
	e := env(t, d, sim.Opts{})
	ctx := t.Context()
	run := func(name string, fn func(out *bytes.Buffer) error, want ...string) {
		t.Helper()
		var out bytes.Buffer
		if err := fn(&out); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, w := range want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s printed %q, want it to contain %q", name, out.String(), w)
			}
		}
	}
	run("kiosk", func(out *bytes.Buffer) error {
		return e.Kiosk(ctx, sim.KioskOpts{Service: "A", Class: "normal"}, out)
	}, "ticket A001  service A  normal\n", "people ahead: 0\n", "estimated wait: ")
	run("keypad next", func(out *bytes.Buffer) error {
		return e.Keypad(ctx, sim.KeypadOpts{Counter: "1", Action: "next"}, out)
	}, "A001 called -> 1\n", "lcd: ")
	run("keypad start", func(out *bytes.Buffer) error {
		return e.Keypad(ctx, sim.KeypadOpts{Counter: "1", Action: "start"}, out)
	}, "A001 serving at 1\n")
	run("keypad pause", func(out *bytes.Buffer) error {
		return e.Keypad(ctx, sim.KeypadOpts{Counter: "2", Action: "pause", Arg: "lunch"}, out)
	}, "counter 2 paused\n")
	run("status", func(out *bytes.Buffer) error { return e.Status(ctx, "A001", out) }, "A001 serving at 1\n")
	run("snapshot", func(out *bytes.Buffer) error { return e.Status(ctx, "", out) },
		"site clinic", "  service A open: 0 waiting, 1 issued, 0 served", "  counter 1 ", ": A001 serving")
	from := uint64(1) // replay what followed the first ticket
	run("display", func(out *bytes.Buffer) error {
		var errw bytes.Buffer
		dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		if err := e.Display(dctx, sim.DisplayOpts{From: &from, Count: 3}, out, &errw); err != nil {
			return err
		}
		if !strings.Contains(errw.String(), "watching site clinic") || dctx.Err() != nil {
			t.Errorf("display: stderr %q, %v; want it to stop after 3 events", errw.String(), dctx.Err())
		}
		return nil
	}, "v2 CALLED A001 -> 1\nv3 SERVING A001 at 1\nv4 COUNTER_PAUSED 2\n")

	var out bytes.Buffer
	err := e.Keypad(ctx, sim.KeypadOpts{Counter: "1", Action: "transfer"}, &out)
	if err == nil || err.Error() != "sim: keypad transfer: give --to-service or --to-counter" {
		t.Errorf("transfer nowhere: %v", err)
	}
	// The site's own class, known from WELCOME; a class it has not is
	// refused before anything is sent, naming the site's.
	out.Reset()
	if err := e.Kiosk(ctx, sim.KioskOpts{Service: "A", Class: "Priority"}, &out); err != nil || !strings.Contains(out.String(), "service A  priority\n") {
		t.Errorf("priority ticket: %v %q", err, out.String())
	}
	if err := e.Kiosk(ctx, sim.KioskOpts{Service: "A", Class: "vip"}, &out); err == nil || err.Error() != `sim: class "vip": site clinic has normal, priority, revisit` {
		t.Errorf("vip at a site without it: %v", err)
	}
	if err := e.Kiosk(ctx, sim.KioskOpts{Service: "F", Class: "normal"}, &out); err != nil {
		t.Fatal(err)
	}
	if err := e.Kiosk(ctx, sim.KioskOpts{Service: "F", Class: "normal"}, &out); err == nil || !strings.HasPrefix(err.Error(), "refused: ") {
		t.Errorf("a second ticket of a full service: %v, want refused", err)
	}
}

// TestDisplayWaits: a display started with Wait before anything listens
// says it waits, and gives up quietly when its context ends.
func TestDisplayWaits(t *testing.T) {
	e, err := sim.New(sim.Opts{Addr: "127.0.0.1:1", Device: "d", Secret: "s", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	var out, errw bytes.Buffer
	if err := e.Display(ctx, sim.DisplayOpts{Wait: true}, &out, &errw); err != nil {
		t.Errorf("display: %v, want nil when interrupted", err)
	}
	if got := errw.String(); got != "waiting for the daemon at 127.0.0.1:1...\n" {
		t.Errorf("stderr %q", got)
	}
}
