package protocoltest

import (
	"testing"
	"time"

	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// HQDevices are the devices of NewHQ's daemon: kiosk-1, keypad-1 (counter
// 1), display-1 and console-1, each with its Secret.
func HQDevices() []protocol.Device {
	var devs []protocol.Device
	for _, d := range []struct {
		id   string
		role wire.Role
	}{{"kiosk-1", wire.RoleKiosk}, {"keypad-1", wire.RoleKeypad}, {"display-1", wire.RoleDisplay}, {"console-1", wire.RoleConsole}} {
		pd := protocol.Device{ID: d.id, Role: d.role, Site: "hq", Secret: Secret(d.id)}
		if d.role == wire.RoleKeypad {
			pd.Counter = "1"
		}
		devs = append(devs, pd)
	}
	return devs
}

// NewHQ returns the daemon the conformance kit and its command are tested
// against, not started: a site "hq" with services A and B, counter 1
// serving both, and HQDevices; it announces heartbeat and limits each
// device to 10 requests a second (bucket 20).
func NewHQ(t testing.TB, heartbeat time.Duration) *Daemon {
	cs := []queue.CounterService{{Service: "A", Weight: 1}, {Service: "B", Weight: 1}}
	site := queue.Site{
		ID: "hq", Location: time.UTC, Rollover: 4 * time.Hour,
		Services: []queue.Service{{Code: "A", Prefix: "A", Width: 3, AvgService: time.Minute}, {Code: "B", Prefix: "B", Width: 3, AvgService: time.Minute}},
		Counters: []queue.Counter{{ID: "1", Services: cs}},
	}
	d := New(t, site, HQDevices())
	d.ServerOpts = func(o *protocol.Opts) {
		o.Heartbeat = heartbeat
		o.RateLimit, o.RateBurst = 10, 20
	}
	return d
}

// StartHQ starts NewHQ's daemon and stops it when the test ends.
func StartHQ(t testing.TB, heartbeat time.Duration) *Daemon {
	d := NewHQ(t, heartbeat)
	d.Start()
	t.Cleanup(d.Stop)
	return d
}
