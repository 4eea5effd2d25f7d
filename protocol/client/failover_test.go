package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
)

// TestFailover: two daemons share one database; a kiosk and a display know
// both. Daemon A dies right after applying a TAKE_TICKET whose answer the
// kiosk never got: the kiosk resends it to B with the same request id and
// gets the ticket A gave (not a second one) within 2 s; its next ticket
// comes from B; the display resumes on B from the last version it saw,
// missing nothing and seeing nothing twice.
func TestFailover(t *testing.T) {
	a, b := twoDaemons(t, true)
	p := newProxy(t, a.Addr) // daemon A as devices reach it
	both := p.Addr() + "," + b.Addr
	ctx := context.Background()

	k := dial(t, both, "kiosk-1", wire.RoleKiosk)
	disp := dial(t, both, "display-1", wire.RoleDisplay)
	sub, err := disp.Subscribe(ctx, client.Filter{FromVersion: disp.Welcome().Version})
	if err != nil {
		t.Fatal(err)
	}
	first, err := k.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{})
	if err != nil || k.Addr() != p.Addr() {
		t.Fatalf("first ticket %v, %v on %s; want it from daemon A", first, err, k.Addr())
	}
	p.onCut = func() { p.setRefuse(true); p.CutAll() } // A is gone
	cut := p.cutAfterAnswer(wire.TypeTakeTicket)
	got, err := k.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{})
	<-cut
	if err != nil {
		t.Fatalf("TakeTicket across A's death: %v", err)
	}
	if k.Addr() != b.Addr {
		t.Errorf("kiosk on %s after A died, want B %s", k.Addr(), b.Addr)
	}
	if got.Number != "A002" {
		t.Errorf("ticket resent to B = %s, want A002, the one A applied (first was %s)", got.Number, first.Number)
	}
	next, err := k.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{})
	if err != nil || next.Number != "A003" {
		t.Fatalf("next ticket on B = %v, %v; want A003", next, err)
	}
	if n := issued(t, b.Addr); n != 3 {
		t.Errorf("daemons issued %d tickets, want 3 (one per press)", n)
	}
	var seen []uint64
	timeout := time.After(5 * time.Second)
	for len(seen) < 3 {
		select {
		case u, ok := <-sub.Updates():
			if !ok {
				t.Fatalf("subscription ended: %v", sub.Err())
			}
			if u.Event != nil {
				seen = append(seen, u.Event.Version)
			}
		case <-timeout:
			t.Fatalf("display saw versions %v, want 1, 2, 3", seen)
		}
	}
	if seen[0] != 1 || seen[1] != 2 || seen[2] != 3 || disp.Addr() != b.Addr {
		t.Errorf("display saw versions %v on %s, want [1 2 3] on B", seen, disp.Addr())
	}
}

// TestFailoverTime: the kiosk's daemon dies between two presses; the next
// press is answered by the other daemon within 2 s.
func TestFailoverTime(t *testing.T) {
	a, b := twoDaemons(t, false)
	p := newProxy(t, a.Addr)
	k := dial(t, p.Addr()+","+b.Addr, "kiosk-1", wire.RoleKiosk)
	ctx := context.Background()
	if _, err := k.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{}); err != nil {
		t.Fatal(err)
	}
	p.setRefuse(true)
	p.CutAll()
	start := time.Now()
	tk, err := k.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{})
	took := time.Since(start)
	if err != nil || tk.Number != "A002" {
		t.Fatalf("ticket after A died = %v, %v; want A002", tk, err)
	}
	t.Logf("ticket on B %s after A died", took)
	if took > 2*time.Second {
		t.Errorf("failover took %s, want under 2s", took)
	}
}

// TestReleasedMovesOn: a daemon that releases its sessions (its store has
// been unreachable too long: protocol.Server.Release with StoreDown, ERROR
// 0x41 with request id 0) sends the kiosk to the next daemon of its list
// at once, even though it still accepts connections; the kiosk's next
// ticket comes from there.
func TestReleasedMovesOn(t *testing.T) {
	a, b := twoDaemons(t, false)
	k := dial(t, a.Addr+","+b.Addr, "kiosk-1", wire.RoleKiosk)
	ctx := context.Background()
	if _, err := k.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{}); err != nil || k.Addr() != a.Addr {
		t.Fatalf("first ticket: %v on %s, want it from A", err, k.Addr())
	}
	if n := a.Server.Release(protocol.StoreDown, "test"); n != 1 {
		t.Fatalf("Release closed %d sessions, want 1", n)
	}
	tk, err := k.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{})
	if err != nil || tk.Number != "A002" {
		t.Fatalf("ticket after A let go = %v, %v; want A002", tk, err)
	}
	if k.Addr() != b.Addr {
		t.Errorf("kiosk on %s after A let go, want B %s", k.Addr(), b.Addr)
	}
}

// twoDaemons starts two daemons on one database, each following the other's
// commits when follow is set, and stops them when the test ends.
func twoDaemons(t *testing.T, follow bool) (a, b *protocoltest.Daemon) {
	t.Helper()
	a = protocoltest.New(t, site(), devices())
	a.Follow = follow
	a.Start()
	t.Cleanup(a.Stop)
	b = protocoltest.New(t, site(), devices())
	b.DB, b.Follow = a.DB, follow
	b.Start()
	t.Cleanup(b.Stop)
	return a, b
}
