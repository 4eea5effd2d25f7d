package sim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

const envYAML = `
store: { driver: sqlite, dsn: q.db }
listen: { protocol: %q, http: "" }
sites:
  - id: clinic
    timezone: UTC
    services: [ { code: A, name: { en: General } } ]
    counters: [ { id: "1", services: [A] }, { id: "2", services: [A] } ]
devices:
  - { id: kiosk-1,   role: kiosk,   site: clinic, secret: "test-kiosk-1-secret-0123" }
  - { id: keypad-1,  role: keypad,  site: clinic, counter: "1", secret: "test-keypad-1-secret-0123" }
  - { id: keypad-2,  role: keypad,  site: clinic, counter: "2", secret: "test-keypad-2-secret-0123" }
  - { id: console-1, role: console, site: clinic, secret: "test-console-1-secret-0123" }
`

// newEnv resolves o against a configuration listening on listen.
func newEnv(t *testing.T, listen string, o Opts) *Env {
	t.Helper()
	file := filepath.Join(t.TempDir(), "site.yaml")
	if err := os.WriteFile(file, fmt.Appendf(nil, envYAML, listen), 0o600); err != nil {
		t.Fatal(err)
	}
	o.Config = file
	e, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return e
}

func TestAddr(t *testing.T) {
	for _, tc := range []struct{ listen, flag, want string }{
		{"127.0.0.1:7401", "", "127.0.0.1:7401"},
		{"127.0.0.1:0", "", DefaultAddr},
		{"127.0.0.1:7401", "10.0.0.1:9", "10.0.0.1:9"},
	} {
		if got := newEnv(t, tc.listen, Opts{Addr: tc.flag}).Addr; got != tc.want {
			t.Errorf("listen %s, --addr %q: Addr = %s, want %s", tc.listen, tc.flag, got, tc.want)
		}
	}
}

func TestDevice(t *testing.T) {
	for _, tc := range []struct {
		name    string
		o       Opts
		counter string
		roles   []wire.Role
		want    string // id/role/counter, or the error
	}{
		{"first of the role", Opts{}, "", []wire.Role{wire.RoleKiosk, wire.RoleConsole}, "kiosk-1/kiosk/"},
		{"the counter's keypad", Opts{}, "2", []wire.Role{wire.RoleKeypad, wire.RoleConsole}, "keypad-2/keypad/2"},
		{"a console for a counter without keypad", Opts{}, "9", []wire.Role{wire.RoleKeypad, wire.RoleConsole}, "console-1/console/9"},
		{"named", Opts{Device: "keypad-1"}, "", []wire.Role{wire.RoleKiosk}, "keypad-1/keypad/1"},
		{"named with a secret takes the configured role", Opts{Device: "console-1", Secret: "x"}, "", []wire.Role{wire.RoleKiosk}, "console-1/console/"},
		{"unknown", Opts{Device: "nobody"}, "", []wire.Role{wire.RoleKiosk}, `sim: device "nobody" is not in the configuration`},
		{"no such role", Opts{}, "", []wire.Role{wire.RoleDisplay}, "sim: the configuration has no display device"},
		{"another site", Opts{Site: "annex"}, "", []wire.Role{wire.RoleKiosk}, `sim: unknown site "annex": the configuration has clinic`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := newEnv(t, "127.0.0.1:0", tc.o).Device(tc.counter, tc.roles...)
			got := fmt.Sprintf("%s/%s/%s", d.ID, d.Role, d.Counter)
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("Device(%q, %v) = %s, want %s", tc.counter, tc.roles, got, tc.want)
			}
		})
	}
}

func TestDeviceWithoutConfig(t *testing.T) {
	t.Chdir(t.TempDir()) // no DefaultConfig here
	e, err := New(Opts{Device: "k", Secret: "s", Site: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := e.Device("", wire.RoleKiosk); err != nil || d.ID != "k" || string(d.Secret) != "s" || d.Site != "x" || d.Role != wire.RoleKiosk {
		t.Errorf("Device = %+v, %v", d, err)
	}
	if ds := e.Devices(wire.RoleDisplay); len(ds) != 1 || ds[0].Role != wire.RoleDisplay {
		t.Errorf("Devices = %+v", ds)
	}
	e, err = New(Opts{Device: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Device("", wire.RoleKiosk); err == nil || err.Error() != "sim: no device: give --config, or --device and --secret" {
		t.Errorf("without a secret: %v", err)
	}
}

func TestDevices(t *testing.T) {
	e := newEnv(t, "127.0.0.1:0", Opts{})
	if ds := e.Devices(wire.RoleKeypad); len(ds) != 2 || ds[0].Counter != "1" || ds[1].ID != "keypad-2" || ds[1].Site != "clinic" {
		t.Errorf("Devices(keypad) = %+v", ds)
	}
	if ds := e.Devices(wire.RoleDisplay); len(ds) != 0 {
		t.Errorf("Devices(display) = %+v", ds)
	}
}

func TestExplain(t *testing.T) {
	e := newEnv(t, "127.0.0.1:7401", Opts{})
	d := Device{ID: "kiosk-1", Role: wire.RoleKiosk}
	other := errors.New("other")
	for _, tc := range []struct {
		err  error
		want string
	}{
		{wire.ErrAuthFailed, `the daemon at 127.0.0.1:7401 refused device "kiosk-1" (role kiosk): check the device id, its role and its secret`},
		{wire.ErrServiceFull, "refused: service full today (code 0x21)"},
		{fmt.Errorf("dial: %w", client.ErrUnreachable), "cannot reach the daemon at 127.0.0.1:7401: is `nowserving serve` running?"},
		{fmt.Errorf("x: %w", client.ErrTimeout), "the daemon at 127.0.0.1:7401 did not answer in time"},
		{other, "other"},
	} {
		if got := e.Explain(tc.err, d).Error(); got != tc.want {
			t.Errorf("Explain(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	if err := e.Explain(fmt.Errorf("dial: %w", client.ErrUnreachable), d); !errors.Is(err, client.ErrUnreachable) {
		t.Errorf("an unreachable daemon's error %v does not unwrap to client.ErrUnreachable", err)
	}
	if got := e.Reason(wire.ErrServiceFull, d); got != "service full today" {
		t.Errorf("Reason = %q", got)
	}
	if e.Explain(nil, d) != nil || e.Reason(nil, d) != "" {
		t.Error("no error should explain as none")
	}
}
