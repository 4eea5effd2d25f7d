package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/notify"
)

// notifyYAML is serveYAML with receivers of ISSUED: a webhook (its URL
// the second verb) and a command writing into a folder (the third).
const notifyYAML = serveYAML + `
notify:
  events: [ISSUED]
  poll: 50ms
  backoff: { min: 50ms, max: 200ms }
  webhooks:
    - { name: his, url: %q, secret_env: TEST_HOOK_SECRET }
  commands:
    - { name: sms, run: 'cat > %s/"$NOWSERVING_EVENT_ID".json' }
`

// TestServeNotify: the daemon sends a ticket event configured as
// notifiable to a webhook (signed, retried after a failure with the same
// event id) and to a command, and /metrics shows it.
func TestServeNotify(t *testing.T) {
	const secret = "hook-secret-0123456789"
	var mu sync.Mutex
	var got []string // event id per request
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !notify.Verify([]byte(secret), body, r.Header.Get(notify.HeaderSignature)) {
			t.Errorf("bad signature on %s", body)
		}
		mu.Lock()
		got = append(got, r.Header.Get(notify.HeaderEventID))
		n := len(got)
		mu.Unlock()
		if n == 1 {
			http.Error(w, "not now", http.StatusServiceUnavailable)
		}
	}))
	defer hook.Close()
	out := t.TempDir()
	cfg := testConfig(t, notifyYAML, map[string]string{"TEST_HOOK_SECRET": secret}, hook.URL+"/in", out)
	cfg.Listen.HTTP = "127.0.0.1:0" // for /metrics
	d := runDaemon(t, cfg)
	tk := takeTicket(t, d.protocolAddr.String(), 1)

	poll.Until(t, "the webhook's second attempt", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= 2 })
	mu.Lock()
	if len(got) != 2 || got[0] != got[1] || got[0] == "" {
		t.Errorf("webhook got event ids %q, want one id twice", got)
	}
	id := got[0]
	mu.Unlock()
	var file string
	poll.Until(t, "the command's file", func() bool {
		file = filepath.Join(out, id+".json")
		b, err := os.ReadFile(file)
		return err == nil && json.Valid(b)
	})
	b, _ := os.ReadFile(file)
	var ev struct {
		ID, Type, Site, Number string
	}
	if err := json.Unmarshal(b, &ev); err != nil || ev.ID != id || ev.Type != "ISSUED" || ev.Site != "clinic" || ev.Number != tk.Number {
		t.Errorf("command got %s (%v), want ISSUED %s of clinic as %s", b, err, tk.Number, id)
	}
	metrics := func() string {
		resp, err := http.Get("http://" + d.httpAddr.String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	want := []string{
		`nowserving_notify_delivered_total{receiver="his"} 1`, `nowserving_notify_failures_total{receiver="his"} 1`,
		`nowserving_notify_delivered_total{receiver="sms"} 1`, `nowserving_notify_pending_messages 0`,
		`nowserving_notify_dead_messages 0`,
	}
	poll.Until(t, "the notify metrics", func() bool {
		m := metrics()
		for _, w := range want {
			if !strings.Contains(m, w) {
				return false
			}
		}
		return true
	})
}
