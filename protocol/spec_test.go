package protocol_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// The behaviours PROTOCOL.md writes down after issue 14, one test each.

// TestHelloVersionAndRepeats: HELLO with ProtocolVersion 0 gets ERROR
// 0x02 (answering it) and a close; 2 or more is accepted and spoken as 1; a
// second HELLO in a session gets 0x03 and the session goes on; one device
// id may hold several sessions at once.
func TestHelloVersionAndRepeats(t *testing.T) {
	en := newEnv(t, nil)
	cl := en.dial()
	cl.write(1, 0, &wire.Hello{DeviceID: "kiosk-1", Role: wire.RoleKiosk, BootNonce: 1})
	f, m, err := cl.read()
	if e, ok := m.(*wire.ErrorMsg); err != nil || !ok || e.Code != wire.ErrUnsupportedVersion.Code || f.RequestID != 1 || f.Flags&wire.FlagResponse == 0 {
		t.Fatalf("HELLO version 0: %v %+v, want ERROR 0x02 answering request 1", err, m)
	}
	if codes := cl.expectClose(); len(codes) != 0 {
		t.Errorf("errors after 0x02: %v", codes)
	}
	v2 := en.dial()
	v2.write(1, 0, &wire.Hello{DeviceID: "kiosk-1", Role: wire.RoleKiosk, ProtocolVersion: 2, BootNonce: 1})
	if _, m, err := v2.read(); err != nil {
		t.Fatal(err)
	} else if _, ok := m.(*wire.Challenge); !ok {
		t.Fatalf("HELLO version 2: %+v, want CHALLENGE", m)
	}
	a, _ := en.login("kiosk-1", 1)
	b, _ := en.login("kiosk-1", 2) // the same device id, a second session
	a.wantError(&wire.Hello{DeviceID: "kiosk-1", Role: wire.RoleKiosk, ProtocolVersion: 1}, wire.ErrUnsupportedType.Code)
	for _, c := range []*client{a, b} {
		c.ticket(&wire.TakeTicket{Service: "A"})
	}
}

// TestErrorRequestIDs: an ERROR that answers a request carries its id and
// RESPONSE, also when the connection closes after it; one nobody asked for
// (a frame that cannot be trusted, a time-out, a shutdown) carries 0.
func TestErrorRequestIDs(t *testing.T) {
	en := newEnv(t, func(o *protocol.Opts) { o.HandshakeTimeout = 300e6 })
	tests := []struct {
		name string
		send func(*client)
		code uint16
		id   uint32
	}{
		{"no hello", func(c *client) { c.raw(frame(magic, 1, byte(wire.TypeStatus), 7, 0, nil, 0)) }, wire.ErrNotAuthenticated.Code, 7},
		// A HEARTBEAT is no request: the 0x11 carries its id, 0, unanswered.
		{"heartbeat first", func(c *client) { c.write(0, 0, &wire.Heartbeat{}) }, wire.ErrNotAuthenticated.Code, 0},
		{"bad hello", func(c *client) { c.write(5, 0, &wire.Hello{Role: wire.RoleKiosk, ProtocolVersion: 1}) }, wire.ErrBadPayload.Code, 5},
		{"wrong mac", func(c *client) {
			c.write(1, 0, &wire.Hello{DeviceID: "kiosk-1", Role: wire.RoleKiosk, ProtocolVersion: 1})
			c.read()
			c.write(2, 0, &wire.Auth{MAC: make([]byte, wire.NonceSize)})
		}, wire.ErrAuthFailed.Code, 2},
		{"bad crc", func(c *client) { c.raw(frame(magic, 1, byte(wire.TypeHello), 1, 0, nil, 1)) }, wire.ErrBadFrame.Code, 0},
		{"bad version", func(c *client) { c.raw(frame(magic, 9, byte(wire.TypeHello), 1, 0, nil, 0)) }, wire.ErrUnsupportedVersion.Code, 0},
		{"silent", func(*client) {}, wire.ErrTimeout.Code, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := en.dial()
			cl.t = t
			tt.send(cl)
			f, m, err := cl.read()
			e, ok := m.(*wire.ErrorMsg)
			if err != nil || !ok || e.Code != tt.code {
				t.Fatalf("got %v %+v, want ERROR 0x%02x", err, m, tt.code)
			}
			answered := f.Flags&wire.FlagResponse != 0
			if f.RequestID != tt.id || e.RequestID != tt.id || answered != (tt.id != 0) {
				t.Errorf("ERROR 0x%02x: header id %d, field %d, RESPONSE %v; want id %d", e.Code, f.RequestID, e.RequestID, answered, tt.id)
			}
			cl.expectClose()
		})
	}
}

