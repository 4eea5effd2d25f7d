package load

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/sim"
	"github.com/nowserving/nowserving/sim/simtest"
)

// TestCallRefusesUnservedService: a keypad whose counter does not serve
// the kiosks' service is refused at once, naming what it serves (its
// calls would never find a ticket: the benchmark waited for ever).
func TestCallRefusesUnservedService(t *testing.T) {
	e, out := keypad2(t)
	err := Call(t.Context(), e, CallOpts{Calls: 1, Service: "F"}, out)
	want := "keypad keypad-2 is at counter 2, which does not serve F (it serves [A])"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err %v, want one containing %q", err, want)
	}
}

// keypad2 is a bench environment on a test daemon as its keypad-2.
func keypad2(t *testing.T) (*sim.Env, *bytes.Buffer) {
	t.Helper()
	d := simtest.Start(t)
	e, err := sim.New(sim.Opts{Config: d.Config, Device: "keypad-2", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return e, &bytes.Buffer{}
}

// TestCallNeedsKiosks: with --kiosks 0 the calls would have no tickets
// (a keypad may not take one): refused at once, saying so (it failed after
// connecting with "forbidden for role").
func TestCallNeedsKiosks(t *testing.T) {
	e, out := keypad2(t)
	err := Call(t.Context(), e, CallOpts{Calls: 1, Service: "A"}, out)
	if err == nil || !strings.Contains(err.Error(), "--kiosks is 0: give at least 1") {
		t.Fatalf("err %v, want --kiosks refused", err)
	}
}

// TestCallGivesUp: a counter where calls do not go through (each refused
// as none waiting or busy, as when another keypad of the same id takes
// the tickets) is waited for with one message saying what for, then given
// up with an error (the benchmark looped for ever, silent).
func TestCallGivesUp(t *testing.T) {
	var out bytes.Buffer
	c := &caller{out: &out, device: sim.Device{ID: "keypad-1", Counter: "1"}, stuck: time.Minute}
	now := time.Now()
	for tries := 1; tries <= 10; tries++ {
		if err := c.stalled(now, tries, wire.ErrNoTicketWaiting); err != nil {
			t.Fatalf("try %d, just now: %v", tries, err)
		}
	}
	if got := strings.Count(out.String(), "bench: waiting for a call to go through at counter 1"); got != 1 {
		t.Errorf("%d messages of what it waits for, want 1:\n%s", got, out.String())
	}
	err := c.stalled(now.Add(-time.Minute), 11, wire.ErrNoTicketWaiting)
	if err == nil || !strings.Contains(err.Error(), "bench: call next at counter 1: no call went through in 1m0s, 11 tries refused") {
		t.Errorf("after a minute: %v, want the counter given up", err)
	}
}
