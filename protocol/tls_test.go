package protocol_test

import (
	"crypto/tls"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
)

func TestTLS(t *testing.T) {
	cert, pool := protocoltest.SelfSigned(t)
	en := unstarted(t, func(o *protocol.Opts) {
		o.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	})
	en.tlsClient = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	en.Start()
	t.Cleanup(en.Stop)
	kiosk, _ := en.login("kiosk-1", 1)
	if tk := kiosk.ticket(&wire.TakeTicket{Service: "A"}); tk.Number != "A001" {
		t.Errorf("ticket over TLS: %+v", tk)
	}
	// A plain-TCP peer on the TLS port does not get a session.
	en.tlsClient = nil
	plain := en.dial()
	plain.write(1, 0, &wire.Hello{DeviceID: "kiosk-1", Role: wire.RoleKiosk, BootNonce: 1})
	if _, m, err := plain.read(); err == nil {
		if _, ok := m.(*wire.Challenge); ok {
			t.Error("plain TCP peer was challenged on the TLS port")
		}
	}
}

// countMetrics counts what the server reports.
type countMetrics struct {
	mu       sync.Mutex
	opened   map[wire.Role]int
	closed   map[string]int
	auth     map[string]int
	requests map[wire.MsgType]map[uint16]int
	refused  int
	evicted  int
}

func newCountMetrics() *countMetrics {
	return &countMetrics{opened: map[wire.Role]int{}, closed: map[string]int{}, auth: map[string]int{},
		requests: map[wire.MsgType]map[uint16]int{}}
}

func (m *countMetrics) SessionOpened(r wire.Role) { m.mu.Lock(); m.opened[r]++; m.mu.Unlock() }
func (m *countMetrics) SessionClosed(_ wire.Role, reason string) {
	m.mu.Lock()
	m.closed[reason]++
	m.mu.Unlock()
}
func (m *countMetrics) AuthFailed(reason string) { m.mu.Lock(); m.auth[reason]++; m.mu.Unlock() }
func (m *countMetrics) Request(t wire.MsgType, code uint16, _ time.Duration) {
	m.mu.Lock()
	if m.requests[t] == nil {
		m.requests[t] = map[uint16]int{}
	}
	m.requests[t][code]++
	m.mu.Unlock()
}
func (m *countMetrics) ConnRefused() { m.mu.Lock(); m.refused++; m.mu.Unlock() }
func (m *countMetrics) ConnEvicted() { m.mu.Lock(); m.evicted++; m.mu.Unlock() }

func TestMetrics(t *testing.T) {
	cm := newCountMetrics()
	en := newEnv(t, func(o *protocol.Opts) { o.Metrics = cm; o.MaxConns = 3 })
	kiosk, _ := en.login("kiosk-1", 1)
	kiosk.ticket(&wire.TakeTicket{Service: "A"})
	kiosk.wantError(&wire.TakeTicket{Service: "Z"}, wire.ErrUnknownService.Code)
	kp, _ := en.login("keypad-1", 1)
	kp.ticket(&wire.CallNext{})
	bad := en.dial()
	if _, err := bad.auth("kiosk-1", wire.RoleKiosk, 1, []byte("wrong")); err == nil {
		t.Fatal("wrong secret accepted")
	}
	bad.expectClose()
	en.waitConns(2)
	en.login("kiosk-2", 1)
	refused := en.dial() // the fourth connection
	refused.expectClose()
	kiosk.c.Close()
	en.Stop()

	cm.mu.Lock()
	defer cm.mu.Unlock()
	if cm.opened[wire.RoleKiosk] != 2 || cm.opened[wire.RoleKeypad] != 1 {
		t.Errorf("opened %v", cm.opened)
	}
	if n := cm.closed["eof"] + cm.closed["shutdown"]; n != 3 {
		t.Errorf("closed %v, want 3 sessions", cm.closed)
	}
	if cm.auth["wrong mac"] != 1 {
		t.Errorf("auth failures %v", cm.auth)
	}
	if got := cm.requests[wire.TypeTakeTicket]; got[0] != 1 || got[wire.ErrUnknownService.Code] != 1 {
		t.Errorf("take ticket outcomes %v", got)
	}
	if got := cm.requests[wire.TypeCallNext]; got[0] != 1 {
		t.Errorf("call next outcomes %v", got)
	}
	if cm.refused != 1 {
		t.Errorf("refused %d, want 1", cm.refused)
	}
}
