package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

// apptListenYAML is clinicYAML with dr-a's slots open today and
// tomorrow, an API token and a kiosk; the test gives the appointments API
// a listener of its own.
const apptListenYAML = clinicYAML + `    resources:
      - id: dr-a
        service: A
        schedule: { open: "00:00", close: "23:45", slot: 15m, days_ahead: 1, opens_at: "00:00" }
http:
  tokens:
    - { name: his, token: "test-his-token-0123", sites: [clinic] }
devices:
  - { id: kiosk-1, role: kiosk, site: clinic, secret: "test-kiosk-1-secret-0123" }
`

// TestAppointmentsListenerSaturated: with listen.appointments, a booking
// is made there, and the main listener answers the appointments API 421
// naming it; then with every place of the appointments listener held by
// hung requests (headers begun, never finished) and more waiting in the
// backlog, a kiosk at the site still takes its ticket over the protocol,
// the listener saturated before and after.
func TestAppointmentsListenerSaturated(t *testing.T) {
	const places = 2
	cfg := testConfig(t, apptListenYAML, nil)
	cfg.Listen.HTTP, cfg.Listen.Appointments, cfg.Listen.AppointmentsMaxConnections = "127.0.0.1:0", "127.0.0.1:0", places
	d := runDaemon(t, cfg)
	appts, base := d.appointmentsAddr.String(), "http://"+d.httpAddr.String()
	bookFirstFree(t, "http://"+appts)
	http.DefaultClient.CloseIdleConnections() // its connection would hold a place

	req, _ := http.NewRequest("GET", base+"/api/v1/sites/clinic/slots?resource=dr-a", nil)
	req.Header.Set("Authorization", "Bearer test-his-token-0123")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var p struct{ Code, Detail string }
	json.NewDecoder(resp.Body).Decode(&p)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest || p.Code != "misdirected" || !strings.Contains(p.Detail, appts) {
		t.Errorf("a slot list on the main listener: %d %+v, want 421 misdirected naming %s", resp.StatusCode, p, appts)
	}

	for range places + 8 {
		c, err := net.Dial("tcp", appts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "GET /api/v1/sites/clinic/slots?resource=dr-a HTTP/1.1\r\nHost: x\r\n") // and never the end
	}
	saturated := func() bool { return appointmentConns(t, base) == places }
	poll.Until(t, "every place of the appointments listener held", saturated)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kiosk, err := client.Dial(ctx, d.protocolAddr.String(), client.Opts{DeviceID: "kiosk-1", Secret: []byte("test-kiosk-1-secret-0123"), Role: wire.RoleKiosk})
	if err != nil {
		t.Fatal(err)
	}
	defer kiosk.Close()
	if _, err := kiosk.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{}); err != nil {
		t.Errorf("a kiosk ticket while the appointments listener is saturated: %v", err)
	}
	if !saturated() {
		t.Errorf("the appointments listener serves %d connections after the ticket, want all %d places still held", appointmentConns(t, base), places)
	}
}

// appointmentConns reads nowserving_http_appointment_connections from the
// daemon's /metrics at base.
func appointmentConns(t *testing.T, base string) int {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "nowserving_http_appointment_connections %d", &n); err == nil {
			io.Copy(io.Discard, resp.Body)
			return n
		}
	}
	t.Fatal("no nowserving_http_appointment_connections in /metrics")
	return 0
}

// TestScaleConfigAppointments: bench book's scale mode writes
// listen.appointments (--config-appointments, default 127.0.0.1:7483),
// and none with --config-appointments "", for a daemon without the key.
func TestScaleConfigAppointments(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{{nil, "127.0.0.1:7483"}, {[]string{"--config-appointments", ""}, ""}} {
		c := scaleConfig(t, append([]string{"--resources", "10", "--days", "1"}, tt.args...)...)
		if c.Listen.Appointments != tt.want {
			t.Errorf("bench book %v: listen.appointments %q, want %q", tt.args, c.Listen.Appointments, tt.want)
		}
	}
}
