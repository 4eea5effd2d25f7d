package escpos_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices/escpos"
	"github.com/nowserving/nowserving/devices/escpos/escpostest"
	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
)

func newFake(t *testing.T) *escpostest.Printer {
	t.Helper()
	f := escpostest.NewPrinter()
	t.Cleanup(func() { f.Close() })
	return f
}

func testOpts(addr string) escpos.Opts {
	o := escpos.DefaultOpts()
	o.Addr = addr
	o.StatusTimeout = 200 * time.Millisecond
	return o
}

func golden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".bin"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPrintHappyPath(t *testing.T) {
	for _, name := range []string{"ticket_58_native_en", "ticket_80_native_zh", "ticket_80_raster_en"} {
		t.Run(name, func(t *testing.T) {
			f := newFake(t)
			want := golden(t, name)
			p := escpos.NewPrinter(testOpts(f.Addr()))
			if err := p.Print(context.Background(), want); err != nil {
				t.Fatalf("Print: %v", err)
			}
			jobs, err := f.WaitJobs(ctxTimeout(t, 5*time.Second), 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != 1 || !bytes.Equal(jobs[0], want) {
				t.Errorf("printer got %d jobs; job bytes differ from golden %s", len(jobs), name)
			}
			// DLE EOT 1 and 4 before the ticket and again after it.
			if got := f.Queries(); !bytes.Equal(got, []byte{1, 4, 1, 4}) {
				t.Errorf("status queries = %v, want [1 4 1 4]", got)
			}
		})
	}
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestPrintStatusBytesInsideData sends a raster image whose data contains
// the bytes of DLE EOT 1: they are image data, not a status request.
func TestPrintStatusBytesInsideData(t *testing.T) {
	f := newFake(t)
	img := []byte{0x1D, 'v', '0', 0, 3, 0, 2, 0, 0x10, 0x04, 0x01, 0x10, 0x04, 0x04}
	ticket := append(append([]byte{0x1B, '@'}, img...), 0x1D, 'V', 66, 0)
	p := escpos.NewPrinter(testOpts(f.Addr()))
	if err := p.Print(context.Background(), ticket); err != nil {
		t.Fatalf("Print: %v", err)
	}
	if got := f.Received(); !bytes.Equal(got, ticket) {
		t.Errorf("received % X, want % X", got, ticket)
	}
}

func TestPrintRefused(t *testing.T) {
	tests := []struct {
		name    string
		state   escpostest.State
		want    error
		queries []byte
	}{
		{"paper out", escpostest.State{Paper: escpostest.PaperOut}, escpos.ErrPaperOut, []byte{1, 2, 4}},
		{"cover open", escpostest.State{CoverOpen: true}, escpos.ErrCoverOpen, []byte{1, 2, 4}},
		{"cover open and paper out", escpostest.State{CoverOpen: true, Paper: escpostest.PaperOut}, escpos.ErrPaperOut, []byte{1, 2, 4}},
		{"silent", escpostest.State{Silent: true}, escpos.ErrNoAnswer, []byte{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			f.SetState(tt.state)
			p := escpos.NewPrinter(testOpts(f.Addr()))
			err := p.Print(context.Background(), golden(t, "ticket_58_native_en"))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Print error = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), f.Addr()) {
				t.Errorf("error %q does not name the printer", err)
			}
			f.Close() // wait for the connection to be fully handled
			if got := f.Received(); len(got) != 0 {
				t.Errorf("printer received %d bytes, want nothing printed", len(got))
			}
			if got := f.Queries(); !bytes.Equal(got, tt.queries) {
				t.Errorf("queries = %v, want %v", got, tt.queries)
			}
		})
	}
}

func TestPrintPaperRunsOutDuringTicket(t *testing.T) {
	f := newFake(t)
	f.SetState(escpostest.State{PaperLeft: 100})
	p := escpos.NewPrinter(testOpts(f.Addr()))
	err := p.Print(context.Background(), golden(t, "ticket_80_raster_en"))
	if !errors.Is(err, escpos.ErrPaperOut) {
		t.Fatalf("Print error = %v, want ErrPaperOut", err)
	}
	if !strings.Contains(err.Error(), "after ticket") {
		t.Errorf("error %q does not say the paper ran out after the ticket", err)
	}
}

func TestPrintPaperNearEndWarns(t *testing.T) {
	f := newFake(t)
	f.SetState(escpostest.State{Paper: escpostest.PaperNearEnd})
	var logs bytes.Buffer
	o := testOpts(f.Addr())
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	p := escpos.NewPrinter(o)
	if err := p.Print(context.Background(), golden(t, "ticket_58_native_en")); err != nil {
		t.Fatalf("Print: %v", err)
	}
	if !strings.Contains(logs.String(), "paper near end") {
		t.Errorf("no near-end warning logged: %q", logs.String())
	}
}

