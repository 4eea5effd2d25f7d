package devices_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices"
	"github.com/nowserving/nowserving/devices/escpos"
	"github.com/nowserving/nowserving/devices/escpos/escpostest"
	"github.com/nowserving/nowserving/internal/testkit/golden"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue"
)

// kioskLayout is the 80 mm Chinese layout of the golden ticket.
func kioskLayout() escpos.Layout {
	l := escpos.DefaultLayout()
	l.Lang = "zh"
	return l
}

// newPrinting returns a dispatcher whose kiosk-1 prints on a fake 9100
// printer.
func newPrinting(t *testing.T, eng *queue.Engine) (*devices.Dispatcher, *escpostest.Printer) {
	t.Helper()
	fake := escpostest.NewPrinter()
	t.Cleanup(func() { fake.Close() })
	o := escpos.DefaultOpts()
	o.Addr = fake.Addr()
	o.StatusTimeout = 500 * time.Millisecond
	d := newDispatcher(t, eng, devices.Opts{
		Printers: []devices.Printer{{ID: "hall-printer", Printer: escpos.NewPrinter(o), Layout: kioskLayout(), Footer: "请留意叫号 Please wait to be called"}},
		Kiosks:   map[string]string{"kiosk-1": "hall-printer"},
	})
	return d, fake
}

// ticketGolden compares got with testdata/name.bin and its readable dump
// with testdata/name.txt (the dump first: its difference is the one to read).
func ticketGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	golden.Assert(t, path+".txt", []byte(escpos.Dump(got)))
	golden.Assert(t, path+".bin", got)
}

// TestPrintTicketGolden: a kiosk's ticket reaches its network printer as
// the golden ESC/POS bytes, with a status query before and after.
func TestPrintTicketGolden(t *testing.T) {
	eng, _ := newEngine(t)
	issue(t, eng, "A", 2)
	tk := issue(t, eng, "A", 1)[0]
	pos, err := eng.TicketPosition(context.Background(), tk)
	if err != nil {
		t.Fatal(err)
	}
	d, fake := newPrinting(t, eng)
	if err := d.PrintTicket(context.Background(), "kiosk-1", pos.Ticket, pos); err != nil {
		t.Fatalf("print: %v", err)
	}
	jobs, err := fake.Jobs(), error(nil)
	if len(jobs) != 1 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		jobs, err = fake.WaitJobs(ctx, 1)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	ticketGolden(t, "kiosk_80_zh", jobs[0])
	if q := fake.Queries(); len(q) < 4 {
		t.Errorf("status queries %v, want DLE EOT before and after the ticket", q)
	}
	st := d.Status()
	if len(st.Printers) != 1 || st.Printers[0].Status != "ok" {
		t.Errorf("printer status %+v, want ok", st.Printers)
	}
	// RenderTicket (kiosks printing themselves) uses the default layout.
	b, err := d.RenderTicket("hospital", pos.Ticket, pos, "en")
	if err != nil {
		t.Fatal(err)
	}
	ticketGolden(t, "render_80_en", b)
}

// TestPrintFailures: paper out, cover open and a silent printer reach the
// kiosk as typed errors, and each failure is committed as PRINT_FAILED.
func TestPrintFailures(t *testing.T) {
	tests := []struct {
		name   string
		state  escpostest.State
		want   error
		reason string
	}{
		{"paper out", escpostest.State{Paper: escpostest.PaperOut}, escpos.ErrPaperOut, "paper_out"},
		{"cover open", escpostest.State{CoverOpen: true}, escpos.ErrCoverOpen, "cover_open"},
		{"silent", escpostest.State{Silent: true}, escpos.ErrNoAnswer, "no_answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng, _ := newEngine(t)
			tk := issue(t, eng, "A", 1)[0]
			d, fake := newPrinting(t, eng)
			fake.SetState(tt.state)
			err := d.PrintTicket(context.Background(), "kiosk-1", tk, queue.Position{Ticket: tk})
			if !errors.Is(err, tt.want) {
				t.Fatalf("print error %v, want %v", err, tt.want)
			}
			var pe *devices.PrintError
			if !errors.As(err, &pe) || pe.Printer != "hall-printer" || pe.Number != "A001" {
				t.Errorf("error %#v, want a *PrintError for A001 on hall-printer", err)
			}
			evs, err := eng.Events(context.Background(), "hospital", 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			last := evs[len(evs)-1]
			if last.Type != queue.EventPrintFailed || last.TicketID != tk.ID || last.Detail != tt.reason || last.Actor != "kiosk-1" {
				t.Errorf("last event %+v, want PRINT_FAILED of A001 by kiosk-1 (%s)", last, tt.reason)
			}
			if st := d.Status(); st.Printers[0].Status != tt.reason {
				t.Errorf("printer status %q, want %q", st.Printers[0].Status, tt.reason)
			}
		})
	}
}

