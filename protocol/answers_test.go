package protocol_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

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
	// A keypad names its counter for the count: REENTER does not act for
	// one.
	check(kp2, &wire.Reenter{Number: called.Number, Counter: 2})
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
