package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices/escpos"
	"github.com/nowserving/nowserving/devices/escpos/escpostest"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/web"
)

const printYAML = clinicYAML + `
printers:
  - { id: hall-printer, addr: %q, paper_mm: 58 }
devices:
  - { id: button-1, role: kiosk, site: clinic, printer: hall-printer, secret: "test-button-1-secret-0123" }
`

// TestButtonKioskPrints: a kiosk with only a button takes tickets through
// the real daemon; they print on its network printer (a fake 9100 printer
// answering status queries as a real one does) before it is answered; out
// of paper, the kiosk gets its ticket flagged not printed, and its retry
// with the same key prints it once paper is back.
func TestButtonKioskPrints(t *testing.T) {
	printer := escpostest.NewPrinter()
	t.Cleanup(func() { printer.Close() }) // after the daemon stops
	d := runDaemon(t, testConfig(t, printYAML, nil, printer.Addr()))
	ctx := t.Context()

	kiosk, err := client.Dial(ctx, d.protocolAddr.String(), client.Opts{
		DeviceID: "button-1", Secret: []byte("test-button-1-secret-0123"), Role: wire.RoleKiosk, Retries: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer kiosk.Close()

	tk, err := kiosk.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{})
	if err != nil {
		t.Fatalf("take ticket with paper: %v", err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	jobs, err := printer.WaitJobs(wctx, 1)
	if err != nil {
		t.Fatalf("printer got no job: %v", err)
	}
	dump := escpos.Dump(jobs[0])
	for _, want := range []string{"ESC @", `"A001"`, "GS V"} {
		if !strings.Contains(dump, want) {
			t.Errorf("printed ticket %s lacks %s:\n%s", tk.Number, want, dump)
		}
	}

	// Paper out: the ticket is issued all the same and the kiosk learns
	// its number, flagged not printed (PROTOCOL.md TICKET tag 17).
	printer.SetState(escpostest.State{Paper: escpostest.PaperOut})
	o := client.TicketOpts{IdemKey: "button-1-0002"}
	lost, err := kiosk.TakeTicket(ctx, "A", wire.ClassNormal, o)
	if err != nil || !lost.NotPrinted || lost.PrintError != "paper out" || lost.Number != "A002" {
		t.Fatalf("paper out: got %+v, %v; want A002 not printed, \"paper out\"", lost, err)
	}
	if n := len(printer.Jobs()); n != 1 {
		t.Errorf("%d jobs printed, want 1: nothing may print without paper", n)
	}
	// Paper back: the retry with the same key gets the same ticket, printed.
	printer.SetState(escpostest.State{})
	again, err := kiosk.TakeTicket(ctx, "A", wire.ClassNormal, o)
	if err != nil || again.NotPrinted || again.Number != lost.Number {
		t.Fatalf("retry after paper: got %+v, %v; want %s printed", again, err, lost.Number)
	}
	if _, err := printer.WaitJobs(wctx, 2); err != nil {
		t.Errorf("the retry did not print: %v", err)
	}
}

const apiYAML = clinicYAML + `
http:
  public_url: "http://queue.example.org"
  tokens:
    - { name: his, token_env: TEST_HIS_TOKEN, sites: [clinic] }
`

// TestServeAPIToken: a token from the config (read from the environment)
// opens the HTTP API; a request without it is refused.
func TestServeAPIToken(t *testing.T) {
	cfg := testConfig(t, apiYAML, map[string]string{"TEST_HIS_TOKEN": "his-secret-token-0123456789"})
	cfg.Listen.HTTP = "127.0.0.1:0"
	d := runDaemon(t, cfg)
	url := "http://" + d.httpAddr.String() + "/api/v1/sites/clinic/tickets"
	post := func(token string) *http.Response {
		req, err := http.NewRequest("POST", url, strings.NewReader(`{"service":"A"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "his-1")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := post(""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without a token: %s, want 401", resp.Status)
	}
	resp := post("his-secret-token-0123456789")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		t.Fatalf("with the token: %s %s", resp.Status, body)
	}
	if !strings.Contains(string(body), `"A001"`) {
		t.Errorf("answer lacks the ticket number: %s", body)
	}
}

// TestKioskPagePrints: a browser kiosk page, provisioned as a kiosk device
// that has a network printer, takes a ticket through the real daemon's
// HTTP and the ticket prints there before the page is answered "printed";
// out of paper, the page is answered with the same engine ticket flagged
// not printed (it shows it on screen with its QR code instead).
func TestKioskPagePrints(t *testing.T) {
	printer := escpostest.NewPrinter()
	t.Cleanup(func() { printer.Close() }) // after the daemon stops
	cfg := testConfig(t, printYAML, nil, printer.Addr())
	cfg.Listen.HTTP, cfg.HTTP.PublicURL = "127.0.0.1:0", "http://queue.example.org"
	d := runDaemon(t, cfg)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	base := "http://" + d.httpAddr.String() + "/kiosk/clinic/api/"
	post := func(path, body string) (int, string) {
		req, err := http.NewRequest("POST", base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Kiosk", "1")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("provision", `{"device":"button-1","secret":"test-button-1-secret-0123"}`); code != http.StatusOK {
		t.Fatalf("provision: %d %s", code, body)
	}
	take := func(key string) web.KioskTicket {
		code, body := post("tickets?device=button-1", `{"service":"A","key":"`+key+`"}`)
		var tk web.KioskTicket
		if err := json.Unmarshal([]byte(body), &tk); code != http.StatusCreated || err != nil {
			t.Fatalf("ticket %s: %d %s (%v)", key, code, body, err)
		}
		return tk
	}
	tk := take("page-000001")
	if tk.Ticket.Number != "A001" || !tk.Printed {
		t.Fatalf("with paper: %+v, want A001 printed", tk)
	}
	// The job was on the printer before the page was answered: its bytes
	// came before the status asked after them. (The fake counts a job
	// when its connection closes, which may come after the answer.)
	if !strings.Contains(escpos.Dump(printer.Received()), `"A001"`) {
		t.Fatal("the page was answered printed before A001's job reached the printer")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if jobs, err := printer.WaitJobs(ctx, 1); err != nil || len(jobs) != 1 {
		t.Fatalf("printer holds %d jobs (%v), want the one of A001", len(jobs), err)
	}
	printer.SetState(escpostest.State{Paper: escpostest.PaperOut})
	lost := take("page-000002")
	if lost.Ticket.Number != "A002" || lost.Printed || lost.PrintErr == "" || lost.StatusURL == "" {
		t.Fatalf("paper out: %+v, want A002 not printed, with its status page", lost)
	}
	if n := len(printer.Jobs()); n != 1 {
		t.Errorf("%d jobs printed, want 1: nothing may print without paper", n)
	}
}