// TestRequestIDZero: a request that changes something, sent with id 0 and
// no IdemKey, is refused (ERROR 0x04, no ticket issued): each would derive
// the boot's one id-0 key, and a second TAKE_TICKET would get the first
// one's ticket. With an IdemKey, id 0 issues as any id does.
func TestRequestIDZero(t *testing.T) {
	en := newEnv(t, nil)
	kiosk, _ := en.login("kiosk-1", 1)
	for range 2 {
		kiosk.write(0, 0, &wire.TakeTicket{Service: "A"})
		_, m, err := kiosk.read()
		e, ok := m.(*wire.ErrorMsg)
		if err != nil || !ok || e.Code != wire.ErrBadPayload.Code || !strings.Contains(e.Msg, "request id 0") {
			t.Fatalf("TAKE_TICKET id 0: got %v %+v, want ERROR 0x04 naming request id 0", err, m)
		}
	}
	if tk := kiosk.ticket(&wire.TakeTicket{Service: "A"}); tk.Number != "A001" {
		t.Errorf("after two refused id-0 requests the next ticket is %s, want A001 (none issued)", tk.Number)
	}
	kiosk.write(0, 0, &wire.TakeTicket{Service: "A", IdemKey: "kiosk-1-zero"})
	if _, m, err := kiosk.read(); err != nil {
		t.Fatal(err)
	} else if tk, ok := m.(*wire.Ticket); !ok || tk.Number != "A002" {
		t.Errorf("TAKE_TICKET id 0 with IdemKey: got %+v, want ticket A002", m)
	}
}

// TestErrorMessages: every ERROR a device can provoke has a short message
// that starts with its code's table message and carries nothing of the
// daemon's insides (Go error chains, CRCs, addresses, driver text).
func TestErrorMessages(t *testing.T) {
	en := newEnv(t, nil)
	kiosk, _ := en.login("kiosk-1", 1)
	kp, _ := en.login("keypad-1", 1)
	con, _ := en.login("console-1", 1)
	kiosk.ticket(&wire.TakeTicket{Service: "F"}) // F's cap is 1
	sends := []struct {
		c *client
		m wire.Message
	}{
		{kiosk, &wire.TakeTicket{Service: "Z"}},
		{kiosk, &wire.TakeTicket{Service: "F"}},
		{kiosk, &wire.TakeTicket{Service: "A", Site: "nowhere"}},
		{kiosk, &wire.TakeTicket{Service: "A", Class: 99}},
		{kiosk, &wire.CallNext{}},
		{kp, &wire.CallNext{Counter: 2}},
		{kp, &wire.Recall{}},
		{kp, &wire.CallNumber{Number: "A999"}},
		{con, &wire.CallNext{}},
		{con, &wire.Reenter{Number: "F01"}},
		{con, &wire.Status{Number: "B123"}},
		{con, &wire.Reprint{Number: "F01"}},
	}
	var got []string
	for _, s := range sends {
		a := s.c.do(s.m)
		e, ok := a.(*wire.ErrorMsg)
		if !ok {
			t.Fatalf("%s %+v: %T, want ERROR", s.m.Type(), s.m, a)
		}
		got = append(got, fmt.Sprintf("0x%02x %s", e.Code, e.Msg))
	}
	// Frame errors, on connections of their own.
	for _, b := range [][]byte{
		frame(magic, 1, byte(wire.TypeHello), 1, 0, nil, 0x55),
		frame([2]byte{'X', 'Y'}, 1, 1, 1, 0, nil, 0),
		frame(magic, 1, byte(wire.TypeHello), 1, 5, []byte{1, 3, 0, 9, 'k'}, 0),
	} {
		cl := en.dial()
		cl.raw(b)
		if _, m, err := cl.read(); err == nil {
			if e, ok := m.(*wire.ErrorMsg); ok {
				got = append(got, fmt.Sprintf("0x%02x %s", e.Code, e.Msg))
			}
		}
	}
	table := map[uint16]string{}
	for _, se := range wire.StatusErrors() {
		table[se.Code] = se.Msg
	}
	for _, g := range got {
		var code uint16
		var msg string
		fmt.Sscanf(g, "0x%x", &code)
		msg = g[5:]
		base := table[code]
		if msg != base && !strings.HasPrefix(msg, base+": ") || len(msg) > wire.MaxMsgLen {
			t.Errorf("%s: does not start with %q, or is longer than %d bytes", g, base, wire.MaxMsgLen)
		}
		for _, inside := range []string{"wire:", "queue:", "devices:", "sqlite", "dial", "got ", "want ", "SQLSTATE", "%!"} {
			if strings.Contains(msg, inside) {
				t.Errorf("%s: carries %q", g, inside)
			}
		}
	}
	if t.Failed() {
		t.Logf("messages:\n%s", strings.Join(got, "\n"))
	}
}

