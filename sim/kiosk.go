package sim

import (
	"context"
	"fmt"
	"io"

	"github.com/nowserving/nowserving/devices/escpos"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

// KioskOpts is the ticket a kiosk asks for.
type KioskOpts struct {
	Service string
	Class   string // a class name (ParseClass)
	Lang    string // language of the printout; "": the site's first
	IdemKey string // the same key twice gives the same ticket
	Print   bool   // ask for the ESC/POS printout and list its commands
}

// Kiosk takes a ticket as a kiosk (or a console) and writes it to out.
func (e *Env) Kiosk(ctx context.Context, k KioskOpts, out io.Writer) error {
	cl, err := ParseClass(k.Class)
	if err != nil {
		return err
	}
	c, d, err := e.connect(ctx, wire.RoleKiosk, wire.RoleConsole)
	if err != nil {
		return err
	}
	defer c.Close()
	t, err := c.TakeTicket(ctx, k.Service, cl, client.TicketOpts{IdemKey: k.IdemKey, ESCPOS: k.Print, Language: k.Lang})
	if err != nil {
		return e.Explain(err, d)
	}
	fmt.Fprintf(out, "ticket %s  service %s  %s\n", t.Number, t.Service, t.Class)
	fmt.Fprintf(out, "people ahead: %d\n", t.PeopleAhead)
	fmt.Fprintf(out, "estimated wait: %s\n", WaitText(t.WaitSeconds))
	if k.Print {
		if len(t.ESCPOS) == 0 {
			fmt.Fprintln(out, "(the daemon sent no printout)")
		} else {
			fmt.Fprintf(out, "--- printout (%d bytes of ESC/POS) ---\n%s", len(t.ESCPOS), escpos.Dump(t.ESCPOS))
		}
	}
	return nil
}

// Status writes the state of the site, or of ticket number when it is
// not empty, to out.
func (e *Env) Status(ctx context.Context, number string, out io.Writer) error {
	c, d, err := e.connect(ctx, wire.RoleDisplay, wire.RoleConsole, wire.RoleKiosk)
	if err != nil {
		return err
	}
	defer c.Close()
	if number != "" {
		t, err := c.Status(ctx, number)
		if err != nil {
			return e.Explain(err, d)
		}
		fmt.Fprintln(out, TicketLine(t))
		return nil
	}
	s, err := c.Snapshot(ctx, 0)
	if err != nil {
		return e.Explain(err, d)
	}
	fmt.Fprint(out, SnapshotText(s))
	return nil
}
