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

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/devices/voice"
	"github.com/nowserving/nowserving/queue"
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
	cfg, err := config.Load(config.Opts{File: file, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store.DSN = filepath.Join(dir, "q.db")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	st, err := openStore(ctx, cfg.Store, log, true)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng, err := queue.New(queue.Opts{Store: st, Sites: sites(cfg), Committers: 1, Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(ctx)

	d, err := buildDevices(cfg, eng, log)
	if err != nil {
		t.Fatalf("build devices: %v", err)
	}
	errc := make(chan error, 1)
	go func() { errc <- d.Run(ctx) }()

	r := queue.Request{Site: "hospital", Device: "kiosk-1"}
	if _, err := eng.Issue(ctx, queue.IssueRequest{Request: r, Service: "A"}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.CallNext(ctx, queue.CounterRequest{Request: queue.Request{Site: "hospital", Device: "keypad-1"}, Counter: "1"}); err != nil {
		t.Fatal(err)
	}
	waitFile := func(path string, want []byte) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			b, _ := os.ReadFile(path)
			if bytes.Contains(b, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never held % x; got % x", path, want, b)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// 01 addr "A001" " 1" 07: the template board of counter 1.
	waitFile("out/led-counter-1.bin", []byte("\x01\x01A001 1\x07"))
	waitFile("out/led-hall.bin", []byte("A001 -> 1"))

	var wavs []string
	deadline := time.Now().Add(20 * time.Second)
	for len(wavs) == 0 {
		wavs, _ = filepath.Glob("out/voice/[0-9]*.wav")
		if time.Now().After(deadline) {
			t.Fatal("no announcement in out/voice")
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, err := os.ReadFile(wavs[0])
	if err != nil {
		t.Fatal(err)
	}
	if c, err := voice.DecodeWAV(b); err != nil || c.Duration() < 500*time.Millisecond {
		t.Errorf("announcement %s: %v, %v", wavs[0], c, err)
	}

	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := d.Shutdown(sctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
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
	if src := deviceSources(d); len(src.Boards()) != 6 || len(src.Zones()) != 2 {
		t.Errorf("metrics sources: %d boards, %d zones", len(src.Boards()), len(src.Zones()))
	}
}