// TestRequiredFieldsAndBooleans: issue 10 made the daemon refuse, with
// 0x04 as soon as they arrive, a HELLO without DeviceID or Role (no
// CHALLENGE), an AUTH MAC of 31 bytes, a TAKE_TICKET without Service and a
// boolean of 2; checked here end to end (issue 14, items 4 and 5).
func TestRequiredFieldsAndBooleans(t *testing.T) {
	en := newEnv(t, nil)
	for _, h := range []*wire.Hello{{Role: wire.RoleKiosk, ProtocolVersion: 1}, {DeviceID: "kiosk-1", ProtocolVersion: 1}} {
		cl := en.dial()
		cl.write(1, 0, h)
		if _, m, _ := cl.read(); !isErrorMsg(m, wire.ErrBadPayload.Code) {
			t.Errorf("HELLO %+v: %+v, want ERROR 0x04", h, m)
		}
	}
	cl := en.dial()
	cl.write(1, 0, &wire.Hello{DeviceID: "kiosk-1", Role: wire.RoleKiosk, ProtocolVersion: 1})
	cl.read()
	cl.write(2, 0, &wire.Auth{MAC: make([]byte, 31)})
	if _, m, _ := cl.read(); !isErrorMsg(m, wire.ErrBadPayload.Code) {
		t.Errorf("AUTH MAC of 31 bytes: %+v, want ERROR 0x04", m)
	}
	kiosk, _ := en.login("kiosk-2", 1)
	kiosk.wantError(&wire.TakeTicket{}, wire.ErrBadPayload.Code)
	bad := []byte{4, 3, 0, 1, 'A', 8, 0, 0, 1, 2} // Service "A", WantESCPOS = 2
	kiosk.raw(frame(magic, 1, byte(wire.TypeTakeTicket), 9, uint32(len(bad)), bad, 0))
	if a := kiosk.await(9); !isErrorMsg(a, wire.ErrBadPayload.Code) {
		t.Errorf("WantESCPOS 2: %+v, want ERROR 0x04", a)
	}
}

func isErrorMsg(m wire.Message, code uint16) bool {
	e, ok := m.(*wire.ErrorMsg)
	return ok && e.Code == code
}

// TestCounterEdgeCases: what PROTOCOL.md section 5 now writes down for
// CALL_NEXT, RECALL, START, COMPLETE and a console without a counter.
func TestCounterEdgeCases(t *testing.T) {
	en := newEnv(t, nil)
	kiosk, _ := en.login("kiosk-1", 1)
	kp, _ := en.login("keypad-1", 1)
	con, _ := en.login("console-1", 1)
	for _, m := range []wire.Message{&wire.Recall{}, &wire.Start{}, &wire.Complete{}, &wire.NoShow{}, &wire.Transfer{ToService: "B"}} {
		kp.wantError(m, wire.ErrInvalidTransition.Code) // nothing current
	}
	kp.wantError(&wire.CallNext{}, wire.ErrNoTicketWaiting.Code)
	kiosk.ticket(&wire.TakeTicket{Service: "A"})
	kiosk.ticket(&wire.TakeTicket{Service: "A"})
	kp.ticket(&wire.CallNext{})
	kp.wantError(&wire.CallNext{}, wire.ErrInvalidTransition.Code) // A001 only called
	kp.wantError(&wire.Complete{}, wire.ErrInvalidTransition.Code) // not serving yet
	kp.ticket(&wire.Start{})
	// Serving: CALL_NEXT completes A001 (a DONE event) and calls A002.
	if tk := kp.ticket(&wire.CallNext{}); tk.Number != "A002" {
		t.Errorf("CALL_NEXT while serving called %s, want A002", tk.Number)
	}
	if p, err := en.Engine.Position(context.Background(), "hq", "A001"); err != nil || p.Ticket.Status != queue.StatusDone {
		t.Errorf("A001 after CALL_NEXT: %v %v, want DONE", p.Ticket.Status, err)
	}
	for _, m := range []wire.Message{&wire.CallNext{}, &wire.Recall{}, &wire.Pause{}, &wire.CallNumber{Number: "A002"}} {
		e := con.wantError(m, wire.ErrBadPayload.Code)
		if e.Msg != "malformed payload: counter required" {
			t.Errorf("console %s without a counter: %q", m.Type(), e.Msg)
		}
	}
	kiosk.wantError(&wire.TakeTicket{Service: "A", Site: "nowhere"}, wire.ErrForbidden.Code)
	// A console of every site naming one the daemon does not serve.
	all := protocol.Device{ID: "console-all", Role: wire.RoleConsole, Secret: secretOf("console-all")}
	d := protocoltest.Start(t, testSite(), append(testDevices(), all), nil)
	anySite := (&env{Daemon: d, t: t}).dial()
	if _, err := anySite.auth(all.ID, all.Role, 1, all.Secret); err != nil {
		t.Fatal(err)
	}
	anySite.wantError(&wire.TakeTicket{Service: "A", Site: "nowhere"}, wire.ErrUnknownSite.Code)
}

