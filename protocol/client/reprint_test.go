package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices/escpos"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
)

// TestRealReprint: a console reprints through the real daemon; the hook
// sees each reprint once, also when the answer is lost (no resend).
func TestRealReprint(t *testing.T) {
	pr := &protocoltest.Printer{Fail: map[string]error{"jammed": escpos.ErrPaperOut}}
	d := startDaemon(t, func(o *protocol.Opts) { o.Reprint = pr.Reprint })
	pr.Engine = d.Engine
	ctx := context.Background()
	k := dial(t, d.Addr, "kiosk-1", wire.RoleKiosk)
	tk, err := k.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{})
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, d.Addr)
	con := dial(t, p.Addr(), "console-1", wire.RoleConsole)

	if err := con.Reprint(ctx, tk.Number, "hall-1"); err != nil {
		t.Fatalf("Reprint: %v", err)
	}
	if err := con.Reprint(ctx, tk.Number, "", client.WithSite("hq")); err != nil {
		t.Fatalf("Reprint on the kiosk's printer: %v", err)
	}
	if got, want := pr.Printed(), "hq/A001/hall-1 hq/A001/"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}

	errs := []struct {
		name    string
		err     error
		want    *wire.StatusError
		msgPart string
	}{
		{"unknown ticket", con.Reprint(ctx, "A999", "hall-1"), wire.ErrUnknownTicket, "A999"},
		{"paper out", con.Reprint(ctx, tk.Number, "jammed"), wire.ErrPrinterFailed, "paper out"},
		{"kiosk", k.Reprint(ctx, tk.Number, "hall-1"), wire.ErrForbidden, "REPRINT"},
	}
	for _, tt := range errs {
		var se *wire.StatusError
		if !errors.Is(tt.err, tt.want) || !errors.As(tt.err, &se) || !strings.Contains(se.Msg, tt.msgPart) {
			t.Errorf("%s: %v, want %v naming %q", tt.name, tt.err, tt.want, tt.msgPart)
		}
	}

	// The answer is lost: the reprint happened once and is not resent.
	before := p.Accepted()
	cut := p.cutAfterAnswer(wire.TypeReprint)
	if err := con.Reprint(ctx, tk.Number, "hall-2"); err == nil {
		t.Error("Reprint whose answer was lost returned nil")
	}
	<-cut
	if got, want := pr.Printed(), "hq/A001/hall-1 hq/A001/ hq/A001/hall-2"; got != want {
		t.Errorf("printed %q after the lost answer, want %q (one print, no resend)", got, want)
	}
	if n := con.Resent(); n != 0 {
		t.Errorf("client resent %d frames, want 0", n)
	}
	// The client reconnects and the next reprint goes through. (Sent before
	// the client has noticed the cut, it would go out on the dead
	// connection, and a REPRINT is never resent.)
	if !poll.Within(5*time.Second, 5*time.Millisecond, func() bool {
		st, _ := con.State()
		return st == client.StateConnected && p.Accepted() > before
	}) {
		t.Fatal("the client did not reconnect within 5 s")
	}
	if err := con.Reprint(ctx, tk.Number, "hall-3"); err != nil {
		t.Errorf("Reprint after the reconnect: %v", err)
	}
}
