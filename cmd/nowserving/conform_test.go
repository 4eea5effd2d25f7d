package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/conform"
	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/protocol/protocoltest"
)

// TestConformDaemon runs `conform daemon` against a daemon on loopback:
// every check passes (or is skipped for want of a role) and the exit is 0.
func TestConformDaemon(t *testing.T) {
	d := protocoltest.StartHQ(t, 300*time.Millisecond)
	out, err := runCmd(t, "conform", "daemon", "--addr", d.Addr, "--device", "kiosk-1", "--secret", "kiosk-1-secret-0123456789")
	if err != nil || !strings.Contains(out, " 0 failed") || !strings.Contains(out, "\n4. Session\n") {
		t.Errorf("conform daemon: %v\n%s", err, out)
	}
	out, err = runCmd(t, "conform", "daemon", "--addr", d.Addr, "--device", "kiosk-1")
	if err == nil || !strings.Contains(err.Error(), "one --secret") {
		t.Errorf("conform daemon without --secret: %v\n%s", err, out)
	}
	if _, err := runCmd(t, "conform", "kiosk", "--listen", "127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "--secret is required") {
		t.Errorf("conform kiosk without --secret: %v", err)
	}
	if _, err := runCmd(t, "conform", "kiosk", "--listen", "127.0.0.1:0", "--secret", "s", "--tls-cert", "c.pem"); err == nil || !strings.Contains(err.Error(), "both --tls-cert and --tls-key") {
		t.Errorf("conform kiosk with a certificate and no key: %v", err)
	}
	if _, err := runCmd(t, "conform", "kiosk", "--listen", "127.0.0.1:0", "--secret", "s", "--tls-cert", "missing.pem", "--tls-key", "missing.pem"); err == nil || !strings.Contains(err.Error(), "TLS key pair") {
		t.Errorf("conform kiosk with a missing certificate: %v", err)
	}
}

// TestConformAPI runs `conform api` against the demo appointments daemon
// (every check passes, the webhook included), then against the same
// daemon behind a proxy that breaks two promises of openapi.yaml: a
// reused Idempotency-Key answered 409 slot_full, and a replay answered
// 201 as if new. Those checks fail, under their operation.
func TestConformAPI(t *testing.T) {
	hook := conntest.Listener(t)
	cfg := testConfig(t, appointmentsYAML, nil, "http://"+hook.Addr().String()+"/in")
	cfg.Listen.HTTP = "127.0.0.1:0"
	d := runDaemon(t, cfg)
	base := "http://" + d.httpAddr.String()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := conform.APIOpts{URL: base, Token: "test-his-token-0123", Site: "clinic", Resource: "dr-a",
		Webhook: hook, WebhookSecret: []byte("hook-secret-0123456789")}
	// The daemon makes the slots after it starts.
	poll.Until(t, "slots of dr-a", func() bool {
		req, _ := http.NewRequest("GET", base+"/api/v1/sites/clinic/slots?resource=dr-a&date="+time.Now().AddDate(0, 0, 1).UTC().Format(time.DateOnly), nil)
		req.Header.Set("Authorization", "Bearer test-his-token-0123")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return bytes.Contains(b, []byte(`"free":1`))
	})
	rep, err := conform.API(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if f := rep.Failures(); f != "" {
		var b strings.Builder
		rep.WriteTo(&b)
		t.Errorf("the demo daemon fails conform api:\n%s\n%s", f, b.String())
	}

	out, err := runCmd(t, "conform", "api", "--url", base, "--token", "test-his-token-0123", "--site", "clinic", "--resource", "dr-a")
	if err != nil || !strings.Contains(out, " 0 failed") || !strings.Contains(out, "\nPOST /api/v1/sites/{site}/appointments\n") {
		t.Errorf("conform api: %v\n%s", err, out)
	}

	target, _ := url.Parse(base)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusUnprocessableEntity && bytes.Contains(body, []byte("idempotency_key_reused")):
			resp.StatusCode = http.StatusConflict
			body = []byte(`{"type":"urn:nowserving:problem:slot_full","title":"slot full","status":409,"code":"slot_full"}`)
		case resp.StatusCode == http.StatusOK && resp.Request.Method == "POST" && strings.HasSuffix(resp.Request.URL.Path, "/appointments"):
			resp.StatusCode = http.StatusCreated
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	broken := httptest.NewServer(proxy)
	defer broken.Close()
	o.URL, o.Webhook = broken.URL, nil
	rep, err = conform.API(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, r := range rep.Failed() {
		failed[r.Op+" | "+r.Name] = true
	}
	for _, want := range []string{
		"POST /api/v1/sites/{site}/appointments | the same key for another patient: 422 idempotency_key_reused",
		"POST /api/v1/sites/{site}/appointments | the key that filled the slot, for another patient: 422 idempotency_key_reused",
		"POST /api/v1/sites/{site}/appointments | the same Idempotency-Key again: 200 and the same booking",
	} {
		if !failed[want] {
			t.Errorf("the broken daemon passes %q; failures:\n%s", want, rep.Failures())
		}
	}
	if len(failed) != 3 {
		t.Errorf("the broken daemon fails %d checks, want the 3 it breaks:\n%s", len(failed), rep.Failures())
	}
}