func TestPrintSilentTimesOut(t *testing.T) {
	f := newFake(t)
	f.SetState(escpostest.State{Silent: true})
	o := testOpts(f.Addr())
	o.StatusTimeout = 50 * time.Millisecond
	p := escpos.NewPrinter(o)
	done := make(chan error, 1)
	go func() { done <- p.Print(context.Background(), []byte("x")) }()
	wantPrintErr(t, done, escpos.ErrNoAnswer, "Print did not give up on a silent printer")
}

func TestPrintContextCancel(t *testing.T) {
	f := newFake(t)
	f.SetState(escpostest.State{Silent: true})
	o := testOpts(f.Addr())
	o.StatusTimeout = time.Hour
	p := escpos.NewPrinter(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Print(ctx, []byte("x")) }()
	// Cancel once the printer has seen the first status request.
	poll.Until(t, "the first status request", func() bool { return len(f.Queries()) > 0 })
	cancel()
	wantPrintErr(t, done, context.Canceled, "Print ignored the cancelled context")
	// Cancelled before starting: nothing is dialled.
	if err := p.Print(ctx, []byte("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Print with cancelled ctx = %v", err)
	}
}

func TestPrintUnreachable(t *testing.T) {
	f := escpostest.NewPrinter()
	addr := f.Addr()
	f.Close()
	p := escpos.NewPrinter(testOpts(addr))
	if err := p.Print(context.Background(), []byte("x")); !errors.Is(err, escpos.ErrNoAnswer) {
		t.Errorf("Print to closed port = %v, want ErrNoAnswer", err)
	}
}

func TestStatus(t *testing.T) {
	tests := []struct {
		name  string
		state escpostest.State
		want  escpos.Status
		err   error
	}{
		{"ok", escpostest.State{}, escpos.Status{Raw: [3]byte{0x12, 0, 0x12}}, nil},
		{"near end", escpostest.State{Paper: escpostest.PaperNearEnd},
			escpos.Status{PaperNearEnd: true, Raw: [3]byte{0x12, 0, 0x1E}}, nil},
		{"paper out", escpostest.State{Paper: escpostest.PaperOut},
			escpos.Status{Offline: true, PaperEndStop: true, PaperNearEnd: true, PaperOut: true, Raw: [3]byte{0x1A, 0x32, 0x7E}}, escpos.ErrPaperOut},
		{"cover open", escpostest.State{CoverOpen: true},
			escpos.Status{Offline: true, CoverOpen: true, Raw: [3]byte{0x1A, 0x16, 0x12}}, escpos.ErrCoverOpen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			f.SetState(tt.state)
			got, err := escpos.NewPrinter(testOpts(f.Addr())).Status(context.Background())
			if err != nil {
				t.Fatalf("Status: %v", err)
			}
			if got != tt.want {
				t.Errorf("Status = %+v, want %+v", got, tt.want)
			}
			if !errors.Is(got.Err(), tt.err) || (tt.err == nil && got.Err() != nil) {
				t.Errorf("Status.Err = %v, want %v", got.Err(), tt.err)
			}
			if len(f.Jobs()) != 0 {
				t.Errorf("Status printed something")
			}
		})
	}
}

func TestDecodeStatusOffline(t *testing.T) {
	s := escpos.DecodeStatus(0x1A, 0x12, 0x12) // offline for no listed cause
	if !errors.Is(s.Err(), escpos.ErrOffline) {
		t.Errorf("Err = %v, want ErrOffline", s.Err())
	}
	if !escpos.IsStatusByte(0x12) || escpos.IsStatusByte(0x13) || escpos.IsStatusByte(0x11) {
		t.Errorf("IsStatusByte does not check the fixed bits")
	}
}

func TestNewPrinterDefaultPort(t *testing.T) {
	if got := escpos.NewPrinter(escpos.Opts{Addr: "192.0.2.7"}).Addr(); got != "192.0.2.7:9100" {
		t.Errorf("Addr = %q, want port 9100 added", got)
	}
}

// TestStatusSkipsFlowControl: a printer with XON/XOFF flow control may send
// 0x11 / 0x13 between status replies; they are not status bytes.
func TestStatusSkipsFlowControl(t *testing.T) {
	srv := conntest.Listen(t)
	srv.Serve(func(c net.Conn) {
		q := make([]byte, 3)
		for _, reply := range [][]byte{{0x13, 0x11, 0x12}, {0x13, 0x1E}} {
			if _, err := io.ReadFull(c, q); err != nil {
				return
			}
			c.Write(reply)
		}
	})
	st, err := escpos.NewPrinter(testOpts(srv.Addr())).Status(context.Background())
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if st.Offline || !st.PaperNearEnd || st.PaperOut {
		t.Errorf("Status = %+v, want online with paper near end", st)
	}
}

// wantPrintErr waits (see poll.Recv) for the error of a Print running in
// the background and fails unless it is want; stuck says what a Print that
// never returns did wrong.
func wantPrintErr(t *testing.T, done <-chan error, want error, stuck string) {
	t.Helper()
	if err, _ := poll.Recv(t, done, "Print to return: "+stuck); !errors.Is(err, want) {
		t.Fatalf("Print error = %v, want %v", err, want)
	}
}
