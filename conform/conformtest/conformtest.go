// Package conformtest runs the project's daemon for the tests of the
// conformance kit and of its command: a site "hq" with services A and B,
// counter 1, and a kiosk, a keypad (counter 1), a display and a console.
package conformtest

import (
	"testing"
	"time"

	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// Device is one device the daemon knows; its secret is
// protocoltest.Secret(ID).
type Device struct {
	ID   string
	Role wire.Role
}

// Devices are the daemon's devices: kiosk-1, keypad-1, display-1, console-1.
var Devices = []Device{{"kiosk-1", wire.RoleKiosk}, {"keypad-1", wire.RoleKeypad}, {"display-1", wire.RoleDisplay}, {"console-1", wire.RoleConsole}}

// New returns the daemon, not started, announcing heartbeat and limiting
// each device to 10 requests a second (bucket 20).
func New(t testing.TB, heartbeat time.Duration) *protocoltest.Daemon {
	cs := []queue.CounterService{{Service: "A", Weight: 1}, {Service: "B", Weight: 1}}
	site := queue.Site{
		ID: "hq", Location: time.UTC, Rollover: 4 * time.Hour,
		Services: []queue.Service{{Code: "A", Prefix: "A", Width: 3, AvgService: time.Minute}, {Code: "B", Prefix: "B", Width: 3, AvgService: time.Minute}},
		Counters: []queue.Counter{{ID: "1", Services: cs}},
	}
	var devs []protocol.Device
	for _, d := range Devices {
		pd := protocol.Device{ID: d.ID, Role: d.Role, Site: "hq", Secret: protocoltest.Secret(d.ID)}
		if d.Role == wire.RoleKeypad {
			pd.Counter = "1"
		}
		devs = append(devs, pd)
	}
	d := protocoltest.New(t, site, devs)
	d.ServerOpts = func(o *protocol.Opts) {
		o.Heartbeat = heartbeat
		o.RateLimit, o.RateBurst = 10, 20
	}
	return d
}

// Start starts New's daemon and stops it when the test ends.
func Start(t testing.TB, heartbeat time.Duration) *protocoltest.Daemon {
	d := New(t, heartbeat)
	d.Start()
	t.Cleanup(d.Stop)
	return d
}
