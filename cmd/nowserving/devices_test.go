package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nowserving/nowserving/daemon"
	"github.com/nowserving/nowserving/devices"
	"github.com/nowserving/nowserving/devices/voice"
	"github.com/nowserving/nowserving/internal/testkit/parttest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestBuildDevicesDemo runs the demo hospital's devices as make run does,
// in a scratch folder: a call reaches the counter's LED file, the hall
// board file and a WAV file in out/voice.
func TestBuildDevicesDemo(t *testing.T) {
	file, err := filepath.Abs("../../testdata/hospital.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	eng, d := devicesOf(t, file, dir)
	ctx := context.Background()
	errc := parttest.Go(ctx, d)

	r := queue.Request{Site: "hospital", Device: "kiosk-1"}
	if _, err := eng.Issue(ctx, queue.IssueRequest{Request: r, Service: "A"}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.CallNext(ctx, queue.CounterRequest{Request: queue.Request{Site: "hospital", Device: "keypad-1"}, Counter: "1"}); err != nil {
		t.Fatal(err)
	}
	waitFile := func(path string, want []byte) {
		t.Helper()
		var b []byte
		if !poll.Within(10*time.Second, 10*time.Millisecond, func() bool { b, _ = os.ReadFile(path); return bytes.Contains(b, want) }) {
			t.Fatalf("%s never held % x; got % x", path, want, b)
		}
	}
	// 01 addr "A001" " 1" 07: the template board of counter 1.
	waitFile("out/led-counter-1.bin", []byte("\x01\x01A001 1\x07"))
	waitFile("out/led-hall.bin", []byte("A001 -> 1"))

	var wavs []string
	if !poll.Within(20*time.Second, 20*time.Millisecond, func() bool { wavs, _ = filepath.Glob("out/voice/[0-9]*.wav"); return len(wavs) > 0 }) {
		t.Fatal("no announcement in out/voice")
	}
	b, err := os.ReadFile(wavs[0])
	if err != nil {
		t.Fatal(err)
	}
	if c, err := voice.DecodeWAV(b); err != nil || c.Duration() < 500*time.Millisecond {
		t.Errorf("announcement %s: %v, %v", wavs[0], c, err)
	}

	if !parttest.Stop(t, d, errc) {
		t.FailNow()
	}
	// Shutdown blanks the board: the file ends with a blank frame.
	b, _ = os.ReadFile("out/led-counter-1.bin")
	if !bytes.HasSuffix(b, []byte("\x01\x01      \x07")) {
		t.Errorf("counter 1 board not blanked at shutdown: % x", b)
	}
	st1 := d.Status()
	if len(st1.Boards) != 6 || len(st1.Zones) != 2 {
		t.Errorf("status %+v, want 6 boards and 2 zones", st1)
	}
	if src := daemon.DeviceSources(d.Status); len(src.Boards()) != 6 || len(src.Zones()) != 2 {
		t.Errorf("metrics sources: %d boards, %d zones", len(src.Boards()), len(src.Zones()))
	}
}

const hardwareYAML = `
store: { driver: sqlite, dsn: q.db }
sites:
  - id: s
    timezone: UTC
    languages: [zh, en]
    services: [ { code: A, name: { en: A, zh: A } } ]
    counters: [ { id: "1", services: [A] }, { id: "2", services: [A] } ]
devices:
  - { id: k1, role: kiosk, site: s, secret: "0123456789abcdef", printer: p1 }
printers:
  - { id: p1, addr: "127.0.0.1:1", paper_mm: 58, qr: raster }
led:
  ports:
    - { name: "tcp://127.0.0.1:1", driver: { kind: modbus, start: 65530, chars: 6 } }
    - { name: "/dev/null-onbon", driver: { kind: onbon, width: 64, height: 16 } }
    - { name: "/dev/null-alpha", driver: { kind: alpha, type_code: "Z" } }
    - { name: "/dev/null-tmpl", driver: { kind: template, header: "01", trailer: "07", addr_format: byte, checksum: sum8 } }
  boards:
    - { port: "tcp://127.0.0.1:1", addr: 1, site: s, counter: "1" }
    - { port: "/dev/null-onbon", addr: 2, site: s, hall: true }
voice:
  zones:
    - { name: hall, site: s, engine: command, commands: { zh: "true", en: "true" }, output: "true {file}" }
keypads:
  - { port: "/dev/null-keys", site: s, addrs: { "3": "2" } }
`

// TestBuildDevicesKinds builds every driver kind, a command voice zone, a
// printer and a keypad bus from config. (A register map the Modbus driver
// refuses no longer gets this far: config.Load asks the driver.)
func TestBuildDevicesKinds(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "hw.yaml")
	if err := os.WriteFile(file, []byte(hardwareYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	_, d := devicesOf(t, file, dir)
	s := d.Status()
	if len(s.Boards) != 2 || len(s.Printers) != 1 || len(s.Zones) != 1 || len(s.Keypads) != 1 || !d.HasPrinter("k1") {
		t.Errorf("status %+v", s)
	}
}

// devicesOf loads the configuration file with its store in dir/q.db and
// builds its devices on an engine over that store; the engine and the
// store close when the test ends.
func devicesOf(t *testing.T, file, dir string) (*queue.Engine, *devices.Dispatcher) {
	t.Helper()
	cfg := loadTestConfig(t, file, nil)
	cfg.Store.DSN = filepath.Join(dir, "q.db")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := openStore(context.Background(), cfg.Store, log, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	eng := storetest.StartEngine(t, queue.Opts{Store: st, Sites: sites(cfg), Committers: 1, Clock: time.Now})
	d, err := buildDevices(cfg, eng, log)
	if err != nil {
		t.Fatalf("build devices: %v", err)
	}
	return eng, d
}
