package protocol_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/devices/escpos"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
)

func TestReprint(t *testing.T) {
	p := &protocoltest.Printer{}
	en := newEnv(t, func(o *protocol.Opts) { o.Reprint = p.Reprint })
	p.Engine = en.Engine
	kiosk, _ := en.login("kiosk-1", 1)
	tk := kiosk.ticket(&wire.TakeTicket{Service: "A"})
	con, _ := en.login("console-1", 1)

	ok, isOK := con.do(&wire.Reprint{Number: tk.Number, Printer: "hall-1"}).(*wire.OK)
	if !isOK {
		t.Fatalf("REPRINT answer is not OK")
	}
	if ok.Version != 0 {
		t.Errorf("REPRINT answered version %d; a reprint changes no state", ok.Version)
	}
	// The same request sent again with the RETRY flag prints again: REPRINT
	// is not idempotent.
	id := con.next
	con.next++
	con.write(id, 0, &wire.Reprint{Number: tk.Number, Site: "hq"})
	if _, ok := con.await(id).(*wire.OK); !ok {
		t.Fatal("REPRINT with an empty printer: answer is not OK")
	}
	con.write(id, wire.FlagRetry, &wire.Reprint{Number: tk.Number, Site: "hq"})
	if _, ok := con.await(id).(*wire.OK); !ok {
		t.Fatal("retried REPRINT: answer is not OK")
	}
	if got, want := p.Printed(), "hq/A001/hall-1 hq/A001/ hq/A001/"; got != want {
		t.Errorf("printed %q, want %q", got, want)
	}
	snap, err := en.Engine.Snapshot(context.Background(), "hq")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Version != 1 {
		t.Errorf("site version %d after one ticket and three reprints, want 1", snap.Version)
	}

	kp, _ := en.login("keypad-1", 1)
	wantRefusals(t, []refusal{
		{"unknown ticket", con, &wire.Reprint{Number: "A999"}, wire.ErrUnknownTicket.Code, "A999"},
		{"no number", con, &wire.Reprint{Printer: "hall-1"}, wire.ErrBadPayload.Code, "required"},
		{"other site", con, &wire.Reprint{Number: tk.Number, Site: "elsewhere"}, wire.ErrForbidden.Code, "elsewhere"},
		{"kiosk", kiosk, &wire.Reprint{Number: tk.Number}, wire.ErrForbidden.Code, "REPRINT"},
		{"keypad", kp, &wire.Reprint{Number: tk.Number}, wire.ErrForbidden.Code, "REPRINT"},
	})
	con.t = t
	if got, want := p.Printed(), "hq/A001/hall-1 hq/A001/ hq/A001/"; got != want {
		t.Errorf("printed %q after the refused requests, want still %q", got, want)
	}
}

func TestReprintFails(t *testing.T) {
	p := &protocoltest.Printer{Fail: map[string]error{"hall-1": escpos.ErrPaperOut}}
	en := newEnv(t, func(o *protocol.Opts) { o.Reprint = p.Reprint })
	p.Engine = en.Engine
	kiosk, _ := en.login("kiosk-1", 1)
	tk := kiosk.ticket(&wire.TakeTicket{Service: "B"})
	con, _ := en.login("console-1", 1)
	e := con.wantError(&wire.Reprint{Number: tk.Number, Printer: "hall-1"}, wire.ErrPrinterFailed.Code)
	if !strings.Contains(e.Msg, "paper out") || !strings.Contains(e.Msg, "hall-1") || e.Retryable {
		t.Errorf("ERROR %q retryable %v, want the cause (paper out, hall-1), not retryable", e.Msg, e.Retryable)
	}
	if !errors.Is(e.Err(), wire.ErrPrinterFailed) {
		t.Errorf("%v is not ErrPrinterFailed", e.Err())
	}
	// The session goes on.
	if _, ok := con.do(&wire.Status{Number: tk.Number}).(*wire.Ticket); !ok {
		t.Error("STATUS after a failed reprint: no TICKET")
	}
}

func TestReprintNotConfigured(t *testing.T) {
	en := newEnv(t, nil)
	kiosk, _ := en.login("kiosk-1", 1)
	tk := kiosk.ticket(&wire.TakeTicket{Service: "A"})
	con, w := en.login("console-1", 1)
	if !w.Allowed.Allows(wire.TypeReprint) {
		t.Error("WELCOME of a console does not allow REPRINT")
	}
	e := con.wantError(&wire.Reprint{Number: tk.Number}, wire.ErrPrinterFailed.Code)
	if e.Msg != "printer failed: printing not configured" {
		t.Errorf("ERROR %q, want %q", e.Msg, "printer failed: printing not configured")
	}
}
