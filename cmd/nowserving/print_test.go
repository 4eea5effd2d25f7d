package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices/escpos"
	"github.com/nowserving/nowserving/devices/escpos/escpostest"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

const printYAML = `
store: { driver: sqlite, dsn: %q }
listen: { protocol: "127.0.0.1:0", http: "" }
sites:
  - id: clinic
    timezone: UTC
    services:
      - { code: A, name: { en: General } }
    counters:
      - { id: "1", services: [A] }
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

const apiYAML = `
store: { driver: sqlite, dsn: %q }
listen: { protocol: "127.0.0.1:0", http: "127.0.0.1:0" }
http:
  public_url: "http://queue.example.org"
  tokens:
    - { name: his, token_env: TEST_HIS_TOKEN, sites: [clinic] }
sites:
  - id: clinic
    timezone: UTC
    services:
      - { code: A, name: { en: General } }
    counters:
      - { id: "1", services: [A] }
`

// TestServeAPIToken: a token from the config (read from the environment)
// opens the HTTP API; a request without it is refused.
func TestServeAPIToken(t *testing.T) {
	d := runDaemon(t, testConfig(t, apiYAML, map[string]string{"TEST_HIS_TOKEN": "his-secret-token-0123456789"}))
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