// TestPrintNoPrinter: a kiosk without a printer gets ErrNoPrinter and no
// event is committed.
func TestPrintNoPrinter(t *testing.T) {
	eng, _ := newEngine(t)
	tk := issue(t, eng, "A", 1)[0]
	d, _ := newPrinting(t, eng)
	if !d.HasPrinter("kiosk-1") || d.HasPrinter("kiosk-2") {
		t.Errorf("HasPrinter: kiosk-1 %v, kiosk-2 %v; want true, false", d.HasPrinter("kiosk-1"), d.HasPrinter("kiosk-2"))
	}
	if err := d.PrintTicket(context.Background(), "kiosk-2", tk, queue.Position{Ticket: tk}); !errors.Is(err, devices.ErrNoPrinter) {
		t.Fatalf("print error %v, want ErrNoPrinter", err)
	}
	evs, err := eng.Events(context.Background(), "hospital", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 {
		t.Errorf("events %+v, want only ISSUED", evs)
	}
}

// TestReprint prints a ticket again by number, marked as a reprint.
func TestReprint(t *testing.T) {
	eng, _ := newEngine(t)
	issue(t, eng, "A", 2)
	d, fake := newPrinting(t, eng)
	if err := d.Reprint(context.Background(), "hospital", "A002", "hall-printer"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	jobs, err := fake.WaitJobs(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	ticketGolden(t, "reprint_80_zh", jobs[0])
	if err := d.Reprint(context.Background(), "hospital", "A009", "hall-printer"); !errors.Is(err, queue.ErrNotFound) {
		t.Errorf("reprint of an unknown number: %v, want ErrNotFound", err)
	}
	if err := d.Reprint(context.Background(), "hospital", "A001", "nope"); !errors.Is(err, devices.ErrNoPrinter) {
		t.Errorf("reprint on an unknown printer: %v, want ErrNoPrinter", err)
	}
	// No printer named: the printer of the kiosk that issued it.
	if err := d.Reprint(context.Background(), "hospital", "A001", ""); err != nil {
		t.Fatalf("reprint on the issuing kiosk's printer: %v", err)
	}
	if jobs, err := fake.WaitJobs(ctx, 2); err != nil || len(jobs) != 2 {
		t.Fatalf("jobs after reprint on the kiosk's printer: %d, %v", len(jobs), err)
	}
	other, err := eng.Issue(context.Background(), queue.IssueRequest{Request: queue.Request{Site: "hospital", Device: "kiosk-2"}, Service: "A"})
	if err != nil {
		t.Fatal(err)
	}
	err = d.Reprint(context.Background(), "hospital", other.Number, "")
	if !errors.Is(err, devices.ErrNoPrinter) {
		t.Errorf("reprint of a ticket from a kiosk without printer: %v, want ErrNoPrinter", err)
	}
	// The console shows this text on its status line: short and plain.
	if want := "kiosk-2 has no printer: add a printer id"; err == nil || err.Error() != want {
		t.Errorf("reprint without printer says %q, want %q", err, want)
	}
}

// TestPrinterPoll: a polled printer shows paper out in Status before any
// kiosk prints, and ok again once the paper is back.
func TestPrinterPoll(t *testing.T) {
	eng, _ := newEngine(t)
	fake := escpostest.NewPrinter()
	t.Cleanup(func() { fake.Close() })
	fake.SetState(escpostest.State{Paper: escpostest.PaperOut})
	o := escpos.DefaultOpts()
	o.Addr = fake.Addr()
	d := newDispatcher(t, eng, devices.Opts{
		PrinterPoll: 10 * time.Millisecond,
		Printers:    []devices.Printer{{ID: "p1", Printer: escpos.NewPrinter(o), Layout: kioskLayout()}},
	})
	if got := d.Status().Printers[0].Status; got != "unknown" {
		t.Errorf("status before any poll %q, want unknown", got)
	}
	run(t, d)
	poll.Until(t, "paper_out", func() bool { return d.Status().Printers[0].Status == "paper_out" })
	fake.SetState(escpostest.State{})
	poll.Until(t, "ok", func() bool { return d.Status().Printers[0].Status == "ok" })
	if len(fake.Jobs()) != 0 {
		t.Errorf("polling printed something: %q", fake.Jobs())
	}
}

// TestPrintErrorReason: each fault a printer reports has its wording, also
// wrapped; any other error is "printer error".
func TestPrintErrorReason(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{escpos.ErrPaperOut, "paper out"},
		{escpos.ErrCoverOpen, "cover open"},
		{escpos.ErrOffline, "printer offline"},
		{errors.Join(errors.New("print: status"), escpos.ErrNoAnswer), "no answer from printer"},
		{errors.New("escpos: bad layout"), "printer error"},
	} {
		e := &devices.PrintError{Printer: "hall-1", Number: "A001", Err: tt.err}
		if got := e.Reason(); got != tt.want {
			t.Errorf("Reason of %v = %q, want %q", tt.err, got, tt.want)
		}
	}
}