// TestPrintFailedAnswer: a kiosk whose ticket did not print gets the
// ticket, flagged, and a retry with the same key gets the same ticket and
// tries the printer again (PROTOCOL.md TAKE_TICKET).
func TestPrintFailedAnswer(t *testing.T) {
	var fails int
	printErr := errors.New("the printer's own words: dial tcp 10.0.0.9:9100: connection refused")
	en := newEnv(t, func(o *protocol.Opts) {
		o.Print = func(context.Context, string, queue.Ticket, queue.Position) error {
			if fails > 0 {
				fails--
				return printErr
			}
			return nil
		}
	})
	kiosk, _ := en.login("kiosk-1", 1)
	fails = 1
	take := &wire.TakeTicket{IdemKey: "k1-1", Service: "A"}
	tk := kiosk.ticket(take)
	if !tk.NotPrinted || tk.PrintError != "printer error" || tk.Number != "A001" || tk.Version == 0 {
		t.Errorf("failed print: %+v, want A001 not printed, \"printer error\"", tk)
	}
	again := kiosk.ticket(take)
	if again.NotPrinted || again.Number != "A001" || again.Version != tk.Version {
		t.Errorf("retry: %+v, want A001 printed, same version", again)
	}
}

// TestSiteClasses: WELCOME tells a kiosk the site's languages, services
// and classes with their names; a class of the site's own (the bank
// example's priority) has a value from 16 and can be issued from a kiosk,
// and TICKET and EVENT carry that value; a class the site does not have is
// refused.
func TestSiteClasses(t *testing.T) {
	site := testSite()
	site.Languages = []string{"pt", "en"}
	site.Ranks = map[queue.Class]int{"priority": 10, queue.ClassNormal: 20}
	site.ClassNames = map[queue.Class]map[string]string{"priority": {"pt": "Prioritário", "en": "Priority"}}
	site.Services[0].Names = map[string]string{"pt": "Geral", "en": "General"}
	en := newEnvSite(t, site, nil)
	kiosk, w := en.login("kiosk-1", 1)
	var classes, services []string
	for _, c := range w.Classes {
		classes = append(classes, fmt.Sprintf("%d=%s:%s", c.Value, c.Code, strings.Join(c.Names, "/")))
	}
	for _, s := range w.Services {
		services = append(services, s.Code+":"+strings.Join(s.Names, "/"))
	}
	if got, want := strings.Join(classes, " "), "0=normal:Normal/Normal 16=priority:Prioritário/Priority 3=revisit:Revisit/Revisit"; got != want {
		t.Errorf("WELCOME classes:\n got %s\nwant %s", got, want)
	}
	if got, want := strings.Join(services, " "), "A:Geral/General B:B/B F:F/F"; got != want || strings.Join(w.Languages, ",") != "pt,en" {
		t.Errorf("WELCOME services %s, languages %v; want %s, pt,en", got, w.Languages, want)
	}
	d, _ := en.login("display-1", 1)
	d.do(&wire.Subscribe{FromVersion: 0})
	tk := kiosk.ticket(&wire.TakeTicket{Service: "A", Class: 16})
	if tk.Class != 16 {
		t.Errorf("priority ticket: class %d, want 16", tk.Class)
	}
	if evs := d.eventsUntil(tk.Version); len(evs) != 1 || evs[0].Class != 16 {
		t.Errorf("ISSUED event of a priority ticket: %+v, want class 16", evs)
	}
	kiosk.wantError(&wire.TakeTicket{Service: "A", Class: wire.ClassVIP}, wire.ErrBadPayload.Code)
	kiosk.wantError(&wire.TakeTicket{Service: "A", Class: 17}, wire.ErrBadPayload.Code)
}
