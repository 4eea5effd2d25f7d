package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzIssueBody posts arbitrary bodies to the issue endpoint: the answer is
// always a ticket (201) or a problem (4xx), never a server error, and
// always well-formed JSON.
func FuzzIssueBody(f *testing.F) {
	for _, s := range []string{`{"service":"A"}`, `{"service":"A","class":"vip"}`, `{"service":"Z"}`, `{}`, `[]`, `null`,
		`{"service":"A","x":1}`, `{"service":1}`, `{"service":"A"} trailing`, "\x00\xff", strings.Repeat("[", 5000)} {
		f.Add(s, "key")
	}
	env := newEnv(f, nil)
	f.Fuzz(func(t *testing.T, body, key string) {
		req := httptest.NewRequest("POST", "/api/v1/sites/main/tickets", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		if len(key) < 200 && !strings.ContainsAny(key, "\r\n\x00") {
			req.Header.Set("Idempotency-Key", key)
		}
		rec := httptest.NewRecorder()
		env.srv.Handler().ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("body %q: status %d: %s", body, rec.Code, rec.Body)
		}
		var v map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("body %q: answer is not JSON: %v: %s", body, err, rec.Body)
		}
		if rec.Code != http.StatusCreated && v["code"] == nil {
			t.Fatalf("body %q: %d without a problem code: %s", body, rec.Code, rec.Body)
		}
	})
}
