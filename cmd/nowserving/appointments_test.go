package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/notify"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

// appointmentsYAML is clinicYAML with one bookable doctor whose 15-minute
// slots cover the whole day (today's and tomorrow's are open), an on-time
// window as wide as the config allows (so the first free slot can be
// checked in now), an API token and a webhook (its URL the second verb)
// taking the booking events (notify's default). The test opens
// listen.http.
const appointmentsYAML = clinicYAML + `    resources:
      - id: dr-a
        name: { en: "Dr A" }
        service: A
        schedule: { open: "00:00", close: "23:45", slot: 15m, days_ahead: 1, opens_at: "00:00" }
    appointments: { check_in_early: 24h, check_in_late: 10m }
http:
  tokens:
    - { name: his, token: "test-his-token-0123", sites: [clinic] }
notify:
  poll: 50ms
  backoff: { min: 50ms, max: 200ms }
  webhooks:
    - { name: his, url: %q, secret: "hook-secret-0123456789" }
devices:
  - { id: kiosk-1, role: kiosk, site: clinic, secret: "test-kiosk-1-secret-0123" }
  - { id: keypad-1, role: keypad, site: clinic, counter: "1", secret: "test-keypad-1-secret-0123" }
`

// hookDelivery is one request the webhook receiver got.
type hookDelivery struct {
	id, typ string
	status  int // what the receiver answered
}

