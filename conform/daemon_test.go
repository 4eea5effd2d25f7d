package conform

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// startDaemon runs the project's daemon (newDaemon) until the test ends.
func startDaemon(t *testing.T) *protocoltest.Daemon {
	d := newDaemon(t)
	d.Start()
	t.Cleanup(d.Stop)
	return d
}

// newDaemon returns the project's daemon (SQLite engine, protocol server)
// with a short heartbeat and the default rate limit, not started.
func newDaemon(t *testing.T) *protocoltest.Daemon {
	cs := []queue.CounterService{{Service: "A", Weight: 1}, {Service: "B", Weight: 1}}
	site := queue.Site{
		ID: "hq", Location: time.UTC, Rollover: 4 * time.Hour,
		Services: []queue.Service{{Code: "A", Prefix: "A", Width: 3, AvgService: time.Minute}, {Code: "B", Prefix: "B", Width: 3, AvgService: time.Minute}},
		Counters: []queue.Counter{{ID: "1", Services: cs}},
	}
	var devs []protocol.Device
	for _, d := range credentials() {
		pd := protocol.Device{ID: d.ID, Role: d.Role, Site: "hq", Secret: d.Secret}
		if d.Role == wire.RoleKeypad {
			pd.Counter = "1"
		}
		devs = append(devs, pd)
	}
	d := protocoltest.New(t, site, devs)
	d.ServerOpts = func(o *protocol.Opts) {
		o.Heartbeat = 500 * time.Millisecond
		o.RateLimit, o.RateBurst = 10, 20
	}
	return d
}

func credentials() []Credential {
	var out []Credential
	for _, d := range []struct {
		id   string
		role wire.Role
	}{{"kiosk-1", wire.RoleKiosk}, {"keypad-1", wire.RoleKeypad}, {"display-1", wire.RoleDisplay}, {"console-1", wire.RoleConsole}} {
		out = append(out, Credential{ID: d.id, Secret: protocoltest.Secret(d.id), Role: d.role})
	}
	return out
}

func TestDaemonConforms(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	all := credentials()
	for _, tc := range []struct {
		name string
		devs []Credential
	}{
		{"kiosk and display", []Credential{all[0], all[2]}},
		{"keypad", []Credential{all[1]}},
		{"console", []Credential{all[3]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rep, err := Daemon(ctx, DaemonOpts{Addr: d.Addr, Devices: tc.devs, Timeout: 3 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if testing.Verbose() {
				rep.WriteTo(os.Stderr)
			}
			if f := rep.Failures(); f != "" {
				t.Errorf("the daemon fails:\n%s", f)
			}
		})
	}
}

func TestDaemonWrongSecret(t *testing.T) {
	t.Parallel()
	d := startDaemon(t)
	_, err := Daemon(context.Background(), DaemonOpts{Addr: d.Addr, Devices: []Credential{{ID: "kiosk-1", Secret: []byte("wrong"), Role: wire.RoleKiosk}}})
	if err == nil {
		t.Fatal("Daemon with a wrong secret: no error")
	}
}
