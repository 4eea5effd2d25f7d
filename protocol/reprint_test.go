package protocol_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/nowserving/nowserving/devices"
	"github.com/nowserving/nowserving/devices/escpos"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// printer is a Reprint hook that looks the ticket up in the engine, as the
// devices dispatcher does, and records what it printed, or fails with err.
type printer struct {
	mu    sync.Mutex
	eng   *queue.Engine
	err   error
	calls []string // "site/number/printer"
}

func (p *printer) reprint(ctx context.Context, site, number, id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := p.eng.Position(ctx, site, number); err != nil {
		return fmt.Errorf("devices: reprint %s: %w", number, err)
	}
	if p.err != nil {
		return &devices.PrintError{Printer: id, Number: number, Err: p.err}
	}
	p.calls = append(p.calls, site+"/"+number+"/"+id)
	return nil
}

func (p *printer) printed() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.calls...)
}

var errPaperOut = escpos.ErrPaperOut

func TestReprint(t *testing.T) {
	p := &printer{}
	en := newEnv(t, func(o *protocol.Opts) { o.Reprint = p.reprint })
	p.eng = en.Engine
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
	want := []string{"hq/A001/hall-1", "hq/A001/", "hq/A001/"}
	if got := p.printed(); strings.Join(got, " ") != strings.Join(want, " ") {
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
	if n := len(p.printed()); n != 3 {
		t.Errorf("%d prints after the refused requests, want still 3", n)
	}
}

func TestReprintFails(t *testing.T) {
	p := &printer{err: errPaperOut}
	en := newEnv(t, func(o *protocol.Opts) { o.Reprint = p.reprint })
	p.eng = en.Engine
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