// TestAppointmentEndToEnd: a booking over HTTP, its check-in at a kiosk
// over the protocol, the appointment ticket called before the normal one
// taken earlier, and the webhook getting BOOKING_BOOKED and
// BOOKING_CHECKED_IN once each — BOOKED again only after its first
// delivery failed, with the same event id. The database then passes check.
func TestAppointmentEndToEnd(t *testing.T) {
	var mu sync.Mutex
	var got []hookDelivery
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !notify.Verify([]byte("hook-secret-0123456789"), body, r.Header.Get(notify.HeaderSignature)) {
			t.Errorf("bad signature on %s", body)
		}
		d := hookDelivery{id: r.Header.Get(notify.HeaderEventID), typ: r.Header.Get(notify.HeaderEventType), status: http.StatusOK}
		mu.Lock()
		if len(got) == 0 {
			d.status = http.StatusServiceUnavailable // the first delivery fails
		}
		got = append(got, d)
		mu.Unlock()
		w.WriteHeader(d.status)
	}))
	defer hook.Close()
	cfg := testConfig(t, appointmentsYAML, nil, hook.URL+"/in")
	cfg.Listen.HTTP = "127.0.0.1:0"
	d := runDaemon(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dial := func(id, secret string, role wire.Role) *client.Client {
		c, err := client.Dial(ctx, d.protocolAddr.String(), client.Opts{DeviceID: id, Secret: []byte(secret), Role: role})
		if err != nil {
			t.Fatalf("dial %s: %v", id, err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	kiosk := dial("kiosk-1", "test-kiosk-1-secret-0123", wire.RoleKiosk)
	keypad := dial("keypad-1", "test-keypad-1-secret-0123", wire.RoleKeypad)
	normal, err := kiosk.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{})
	if err != nil {
		t.Fatal(err)
	}

	code := bookFirstFree(t, "http://"+d.httpAddr.String())
	ci, err := kiosk.CheckIn(ctx, code, client.TicketOpts{})
	if err != nil {
		t.Fatalf("check in %s: %v", code, err)
	}
	if ci.Class != wire.ClassAppointment || ci.AppointmentMS == 0 {
		t.Errorf("checked-in ticket %s: class %v, appointment %d; want an appointment ticket with its time", ci.Number, ci.Class, ci.AppointmentMS)
	}
	called, err := keypad.CallNext(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if called.Number != ci.Number {
		t.Errorf("call next called %s, want the appointment %s before the normal %s taken earlier", called.Number, ci.Number, normal.Number)
	}

	poll.Until(t, "BOOKING_BOOKED delivered again and BOOKING_CHECKED_IN", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= 3
	})
	// A duplicate could only come from a message still in the outbox:
	// once none is pending (each delivery recorded), none can come.
	var status string
	if !poll.Within(10*time.Second, 50*time.Millisecond, func() bool {
		status, err = runCmd(t, "notify", "status", "--db", cfg.Store.DSN)
		return err == nil && strings.HasPrefix(status, "outbox: 0 pending, 0 dead")
	}) {
		t.Fatalf("notify status: %v, want an empty outbox: %s", err, status)
	}
	mu.Lock()
	defer mu.Unlock()
	// Per event, in the order of its deliveries. The worker may send the
	// check-in before the booking: the first delivery, whichever it is,
	// fails and comes again with its event id; the other comes once.
	byType := map[string][]hookDelivery{}
	for _, g := range got {
		byType[g.typ] = append(byType[g.typ], g)
	}
	failed, other := "BOOKING_BOOKED", "BOOKING_CHECKED_IN"
	if len(got) > 0 && got[0].typ == other {
		failed, other = other, failed
	}
	f, o := byType[failed], byType[other]
	if len(got) != 3 || len(f) != 2 || len(o) != 1 ||
		f[0].status != http.StatusServiceUnavailable || f[1].status != http.StatusOK || f[0].id != f[1].id ||
		f[0].id == "" || o[0].status != http.StatusOK || o[0].id == f[0].id {
		t.Errorf("webhook deliveries %v: want BOOKING_BOOKED and BOOKING_CHECKED_IN delivered once each, the first failed and sent again with the same event id", got)
	}
	if out, err := runCmd(t, "check", "--db", cfg.Store.DSN); err != nil || !strings.Contains(out, "all invariants hold") {
		t.Errorf("check: %v\n%s", err, out)
	}
}

// bookFirstFree books, over the HTTP API, the first free slot of dr-a that
// starts after now (today's, or tomorrow's late in the day) and returns the
// booking's code.
func bookFirstFree(t *testing.T, base string) string {
	t.Helper()
	do := func(method, path string, body any, h map[string]string, out any) int {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		req.Header.Set("Authorization", "Bearer test-his-token-0123")
		req.Header.Set("Content-Type", "application/json")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, path, resp.StatusCode, b, err)
		}
		return resp.StatusCode
	}
	// The daemon makes the slots after it starts.
	var slot int64
	poll.Until(t, "a free slot of dr-a", func() bool { slot = firstFree(t, do); return slot != 0 })
	var b struct {
		Code   string `json:"code"`
		Status string `json:"status"`
	}
	if code := do("POST", "/api/v1/sites/clinic/appointments", map[string]any{"slot": slot, "patient": "patient-7"},
		map[string]string{"Idempotency-Key": "book-1"}, &b); code != http.StatusCreated || b.Code == "" || b.Status != "BOOKED" {
		t.Fatalf("book slot %d: %d %+v", slot, code, b)
	}
	return b.Code
}

// firstFree is the id of the first free slot of dr-a starting after now,
// today's or tomorrow's; 0 when there is none.
func firstFree(t *testing.T, do func(method, path string, body any, h map[string]string, out any) int) int64 {
	t.Helper()
	now := time.Now().UTC()
	for _, day := range []time.Time{now, now.AddDate(0, 0, 1)} {
		var list struct {
			Slots []struct {
				ID    int64     `json:"id"`
				Start time.Time `json:"start"`
				Free  int       `json:"free"`
			} `json:"slots"`
		}
		if code := do("GET", "/api/v1/sites/clinic/slots?resource=dr-a&date="+day.Format(time.DateOnly), nil, nil, &list); code != http.StatusOK {
			t.Fatalf("slots of %s: %d", day.Format(time.DateOnly), code)
		}
		for _, s := range list.Slots {
			if s.Free > 0 && s.Start.After(time.Now().Add(time.Minute)) {
				return s.ID
			}
		}
	}
	return 0
}
