package devices_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices"
	"github.com/nowserving/nowserving/devices/escpos"
	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
	"github.com/nowserving/nowserving/web"
)

// TestNamesAgree runs a Chinese-first site (languages zh, en) and checks
// that the keypad, the hall display and the printed ticket show the same
// names, all picked by queue.Site.PickName: the counter's on the keypad's
// LCD and in the display's call list, the service's in the keypad's
// snapshot, on the display and on the ticket.
func TestNamesAgree(t *testing.T) {
	ctx := context.Background()
	site := testSite()
	site.Counters[1].Names = map[string]string{"en": "Window 5", "zh": "五号窗口"}
	st := storetest.SQLite(t)
	clk := storetest.FixedClock(time.Date(2026, 11, 30, 1, 30, 0, 0, time.UTC))
	eng := storetest.StartEngine(t, queue.Opts{Store: st, Sites: []queue.Site{site}, Clock: clk.Now})
	const wantCounter, wantService = "五号窗口", "初诊"

	// The keypad of counter 5.
	secret := []byte("keypad-5-secret-0123456789")
	srv, err := protocol.New(protocol.Opts{Engine: eng, RateLimit: -1,
		Devices: []protocol.Device{{ID: "keypad-5", Role: wire.RoleKeypad, Site: "hospital", Counter: "5", Secret: secret}}})
	if err != nil {
		t.Fatal(err)
	}
	ln := conntest.Listener(t)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	kp, err := client.Dial(ctx, ln.Addr().String(), client.Opts{DeviceID: "keypad-5", Secret: secret, Role: wire.RoleKeypad, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kp.Close() })
	tk := issue(t, eng, "A", 1)[0]
	if _, err := kp.CallNext(ctx, 0); err != nil {
		t.Fatal(err)
	}
	ok, err := kp.Pause(ctx, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(ok.LCD) == 0 || ok.LCD[0] != wantCounter {
		t.Errorf("keypad LCD %q, want the counter's name %q first", ok.LCD, wantCounter)
	}
	snap, err := kp.Snapshot(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Services[0].Name != wantService || snap.Counters[1].Name != wantCounter {
		t.Errorf("keypad snapshot names %q and %q, want %q and %q", snap.Services[0].Name, snap.Counters[1].Name, wantService, wantCounter)
	}

	// The hall display.
	ws, err := web.New(web.Opts{Engine: eng, Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(ws.Handler())
	t.Cleanup(hs.Close)
	t.Cleanup(func() { ws.Shutdown(context.Background()) })
	state := displayState(t, hs.URL+"/display/hospital/events")
	if state.Name != "市人民医院" || state.Services[0].Name != wantService || len(state.Calls) != 1 || state.Calls[0].CounterName != wantCounter {
		t.Errorf("display: site %q, service %q, calls %+v; want 市人民医院, %q and a call to %q", state.Name, state.Services[0].Name, state.Calls, wantService, wantCounter)
	}

	// The printed ticket.
	d := newDispatcher(t, eng, devices.Opts{})
	b, err := d.RenderTicket("hospital", tk, queue.Position{Ticket: tk}, "")
	if err != nil {
		t.Fatal(err)
	}
	if dump := escpos.Dump(b); !strings.Contains(dump, "市人民医院") || !strings.Contains(dump, wantService) {
		t.Errorf("ticket has not the site's and the service's Chinese names:\n%s", dump)
	}
}

// displayState reads the first "state" event of a hall display stream.
func displayState(t *testing.T, url string) web.DisplayState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok && event == "state" {
			var st web.DisplayState
			if err := json.Unmarshal([]byte(data), &st); err != nil {
				t.Fatal(err)
			}
			return st
		}
	}
	t.Fatalf("no state event: %v", sc.Err())
	return web.DisplayState{}
}
