package protocol_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// TestKeypadWaitingCount checks the "N waiting" line of keypad answers
// against a snapshot taken right after each, while tickets move through
// the protocol and through the engine directly: issued, called, transferred,
// re-entered, cancelled.
func TestKeypadWaitingCount(t *testing.T) {
	en := newEnv(t, nil)
	ctx := context.Background()
	kiosk, _ := en.login("kiosk-1", 1)
	kp1, _ := en.login("keypad-1", 1)
	kp2, _ := en.login("keypad-2", 1)
	con, _ := en.login("console-1", 1)
	issue := func(service string) {
		t.Helper()
		if _, err := en.Engine.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: "hq", Device: "test"}, Service: service}); err != nil {
			t.Fatal(err)
		}
	}
	check := func(kp *client, m wire.Message) *wire.Ticket {
		t.Helper()
		tk := kp.ticket(m)
		snap, err := en.Engine.Snapshot(ctx, "hq")
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for _, st := range snap.Services {
			if st.Code == "A" || st.Code == "B" { // counters 1 and 2 serve A and B
				want += st.Waiting
			}
		}
		if len(tk.LCD) != 2 || tk.LCD[1] != fmt.Sprintf("%d waiting", want) {
			t.Errorf("%s %s: LCD %q, want second line %q", kp.id, m.Type(), strings.Join(tk.LCD, "|"), fmt.Sprintf("%d waiting", want))
		}
		return tk
	}
	for i := 0; i < 3; i++ {
		kiosk.ticket(&wire.TakeTicket{Service: []string{"A", "B", "F"}[i]})
	}
	check(kp1, &wire.CallNext{}) // A001; B001 waits; F01 is not counter 1's
	issue("A")
	issue("B")
	called := check(kp2, &wire.CallNext{})
	check(kp1, &wire.Transfer{ToService: "B"})
	check(kp2, &wire.NoShow{})
	// Counter 0 is the keypad's own counter, for REENTER too: its count
	// is counter 2's.
	check(kp2, &wire.Reenter{Number: called.Number})
	check(kp1, &wire.CallNext{})
	con.ticket(&wire.Cancel{Number: "B002"})
	issue("A")
	check(kp2, &wire.CallNext{})
	check(kp2, &wire.Start{})
	check(kp2, &wire.Complete{})
	for i := 0; i < 2; i++ {
		check(kp1, &wire.Start{})
		check(kp1, &wire.CallNext{})
	}
	check(kp1, &wire.Start{})
	check(kp1, &wire.Complete{})
}

// TestWelcomeVersion checks that WELCOME tells subscribers the site's
// last event version, and kiosks none.
func TestWelcomeVersion(t *testing.T) {
	en := newEnv(t, nil)
	kiosk, w := en.login("kiosk-1", 1)
	if w.Version != 0 {
		t.Errorf("kiosk WELCOME version %d, want 0", w.Version)
	}
	for i := 0; i < 3; i++ {
		kiosk.ticket(&wire.TakeTicket{Service: "A"})
	}
	kp, _ := en.login("keypad-1", 1)
	kp.ticket(&wire.CallNext{})
	for _, id := range []string{"display-1", "keypad-2", "console-1"} {
		if _, w := en.login(id, 1); w.Version != 4 || w.Site != "hq" || w.ServiceDay != "2026-11-30" {
			t.Errorf("%s WELCOME: version %d, site %q, day %s; want 4, hq, 2026-11-30", id, w.Version, w.Site, w.ServiceDay)
		}
	}
}

// TestAnswerVersions: TICKET tag 16 and OK tag 1 carry the event version
// the request produced, for kiosks, keypads and PAUSE/RESUME, and a retry
// with the same key gets the first answer's version.
func TestAnswerVersions(t *testing.T) {
	en := newEnv(t, nil)
	ctx := context.Background()
	kiosk, _ := en.login("kiosk-1", 1)
	kp, _ := en.login("keypad-1", 1)
	last := func() uint64 {
		t.Helper()
		v, err := en.Engine.LastVersion(ctx, "hq")
		if err != nil {
			t.Fatal(err)
		}
		return uint64(v)
	}
	take := &wire.TakeTicket{IdemKey: "k1-0001", Service: "A"}
	first := kiosk.ticket(take)
	if first.Version != last() || first.Version == 0 {
		t.Errorf("TAKE_TICKET: version %d, want %d", first.Version, last())
	}
	kiosk.ticket(&wire.TakeTicket{Service: "A"})
	for _, m := range []wire.Message{&wire.CallNext{}, &wire.Recall{}, &wire.Start{}, &wire.Complete{}, &wire.CallNext{}, &wire.NoShow{}} {
		if tk := kp.ticket(m); tk.Version != last() {
			t.Errorf("%s: version %d, want %d", m.Type(), tk.Version, last())
		}
	}
	for _, m := range []wire.Message{&wire.Pause{}, &wire.Resume{}} {
		ok, isOK := kp.do(m).(*wire.OK)
		if !isOK || ok.Version != last() {
			t.Errorf("%s: %+v, want OK with version %d", m.Type(), ok, last())
		}
	}
	if again := kiosk.ticket(take); again.Version != first.Version || again.Number != first.Number {
		t.Errorf("TAKE_TICKET retried: %s version %d, want %s version %d", again.Number, again.Version, first.Number, first.Version)
	}
}

