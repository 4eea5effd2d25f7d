package web

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nowserving/nowserving/queue"
)

func TestProbes(t *testing.T) {
	ready := errors.New("store: migrations pending")
	e := newEnv(t, func(_ *queue.Opts, o *Opts) {
		o.Ready = func(context.Context) error { return ready }
		reg := prometheus.NewRegistry()
		reg.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "nowserving_test_total", Help: "test"}))
		o.Registry = reg
	})
	if r := e.do("GET", "/healthz", "-", ""); r.StatusCode != 200 {
		t.Errorf("/healthz: %d", r.StatusCode)
	}
	p := decode[Problem](t, e.do("GET", "/readyz", "-", ""), 503)
	if p.Code != "not_ready" || p.Detail != "see the daemon's log" {
		t.Errorf("/readyz problem: %+v", p)
	}
	ready = nil
	if r := e.do("GET", "/readyz", "-", ""); r.StatusCode != 200 {
		t.Errorf("/readyz when ready: %d", r.StatusCode)
	}
	e.do("GET", "/t/main/A001", "-", "")
	e.do("GET", "/t/main/A002", "-", "")
	e.do("GET", "/nowhere", "-", "")
	r := e.do("GET", "/metrics", "-", "")
	b, _ := io.ReadAll(r.Body)
	for _, want := range []string{
		"nowserving_test_total 0",
		`nowserving_http_requests_total{code="200",route="GET /healthz"} 1`,
		`nowserving_http_requests_total{code="503",route="GET /readyz"} 1`,
		`nowserving_http_requests_total{code="200",route="GET /t/{site}/{number}"} 2`,
		`nowserving_http_requests_total{code="404",route="unmatched"} 1`,
		`nowserving_http_request_duration_seconds_count{route="GET /readyz"} 2`,
		"nowserving_http_streams 0",
	} {
		if r.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("/metrics: %d, no line %s", r.StatusCode, want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", b)
	}
}

func TestAuth(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		name, token string
		status      int
		code        string
	}{
		{"no token", "-", 401, "unauthorized"},
		{"unknown token", "not-a-token-at-all-xyz", 401, "unauthorized"},
		{"token of another site", otherToken, 403, "forbidden_site"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, rq := range [][2]string{{"POST", "/api/v1/sites/main/tickets"}, {"GET", "/api/v1/sites/main/snapshot"},
				{"GET", "/api/v1/sites/main/events"}, {"POST", "/api/v1/sites/main/counters/5/call"}} {
				resp := e.do(rq[0], rq[1], tc.token, `{"service":"A"}`)
				if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
					t.Errorf("%s %s: content type %q", rq[0], rq[1], ct)
				}
				p := decode[Problem](t, resp, tc.status)
				if p.Code != tc.code || p.Status != tc.status || p.Type != ProblemType+tc.code {
					t.Errorf("%s %s: %+v", rq[0], rq[1], p)
				}
				if tc.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
					t.Errorf("%s %s: 401 without WWW-Authenticate", rq[0], rq[1])
				}
			}
		})
	}
	if sn, err := e.eng.Snapshot(context.Background(), "main"); err != nil || sn.Version != 0 {
		t.Errorf("refused requests changed the site: version %d, %v", sn.Version, err)
	}
}

