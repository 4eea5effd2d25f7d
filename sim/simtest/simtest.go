// Package simtest runs a daemon on loopback for the tests of the
// simulators and the load generator: a SQLite store, an engine and the
// protocol server, with a configuration file naming its devices.
package simtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlite"
)

// Daemon is a daemon on loopback, stopped when the test ends.
type Daemon struct {
	Addr   string        // its protocol address
	Config string        // a configuration file with its site and devices, listening on Addr
	Engine *queue.Engine // its engine
}

// devices of the site "clinic": two kiosks, keypads of counters 1 and 2, a
// display and a console; each secret is "<id>-secret-0123456789".
var devices = []struct {
	id      string
	role    wire.Role
	counter string
}{
	{"kiosk-1", wire.RoleKiosk, ""}, {"kiosk-2", wire.RoleKiosk, ""},
	{"keypad-1", wire.RoleKeypad, "1"}, {"keypad-2", wire.RoleKeypad, "2"},
	{"display-1", wire.RoleDisplay, ""}, {"console-1", wire.RoleConsole, ""},
}

// site is the configuration of the site, as the engine has it.
const site = `
sites:
  - id: clinic
    timezone: UTC
    classes: { priority: 10, normal: 20 }
    services:
      - { code: A, name: { en: General }, prefix: A, width: 3 }
      - { code: F, name: { en: Flu shots }, prefix: F, width: 2, daily_cap: 1 }
    counters:
      - { id: "1", services: [A, F] }
      - { id: "2", services: [A] }
`

// Start runs the daemon of site "clinic": services A and F (at most one
// ticket a day), counters 1 (A, F) and 2 (A), classes normal and the
// site's own priority, and the devices above.
func Start(t testing.TB) *Daemon {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "q.db"), sqlite.Opts{})
	if err != nil {
		t.Fatalf("simtest: open store: %v", err)
	}
	cs := func(codes ...string) []queue.CounterService {
		var out []queue.CounterService
		for _, c := range codes {
			out = append(out, queue.CounterService{Service: c, Weight: 1})
		}
		return out
	}
	s := queue.Site{
		ID: "clinic", Location: time.UTC, Ranks: map[queue.Class]int{"priority": 10, queue.ClassNormal: 20},
		Services: []queue.Service{
			{Code: "A", Prefix: "A", Width: 3, Names: map[string]string{"en": "General"}},
			{Code: "F", Prefix: "F", Width: 2, DailyCap: 1, Names: map[string]string{"en": "Flu shots"}},
		},
		Counters: []queue.Counter{{ID: "1", Services: cs("A", "F")}, {ID: "2", Services: cs("A")}},
	}
	eng, err := queue.New(queue.Opts{Store: st, Sites: []queue.Site{s}, Committers: 1})
	if err != nil {
		t.Fatalf("simtest: new engine: %v", err)
	}
	var ds []protocol.Device
	var yaml strings.Builder
	yaml.WriteString("devices:\n")
	for _, d := range devices {
		secret := d.id + "-secret-0123456789"
		ds = append(ds, protocol.Device{ID: d.id, Role: d.role, Site: "clinic", Counter: d.counter, Secret: []byte(secret)})
		fmt.Fprintf(&yaml, "  - { id: %s, role: %s, site: clinic, counter: %q, secret: %q }\n", d.id, d.role, d.counter, secret)
	}
	srv, err := protocol.New(protocol.Opts{Engine: eng, Devices: ds, Logger: slog.New(slog.DiscardHandler), RateLimit: -1})
	if err != nil {
		t.Fatalf("simtest: new server: %v", err)
	}
	ln := conntest.Listener(t)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	d := &Daemon{Addr: ln.Addr().String(), Config: filepath.Join(dir, "site.yaml"), Engine: eng}
	head := fmt.Sprintf("store: { driver: sqlite, dsn: %q }\nlisten: { protocol: %q, http: \"\" }\n", filepath.Join(dir, "q.db"), d.Addr)
	if err := os.WriteFile(d.Config, []byte(head+site+yaml.String()), 0o600); err != nil {
		t.Fatalf("simtest: write config: %v", err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			t.Errorf("simtest: shutdown: %v", err)
		}
		if err := <-served; !errors.Is(err, protocol.ErrServerClosed) {
			t.Errorf("simtest: serve: %v", err)
		}
		if err := eng.Close(sctx); err != nil {
			t.Errorf("simtest: close engine: %v", err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("simtest: close store: %v", err)
		}
	})
	return d
}
