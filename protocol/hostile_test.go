package protocol_test

import (
	"bufio"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/logtest"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/wire"
)

// dialFrom dials the daemon from the loopback address ip (127.0.0.0/8 is
// all loopback on Linux), so a test can play several hosts.
func (en *env) dialFrom(ip string) *client {
	en.t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err := d.Dial("tcp", en.Addr)
	if err != nil {
		en.t.Fatalf("dial from %s: %v", ip, err)
	}
	en.t.Cleanup(func() { c.Close() })
	return &client{t: en.t, c: c, br: bufio.NewReader(c)}
}

// TestWrongMACBacksOff: a loop of wrong MACs from one address is refused
// at its 6th HELLO after 5 failures (ERROR 0x30 with RetryAfterMS, no CHALLENGE);
// a loop on one device id from many addresses has its failures answered
// only after a pause; the real device, from its own address and with the
// right MAC, is welcomed at once all along (PROTOCOL.md section 8).
func TestWrongMACBacksOff(t *testing.T) {
	en := newEnv(t, nil)
	wrong := []byte("not the secret")
	for i := 0; i < 5; i++ {
		if _, err := en.dialFrom("127.0.0.2").auth("kiosk-1", wire.RoleKiosk, 1, wrong); !errors.Is(err, wire.ErrAuthFailed) {
			t.Fatalf("try %d: %v, want 0x10", i, err)
		}
	}
	// The 6th from that address is refused before any MAC is computed.
	cl := en.dialFrom("127.0.0.2")
	cl.write(1, 0, &wire.Hello{DeviceID: "kiosk-1", Role: wire.RoleKiosk, ProtocolVersion: 1, BootNonce: 1})
	f, m, err := cl.read()
	e, ok := m.(*wire.ErrorMsg)
	if err != nil || !ok || e.Code != wire.ErrRateLimited.Code || e.RetryAfterMS == 0 || e.RequestID != 1 || f.Flags&wire.FlagResponse == 0 {
		t.Fatalf("HELLO from a failing address: %v %+v, want ERROR 0x30 answering it with RetryAfterMS", err, m)
	}
	if codes := cl.expectClose(); len(codes) != 0 {
		t.Errorf("errors after the refusal: %v", codes)
	}
	// The real device, from another address, gets in at once.
	start := time.Now()
	if _, err := en.dialFrom("127.0.0.1").auth("kiosk-1", wire.RoleKiosk, 1, secretOf("kiosk-1")); err != nil {
		t.Fatalf("real device locked out: %v", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("real device took %s to log in", took)
	}
	// Its success cleared the id: five more failures from fresh addresses
	// are answered at once, the sixth only after a pause.
	var took time.Duration
	for i := 0; i < 6; i++ {
		start := time.Now()
		if _, err := en.dialFrom("127.0.1."+string(rune('1'+i))).auth("kiosk-1", wire.RoleKiosk, 1, wrong); !errors.Is(err, wire.ErrAuthFailed) {
			t.Fatalf("id try %d: %v, want 0x10", i, err)
		}
		took = time.Since(start)
		if i < 5 && took > 400*time.Millisecond {
			t.Errorf("failure %d held back %s before the id backs off", i, took)
		}
	}
	if took < 400*time.Millisecond {
		t.Errorf("sixth failure on one id answered after %s, want a pause of about 500 ms", took)
	}
	if _, err := en.dialFrom("127.0.0.1").auth("kiosk-1", wire.RoleKiosk, 1, secretOf("kiosk-1")); err != nil {
		t.Fatalf("real device locked out by the id's back-off: %v", err)
	}
}

// TestRefusalsSummarised: a burst of refused handshakes gives one log line
// at once (the rest are counted for a summary), while Stats and the metrics
// count every one.
func TestRefusalsSummarised(t *testing.T) {
	var buf logtest.Buffer
	m := newCountMetrics()
	en := newEnv(t, func(o *protocol.Opts) { o.Logger = buf.Logger(); o.Metrics = m })
	const n = 40
	for i := 0; i < n; i++ {
		cl := en.dialFrom("127.0.2." + string(rune('1'+i%8)))
		cl.raw([]byte("GET / HTTP/1.0\r\n\r\n"))
		cl.expectClose()
	}
	if got := en.Server.Stats().AuthFailures; got != n {
		t.Errorf("Stats().AuthFailures = %d, want %d", got, n)
	}
	m.mu.Lock()
	counted := 0
	for _, c := range m.auth {
		counted += c
	}
	m.mu.Unlock()
	if counted != n {
		t.Errorf("metrics count %d refused handshakes, want %d", counted, n)
	}
	if got := strings.Count(buf.String(), "handshake refused"); got != 1 {
		t.Errorf("%d lines of refused handshakes for %d refusals, want 1 (then a summary):\n%s", got, n, buf.String())
	}
}
