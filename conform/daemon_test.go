package conform

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
)

// heartbeat is what the test daemons announce.
const heartbeat = 500 * time.Millisecond

func startDaemon(t *testing.T) *protocoltest.Daemon { return protocoltest.StartHQ(t, heartbeat) }

func credentials() []Credential {
	var out []Credential
	for _, d := range protocoltest.HQDevices() {
		out = append(out, Credential{ID: d.ID, Secret: d.Secret, Role: d.Role})
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
