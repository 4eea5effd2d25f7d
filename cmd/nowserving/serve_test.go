package main

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/internal/testkit/logtest"
	"github.com/nowserving/nowserving/protocol/wire"
)

// clinicYAML is the site most daemon tests run: clinic, one service A at
// counter "1", its SQLite file the first verb, the protocol on a free port
// and no HTTP. Tests append their devices.
const clinicYAML = `
store: { driver: sqlite, dsn: %q }
listen: { protocol: "127.0.0.1:0", http: "" }
sites:
  - id: clinic
    timezone: UTC
    services:
      - { code: A, name: { en: General } }
    counters:
      - { id: "1", services: [A] }
`

const serveYAML = clinicYAML + `
devices:
  - { id: kiosk-1, role: kiosk, site: clinic, secret: "test-kiosk-1-secret-0123" }
`

func serveConfig(t *testing.T) *config.Config { return testConfig(t, serveYAML, nil) }

// takeTicket authenticates as kiosk-1 and takes a ticket of service A with
// request id 3 and the given boot nonce.
func takeTicket(t *testing.T, addr string, boot uint64) *wire.Ticket {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	send := func(id uint32, m wire.Message) {
		b, err := wire.EncodeMessage(nil, id, 0, m)
		if err == nil {
			_, err = c.Write(b)
		}
		if err != nil {
			t.Fatalf("send %s: %v", m.Type(), err)
		}
	}
	recv := func() wire.Message {
		for {
			f, err := wire.ReadFrame(br, 0)
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			m, err := wire.DecodeMessage(f)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if _, hb := m.(*wire.Heartbeat); !hb {
				return m
			}
		}
	}
	send(1, &wire.Hello{DeviceID: "kiosk-1", Role: wire.RoleKiosk, ProtocolVersion: 1, BootNonce: boot})
	ch, ok := recv().(*wire.Challenge)
	if !ok {
		t.Fatal("no challenge")
	}
	send(2, &wire.Auth{MAC: wire.ComputeMAC([]byte("test-kiosk-1-secret-0123"), ch.Nonce, "kiosk-1")})
	if _, ok := recv().(*wire.Welcome); !ok {
		t.Fatal("not welcomed")
	}
	send(3, &wire.TakeTicket{Service: "A", WantESCPOS: true})
	m := recv()
	tk, ok := m.(*wire.Ticket)
	if !ok {
		t.Fatalf("take ticket: %+v", m)
	}
	return tk
}

func TestServe(t *testing.T) {
	cfg := serveConfig(t)
	var logs logtest.Buffer
	log := logs.Logger()
	start := func() (string, context.CancelFunc, chan error) {
		ctx, cancel := context.WithCancel(context.Background())
		d, err := newDaemon(ctx, cfg, log)
		if err != nil {
			t.Fatalf("new daemon: %v", err)
		}
		done := make(chan error, 1)
		go func() { done <- d.run(ctx) }()
		return d.protocolAddr.String(), cancel, done
	}
	addr, stop, done := start()
	if got := listenAddr(logs.String()); got != addr {
		t.Errorf("log announces %q, want %q; log:\n%s", got, addr, logs.String())
	}
	first := takeTicket(t, addr, 42)
	if first.Number != "A001" || len(first.ESCPOS) == 0 {
		t.Errorf("ticket %s with %d bytes of ESC/POS", first.Number, len(first.ESCPOS))
	}
	stop() // as SIGINT does
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, want := range []string{"shutting down", "stopped"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q", want)
		}
	}
	// Restarted on the same database: the retry gets the same ticket.
	addr, stop, done = start()
	if again := takeTicket(t, addr, 42); again.ID != first.ID {
		t.Errorf("after restart: %s, want %s", again.Number, first.Number)
	}
	if next := takeTicket(t, addr, 43); next.Number != "A002" {
		t.Errorf("new boot: %s, want A002", next.Number)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
}

func TestServeBadConfig(t *testing.T) {
	cfg := serveConfig(t)
	cfg.Listen.Protocol = "256.0.0.1:bad"
	if _, err := newDaemon(context.Background(), cfg, slog.New(slog.DiscardHandler)); err == nil {
		t.Fatal("newDaemon accepted a bad listen address")
	}
	// The store was closed on the way out: it opens again.
	cfg.Listen.Protocol = "127.0.0.1:0"
	d, err := newDaemon(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if err := d.close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestListenErrorSuggestsFlag: a port another process holds (the demo's
// 7400 under bank.yaml) is refused with the flag that picks another.
func TestListenErrorSuggestsFlag(t *testing.T) {
	ln := conntest.Listener(t)
	_, err := net.Listen("tcp", ln.Addr().String())
	if err == nil {
		t.Fatal("second listen on one port succeeded")
	}
	got := listenError(ln.Addr().String(), "listen.protocol", err).Error()
	for _, want := range []string{"--listen-protocol HOST:PORT", "NOWSERVING_LISTEN_PROTOCOL", "port 0"} {
		if !strings.Contains(got, want) {
			t.Errorf("error %q does not say %q", got, want)
		}
	}
}

// TestQuietStart: at log level warn (rush.yaml) serve still says once that
// it serves and where; at info the "listening" lines do.
func TestQuietStart(t *testing.T) {
	d := &server{protocolAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7401}}
	var b strings.Builder
	quietStart(&b, config.Log{Level: "warn"}, d)
	if want := "nowserving: serving, protocol 127.0.0.1:7401, http off (log.level warn: only warnings and errors follow)\n"; b.String() != want {
		t.Errorf("at warn: %q, want %q", b.String(), want)
	}
	// With the appointments API on a listener of its own, it says where.
	b.Reset()
	d.httpAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7482}
	d.appointmentsAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7483}
	quietStart(&b, config.Log{Level: "warn"}, d)
	if want := "nowserving: serving, protocol 127.0.0.1:7401, http 127.0.0.1:7482, appointments 127.0.0.1:7483 (log.level warn: only warnings and errors follow)\n"; b.String() != want {
		t.Errorf("at warn, with listen.appointments: %q, want %q", b.String(), want)
	}
	b.Reset()
	quietStart(&b, config.Log{Level: "info"}, d)
	if b.Len() != 0 {
		t.Errorf("at info: %q, want nothing", b.String())
	}
}
