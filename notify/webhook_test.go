package notify_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/notify"
)

// TestSign: the signature is HMAC-SHA256 of the body, in hex, after
// "sha256=" (the vector: printf '{"id":"x"}' | openssl dgst -sha256 -hmac
// webhook-secret-0123).
func TestSign(t *testing.T) {
	secret, body := []byte("webhook-secret-0123"), []byte(`{"id":"x"}`)
	const want = "sha256=59327d822f00626a90a727b17ecef17917273e3e14a14b6c9329e2ae2b7ab6b3"
	got := notify.Sign(secret, body)
	if got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
	for _, sig := range []string{got, strings.ToUpper(got[:7]) + got[7:]} {
		if notify.Verify(secret, body, sig) != (sig == got) {
			t.Errorf("Verify(%s) = %v", sig, !(sig == got))
		}
	}
	for _, bad := range []string{"", "sha256=", "sha256=zz", "sha1=" + got[7:], got[:len(got)-1] + "0"} {
		if notify.Verify(secret, body, bad) {
			t.Errorf("Verify(%q) = true", bad)
		}
	}
	if notify.Verify([]byte("another-secret-0123"), body, got) {
		t.Error("Verify with another secret = true")
	}
}

// TestWebhookFailures: what a failed delivery says, without the address's
// query (it may hold a token).
func TestWebhookFailures(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		case "/full":
			http.Error(w, "disk full", http.StatusInsufficientStorage)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer srv.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	for _, tt := range []struct{ url, want string }{
		{srv.URL + "/ok?token=secret", ""},
		{srv.URL + "/moved?token=secret", `answered 302 Found, redirecting to "/elsewhere"`},
		{srv.URL + "/full?token=secret", `answered 507 Insufficient Storage: "disk full"`},
		{down.URL + "/hook?token=secret", "connection refused"},
	} {
		err := (&notify.Webhook{URL: tt.url, Secret: []byte("s")}).Deliver(t.Context(), message("{}"))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.url, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want %q", tt.url, err, tt.want)
		case err != nil && strings.Contains(err.Error(), "secret"):
			t.Errorf("%s: the error shows the query: %v", tt.url, err)
		}
	}
}
