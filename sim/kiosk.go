package sim

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nowserving/nowserving/devices/escpos"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

// KioskOpts is the ticket a kiosk asks for: a new one of Service, or the
// one a booking with code CheckIn becomes.
type KioskOpts struct {
	Service string
	CheckIn string // booking code: check in instead of taking a ticket
	Class   string // a class of the site, by name (WELCOME.Classes; ParseClass for older daemons)
	Lang    string // language of the printout; "": the site's first
	IdemKey string // the same key twice gives the same ticket
	Print   bool   // ask for the ESC/POS printout and list its commands
}

// Kiosk takes a ticket (or checks a booking in) as a kiosk (or a console)
// and writes it to out.
func (e *Env) Kiosk(ctx context.Context, k KioskOpts, out io.Writer) error {
	if (k.Service == "") == (k.CheckIn == "") {
		return fmt.Errorf("sim: kiosk: give --service or --check-in, not both")
	}
	c, d, err := e.connect(ctx, wire.RoleKiosk, wire.RoleConsole)
	if err != nil {
		return err
	}
	defer c.Close()
	o := client.TicketOpts{IdemKey: k.IdemKey, ESCPOS: k.Print, Language: k.Lang}
	var t *wire.Ticket
	if k.CheckIn != "" {
		t, err = c.CheckIn(ctx, k.CheckIn, o)
	} else {
		var cl wire.ClassDef
		if cl, err = siteClass(c, k.Class); err != nil {
			return err
		}
		t, err = c.TakeTicket(ctx, k.Service, cl.Value, o)
	}
	if err != nil {
		return e.Explain(err, d)
	}
	fmt.Fprintf(out, "ticket %s  service %s  %s\n", t.Number, t.Service, classCode(c, t.Class))
	if t.AppointmentMS != 0 {
		fmt.Fprintf(out, "appointment: %s\n", e.local(time.UnixMilli(t.AppointmentMS)).Format("2006-01-02 15:04"))
	}
	if t.NotPrinted {
		fmt.Fprintf(out, "not printed: %s\n", t.PrintError)
	}
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

// siteClass is the class named name ("" is normal) as the daemon's
// WELCOME lists it for the site; a daemon that lists none gets the
// protocol's fixed classes.
func siteClass(c *client.Client, name string) (wire.ClassDef, error) {
	if name == "" {
		name = "normal"
	}
	w := c.Welcome()
	if len(w.Classes) == 0 {
		v, err := ParseClass(name)
		return wire.ClassDef{Value: v, Code: v.String()}, err
	}
	if cd, ok := c.Class(name); ok {
		return cd, nil
	}
	codes := make([]string, len(w.Classes))
	for i, cd := range w.Classes {
		codes[i] = cd.Code
	}
	return wire.ClassDef{}, fmt.Errorf("sim: class %q: site %s has %s", name, w.Site, strings.Join(codes, ", "))
}

// classCode is the site's name of class v (WELCOME.Classes), or the
// protocol's fixed name when the daemon lists none for it.
func classCode(c *client.Client, v wire.Class) string {
	for _, cd := range c.Welcome().Classes {
		if cd.Value == v {
			return cd.Code
		}
	}
	return v.String()
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