func TestIssueAndStatus(t *testing.T) {
	e := newEnv(t, nil)
	first := decode[Position](t, e.do("POST", "/api/v1/sites/main/tickets", "", `{"service":"A"}`, "Idempotency-Key", "k1"), 201)
	if first.Ticket.Number != "A001" || first.Ticket.Status != "WAITING" || first.Ahead != 0 {
		t.Fatalf("first ticket: %+v", first)
	}
	again := e.do("POST", "/api/v1/sites/main/tickets", "", `{"service":"A"}`, "Idempotency-Key", "k1")
	if loc := again.Header.Get("Location"); loc != "/api/v1/sites/main/tickets/A001" {
		t.Errorf("Location %q", loc)
	}
	if p := decode[Position](t, again, 201); p.Ticket.ID != first.Ticket.ID {
		t.Errorf("retry with the same key issued %s, want the first ticket %s", p.Ticket.Number, first.Ticket.Number)
	}
	second := decode[Position](t, e.do("POST", "/api/v1/sites/main/tickets", "", `{"service":"A","class":"normal"}`), 201)
	if second.Ticket.Number != "A002" || second.Ahead != 1 || second.EstimatedWaitS != 300 {
		t.Errorf("second ticket: %+v", second)
	}
	e.clock.Add(120e9)
	st := decode[Position](t, e.do("GET", "/api/v1/sites/main/tickets/A002", "", ""), 200)
	if st.Ahead != 1 || st.WaitingForS != 120 {
		t.Errorf("status of A002: %+v", st)
	}
	tk := decode[Ticket](t, e.do("POST", "/api/v1/sites/main/counters/5/call", "", ""), 200)
	if tk.Number != "A001" || tk.Status != "CALLED" || tk.Counter != "5" {
		t.Errorf("call: %+v", tk)
	}
	if p := decode[Position](t, e.do("GET", "/api/v1/sites/main/tickets/A001", "", ""), 200); p.CalledToCounter != "5" {
		t.Errorf("called ticket: %+v", p)
	}
	for _, a := range []string{"recall", "start", "complete"} {
		decode[Ticket](t, e.do("POST", "/api/v1/sites/main/counters/5/"+a, "", ""), 200)
	}
	sn := decode[Snapshot](t, e.do("GET", "/api/v1/sites/main/snapshot", "", ""), 200)
	if sn.Services[0].Code != "A" || sn.Services[0].Waiting != 1 || sn.Services[0].Served != 1 || sn.Version != 6 {
		t.Errorf("snapshot: %+v", sn)
	}
	evs, err := e.eng.Events(context.Background(), "main", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if evs[0].Actor != "api:his" {
		t.Errorf("actor %q, want api:his", evs[0].Actor)
	}
}

func TestProblems(t *testing.T) {
	e := newEnv(t, nil)
	e.issue("F")
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		code                     string
	}{
		{"unknown site", "GET", "/api/v1/sites/nope/snapshot", "", 404, "unknown_site"},
		{"unknown ticket", "GET", "/api/v1/sites/main/tickets/A999", "", 404, "ticket_not_found"},
		{"unknown counter", "POST", "/api/v1/sites/main/counters/77/call", "", 404, "unknown_counter"},
		{"unknown action", "POST", "/api/v1/sites/main/counters/5/dance", "", 404, "unknown_action"},
		{"unknown service", "POST", "/api/v1/sites/main/tickets", `{"service":"Z"}`, 422, "unknown_service"},
		{"unknown class", "POST", "/api/v1/sites/main/tickets", `{"service":"A","class":"royal"}`, 400, "bad_request"},
		{"bad json", "POST", "/api/v1/sites/main/tickets", `{"service":`, 400, "bad_request"},
		{"unknown field", "POST", "/api/v1/sites/main/tickets", `{"service":"A","colour":"red"}`, 400, "bad_request"},
		{"no service", "POST", "/api/v1/sites/main/tickets", `{}`, 400, "bad_request"},
		{"service full", "POST", "/api/v1/sites/main/tickets", `{"service":"F"}`, 409, "service_full"},
		{"none waiting", "POST", "/api/v1/sites/main/counters/5/call", "", 409, "none_waiting"},
		{"counter idle", "POST", "/api/v1/sites/main/counters/5/recall", "", 409, "counter_idle"},
		{"bad version", "GET", "/api/v1/sites/main/events?from=x", "", 400, "bad_request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := e.do(tc.method, tc.path, "", tc.body)
			if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Errorf("content type %q", ct)
			}
			p := decode[Problem](t, resp, tc.status)
			if p.Code != tc.code || p.Status != tc.status || p.Title == "" {
				t.Errorf("problem %+v, want code %s", p, tc.code)
			}
		})
	}
	// A key used for another operation is refused, not replayed.
	e.do("POST", "/api/v1/sites/main/tickets", "", `{"service":"A"}`, "Idempotency-Key", "same")
	p := decode[Problem](t, e.do("POST", "/api/v1/sites/main/counters/5/call", "", "", "Idempotency-Key", "same"), 422)
	if p.Code != "idempotency_key_reused" {
		t.Errorf("reused key: %+v", p)
	}
}

func TestPages(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		path, ctype string
		status      int
	}{
		{"/", "text/html", 200},
		{"/openapi.yaml", "application/yaml", 200},
		{"/display/main", "text/html", 200},
		{"/t/main/A001", "text/html", 200},
		{"/static/display.js", "text/javascript", 200},
		{"/static/ticket.js", "text/javascript", 200},
		{"/static/style.css", "text/css", 200},
		{"/static/i18n.js", "text/javascript", 200},
		{"/static/ticket.html", "text/html", 200},
		{"/display/nope", "application/problem+json", 404},
		{"/static/missing.js", "text/plain", 404},
	} {
		r := e.do("GET", tc.path, "-", "")
		if r.StatusCode != tc.status || !strings.HasPrefix(r.Header.Get("Content-Type"), tc.ctype) {
			t.Errorf("GET %s: %d %q, want %d %s", tc.path, r.StatusCode, r.Header.Get("Content-Type"), tc.status, tc.ctype)
		}
	}
	idx := e.do("GET", "/", "-", "")
	if b, _ := io.ReadAll(idx.Body); !strings.Contains(string(b), `<a href="/display/main">Main Hall</a>`) {
		t.Errorf("index does not link the display:\n%s", b)
	}
	if b := wantStatus(t, e.do("GET", "/static/ticket.html", "-", ""), 200); b != string(pageFiles["static/ticket.html"]) {
		t.Errorf("/static/ticket.html is not the page as rendered:\n%s", b)
	}
	// Pages must work without network: no external resource.
	for _, f := range []string{"static/display.html", "static/ticket.html", "static/display.js", "static/ticket.js", "static/i18n.js", "static/style.css"} {
		b := embedded(t, f)
		if strings.Contains(string(b), "http://") || strings.Contains(string(b), "https://") || strings.Contains(string(b), "//cdn") {
			t.Errorf("%s refers to an external URL", f)
		}
	}
}

func TestNew(t *testing.T) {
	e := newEnv(t, nil)
	for _, tc := range []struct {
		name string
		o    Opts
	}{
		{"no engine", Opts{}},
		{"short token", Opts{Engine: e.eng, Tokens: []TokenInfo{{Name: "a", Token: "short"}}}},
		{"unnamed token", Opts{Engine: e.eng, Tokens: []TokenInfo{{Token: testToken}}}},
		{"duplicate name", Opts{Engine: e.eng, Tokens: []TokenInfo{{Name: "a", Token: testToken}, {Name: "a", Token: otherToken}}}},
	} {
		if _, err := New(tc.o); err == nil {
			t.Errorf("%s: New accepted it", tc.name)
		}
	}
	reg := prometheus.NewRegistry()
	if _, err := New(Opts{Engine: e.eng, Registry: reg}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Opts{Engine: e.eng, Registry: reg}); err == nil {
		t.Error("a second server on one registry: no error")
	}
}

func TestPanicIsProblem(t *testing.T) {
	e := newEnv(t, nil)
	h := e.srv.recoverer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	if rec.Code != 500 || rec.Header().Get("Content-Type") != "application/problem+json" {
		t.Errorf("panic answered %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
}