// TestStatusFilters: STATUS with Counter answers that counter and the
// services it serves; with Service, that service and the counters serving
// it; unknown ones are refused (PROTOCOL.md 0x1C STATUS).
func TestStatusFilters(t *testing.T) {
	site := testSite()
	site.Counters[4].Services = []queue.CounterService{{Service: "F", Weight: 1}} // counter 5 serves only F
	en := newEnvSite(t, site, nil)
	con, _ := en.login("console-1", 1)
	kp, _ := en.login("keypad-1", 1)
	show := func(m *wire.Snapshot) string {
		var sv, cs, ds []string
		for _, s := range m.Services {
			sv = append(sv, s.Code)
		}
		for _, c := range m.Counters {
			cs = append(cs, fmt.Sprint(c.ID))
		}
		for _, d := range m.Devices {
			ds = append(ds, d.ID)
		}
		return strings.Join(sv, ",") + " / " + strings.Join(cs, ",") + " / " + strings.Join(ds, ",")
	}
	tests := []struct {
		c    *client
		m    *wire.Status
		want string
	}{
		{con, &wire.Status{Counter: 5}, "F / 5 / keypad-5"},
		{con, &wire.Status{Service: "A"}, "A / 1,2,3,4 / " + allDevices},
		{con, &wire.Status{Service: "F", Counter: 5}, "F / 5 / keypad-5"},
		{con, &wire.Status{Service: "F", Counter: 1}, " /  / keypad-1"},
		{kp, &wire.Status{Counter: 2}, "A,B / 2 / keypad-2"}, // a read: any counter of the site
	}
	for _, tt := range tests {
		m, ok := tt.c.do(tt.m).(*wire.Snapshot)
		if !ok {
			t.Fatalf("STATUS %+v: no SNAPSHOT", tt.m)
		}
		if got := show(m); got != tt.want {
			t.Errorf("STATUS %+v:\n got %s\nwant %s", tt.m, got, tt.want)
		}
	}
	if m := con.do(&wire.Status{}).(*wire.Snapshot); len(m.Services) != 3 || len(m.Counters) != 5 {
		t.Errorf("STATUS without filter: %s", show(m))
	}
	con.wantError(&wire.Status{Counter: 9}, wire.ErrUnknownCounter.Code)
	con.wantError(&wire.Status{Service: "Z"}, wire.ErrUnknownService.Code)
}

// allDevices is the health list of the test site's protocol devices, in
// a SNAPSHOT's order.
const allDevices = "display-1,display-2,display-3,keypad-1,keypad-2,keypad-3,keypad-4,keypad-5,kiosk-1,kiosk-2,kiosk-3,kiosk-4,kiosk-5,kiosk-6,kiosk-7,kiosk-8"

// TestKeypadLCDLanguage: a keypad's LCD lines are in one language: its
// device's lang, else the site's main language, names and words alike (no
// "1号窗口" over "paused").
func TestKeypadLCDLanguage(t *testing.T) {
	site := testSite()
	site.Languages = []string{"zh", "en"}
	site.Counters[0].Names = map[string]string{"zh": "1号诊室", "en": "Room 1"}
	devs := testDevices()
	for i := range devs {
		if devs[i].ID == "keypad-2" {
			devs[i].Lang = "en"
		}
	}
	d := protocoltest.New(t, site, devs)
	d.Clock = engineClock.Now
	d.Start()
	t.Cleanup(d.Stop)
	en := &env{Daemon: d, t: t}
	kiosk, _ := en.login("kiosk-1", 1)
	kiosk.ticket(&wire.TakeTicket{Service: "A"})
	kiosk.ticket(&wire.TakeTicket{Service: "A"})
	for _, tc := range []struct {
		id, call, pause string
	}{
		{"keypad-1", "A001 -> 1|等候 1 人", "1号诊室|暂停"}, // the site's main language
		{"keypad-3", "A002 -> 3|等候 0 人", "3号窗口|暂停"}, // no name: the words' own
		{"keypad-2", "", "Counter 2|paused"},        // lang: en
	} {
		kp, _ := en.login(tc.id, 1)
		if tc.call != "" {
			if got := strings.Join(kp.ticket(&wire.CallNext{}).LCD, "|"); got != tc.call {
				t.Errorf("%s call next: LCD %q, want %q", tc.id, got, tc.call)
			}
		}
		ok, isOK := kp.do(&wire.Pause{}).(*wire.OK)
		if !isOK || strings.Join(ok.LCD, "|") != tc.pause {
			t.Errorf("%s pause: %+v, want LCD %q", tc.id, ok, tc.pause)
		}
	}
}
