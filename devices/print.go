package devices

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nowserving/nowserving/devices/escpos"
	"github.com/nowserving/nowserving/queue"
)

// PrintTicket prints a ticket just issued to a kiosk on the kiosk's network
// printer (Opts.Kiosks), in the printer's layout. The printer's status is
// asked before and after the ticket. When the ticket does not print, the
// failure is committed as a PRINT_FAILED event (so it is not counted as
// served silently) and a *PrintError wrapping the cause (escpos.ErrPaperOut,
// ErrCoverOpen, ErrOffline, ErrNoAnswer, or the context's error) is
// returned for the kiosk. A device with no printer gets ErrNoPrinter and
// nothing is recorded.
func (d *Dispatcher) PrintTicket(ctx context.Context, device string, t queue.Ticket, pos queue.Position) error {
	pid, ok := d.o.Kiosks[device]
	if !ok {
		return fmt.Errorf("devices: print %s for %s: %w", t.Number, device, ErrNoPrinter)
	}
	p := d.printers[pid]
	b, err := d.render(t, pos, p.printing(false))
	if err == nil {
		err = p.Printer.Print(ctx, b)
		d.setStatus(pid, err)
	}
	if err == nil {
		return nil
	}
	perr := &PrintError{Printer: pid, Number: t.Number, Err: err}
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.o.OpTimeout)
	defer cancel()
	if merr := d.eng.MarkPrintFailed(mctx, queue.PrintFailure{Site: t.Site, TicketID: t.ID, Actor: device, Reason: printReason(err)}); merr != nil {
		d.log.Error("devices: record failed print", "ticket", t.Number, "err", merr)
		return errors.Join(perr, fmt.Errorf("devices: record failed print of %s: %w", t.Number, merr))
	}
	return perr
}

// HasPrinter reports whether device (a kiosk's id) prints on a network
// printer, i.e. whether PrintTicket applies to it.
func (d *Dispatcher) HasPrinter(device string) bool {
	_, ok := d.o.Kiosks[device]
	return ok
}

// Reprint prints a ticket of today again, by number, on a printer; the
// ticket says it is a reprint and shows its current place in the queue.
// A failed reprint is returned as a *PrintError and not recorded.
//
// An empty printerID means the printer of the kiosk that issued the ticket.
func (d *Dispatcher) Reprint(ctx context.Context, site, number, printerID string) error {
	pos, err := d.eng.Position(ctx, site, number)
	if err != nil {
		return fmt.Errorf("devices: reprint %s: %w", number, err)
	}
	asked := printerID
	if printerID == "" {
		printerID = d.o.Kiosks[pos.Ticket.Device]
	}
	p := d.printers[printerID]
	if p == nil {
		return &NoPrinterError{Number: pos.Ticket.Number, Kiosk: pos.Ticket.Device, Printer: asked}
	}
	b, err := d.render(pos.Ticket, pos, p.printing(true))
	if err == nil {
		err = p.Printer.Print(ctx, b)
		d.setStatus(printerID, err)
	}
	if err != nil {
		return &PrintError{Printer: printerID, Number: number, Err: err}
	}
	return nil
}

// RenderTicket returns the ESC/POS bytes of a ticket for a kiosk that
// prints it itself, in Opts.Layout and language lang ("" for the layout's,
// else the site's main language). Its signature is protocol.RenderFunc.
func (d *Dispatcher) RenderTicket(site string, t queue.Ticket, pos queue.Position, lang string) ([]byte, error) {
	l := d.o.Layout
	if l.PaperMM == 0 {
		l = escpos.DefaultLayout()
		l.Lang = ""
	}
	if t.Site == "" {
		t.Site = site
	}
	return d.render(t, pos, printing{layout: l, lang: lang})
}

// printing is how a ticket is laid out: in layout, in language lang
// (empty: the layout's, else the site's main language), with footer, and
// marked as a reprint or not.
type printing struct {
	layout  escpos.Layout
	lang    string
	footer  string
	reprint bool
}

// printing is how p prints a ticket, a reprint or not.
func (p *Printer) printing(reprint bool) printing {
	return printing{layout: p.Layout, footer: p.Footer, reprint: reprint}
}

// render lays out a ticket with the site's and service's names in the
// ticket's language.
func (d *Dispatcher) render(t queue.Ticket, pos queue.Position, how printing) ([]byte, error) {
	s, err := d.eng.Site(t.Site)
	if err != nil {
		return nil, fmt.Errorf("devices: render %s: %w", t.Number, err)
	}
	lang := how.lang
	switch {
	case lang != "":
	case how.layout.Lang != "":
		lang = how.layout.Lang
	default:
		lang = s.Lang()
	}
	issued, appt := t.IssuedAt, pos.Appointment
	if s.Location != nil {
		issued, appt = issued.In(s.Location), appt.In(s.Location)
	}
	b, err := escpos.Render(escpos.Ticket{
		Site: s.Name(lang), Service: s.ServiceName(t.Service, lang), Number: t.Number,
		PeopleAhead: pos.Ahead, EstimatedWait: pos.Wait, Issued: issued,
		QR: d.o.QR(t), Footer: how.footer, Lang: lang, Reprint: how.reprint, Appointment: appt,
	}, how.layout)
	if err != nil {
		return nil, fmt.Errorf("devices: render %s: %w", t.Number, err)
	}
	return b, nil
}

// printFaults are the failures a printer reports: the escpos error, the
// code the PRINT_FAILED event and the printer status carry, and the
// wording a person is shown (PrintError.Reason).
var printFaults = []struct {
	err         error
	code, words string
}{
	{escpos.ErrPaperOut, "paper_out", "paper out"},
	{escpos.ErrCoverOpen, "cover_open", "cover open"},
	{escpos.ErrOffline, "offline", "printer offline"},
	{escpos.ErrNoAnswer, "no_answer", "no answer from printer"},
}

// printFault returns the entry of printFaults that err is, or ok false.
func printFault(err error) (code, words string, ok bool) {
	for _, f := range printFaults {
		if errors.Is(err, f.err) {
			return f.code, f.words, true
		}
	}
	return "", "", false
}

// printReason names a print failure for the PRINT_FAILED event and the
// printer status: "ok" for none, a printFaults code, or the error.
func printReason(err error) string {
	if err == nil {
		return "ok"
	}
	if code, _, ok := printFault(err); ok {
		return code
	}
	return err.Error()
}

func (d *Dispatcher) setStatus(id string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.status[id]
	s.Status, s.Err = printReason(err), err
	if err != nil && s.Status == err.Error() {
		s.Status = "error"
	}
	s.At = d.eng.Now()
	d.status[id] = s
}

// poll asks a printer's status every PrinterPoll until ctx ends.
func (d *Dispatcher) poll(ctx context.Context, p Printer) {
	t := time.NewTicker(d.o.PrinterPoll)
	defer t.Stop()
	for {
		st, err := p.Printer.Status(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = st.Err()
		}
		d.setStatus(p.ID, err)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
