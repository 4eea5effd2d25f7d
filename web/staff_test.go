package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/logtest"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
	"github.com/nowserving/nowserving/staff"
)

// cheapHash keeps the login tests fast; staff tests the real costs.
var cheapHash = staff.Params{Memory: 64, Time: 1, Threads: 1}

// staffEnv is newEnv with staff accounts: li.na (counter 5), wang
// (supervisor of main), off (counter 5, disabled). Its server is not
// wrapped by answered: the people's pages are not part of openapi.yaml.
type staffEnv struct {
	*env
	people *staff.Service
	clock  *storetest.Clock // the sessions' clock
	log    *logtest.Buffer
}

func newStaffEnv(t testing.TB, mod func(*queue.Opts, *Opts)) *staffEnv {
	t.Helper()
	se := &staffEnv{clock: storetest.FixedClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)), log: &logtest.Buffer{}}
	se.env = newEnv(t, func(qo *queue.Opts, wo *Opts) {
		st := qo.Store.(queue.AccountStore)
		for _, a := range []queue.Account{
			{Name: "li.na", Role: queue.RoleCounter, Counters: []string{"5"}},
			{Name: "wang", Role: queue.RoleSupervisor, Sites: []string{"main"}},
			{Name: "off", Role: queue.RoleCounter, Counters: []string{"5"}, Disabled: true},
		} {
			if err := staff.Add(context.Background(), st, a, "secret-pass", cheapHash, se.clock.Now()); err != nil {
				t.Fatal(err)
			}
		}
		p, err := staff.New(staff.Opts{Accounts: st, Idle: 10 * time.Minute, LoginLimit: 3, Params: cheapHash, Clock: se.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		se.people = p
		wo.Staff = p
		wo.Logger = se.log.Logger()
		if mod != nil {
			mod(qo, wo)
		}
	})
	hs := httptest.NewServer(se.srv.Handler())
	t.Cleanup(hs.Close)
	se.http = hs
	return se
}

// person is one browser: a cookie jar that does not follow redirects.
type person struct {
	t    testing.TB
	base string
	c    *http.Client
	csrf string
}

func (se *staffEnv) person(t testing.TB) *person {
	jar, _ := cookiejar.New(nil)
	return &person{t: t, base: se.http.URL, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

var reCSRFField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// login fills the login form as a browser does and returns the answer.
func (p *person) login(name, pw string) *http.Response {
	p.t.Helper()
	resp := p.do("GET", "/login", "", nil)
	b, _ := io.ReadAll(resp.Body)
	m := reCSRFField.FindSubmatch(b)
	if m == nil {
		p.t.Fatalf("login page has no csrf field: %s", b)
	}
	return p.form("/login", url.Values{"csrf": {string(m[1])}, "name": {name}, "password": {pw}})
}

func (p *person) form(path string, v url.Values) *http.Response {
	p.t.Helper()
	return p.do("POST", path, v.Encode(), map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
}

func (p *person) do(method, path, body string, hdr map[string]string) *http.Response {
	p.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, p.base+path, rd)
	if err != nil {
		p.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := p.c.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// session reads the session (and keeps its CSRF token).
func (p *person) session() StaffSession {
	p.t.Helper()
	s := decode[StaffSession](p.t, p.do("GET", "/counter/api/session", "", nil), http.StatusOK)
	p.csrf = s.CSRF
	return s
}

// act posts an action with the session's CSRF token.
func (p *person) act(counter, action, body string) *http.Response {
	p.t.Helper()
	return p.do("POST", "/counter/api/main/"+counter+"/"+action, body, map[string]string{"Content-Type": "application/json", csrfHeader: p.csrf})
}

func wantStatus(t *testing.T, resp *http.Response, status int) string {
	t.Helper()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d; body %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, status, b)
	}
	return string(b)
}

func problemCode(t *testing.T, resp *http.Response, status int) string {
	t.Helper()
	var p Problem
	if err := json.Unmarshal([]byte(wantStatus(t, resp, status)), &p); err != nil {
		t.Fatal(err)
	}
	return p.Code
}

// TestStaffLogin: login, the cookie's flags, logout, the idle time-out,
// a disabled account, the rate limit, and a login form without its token.
func TestStaffLogin(t *testing.T) {
	se := newStaffEnv(t, nil)
	p := se.person(t)
	if got := p.do("GET", "/counter", "", nil); got.StatusCode != http.StatusSeeOther || got.Header.Get("Location") != "/login" {
		t.Fatalf("counter page before login: %d %s", got.StatusCode, got.Header.Get("Location"))
	}
	if code := problemCode(t, p.do("GET", "/counter/api/session", "", nil), 401); code != "login_required" {
		t.Fatalf("session before login: %s", code)
	}
	resp := p.login("li.na", "secret-pass")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/counter" {
		t.Fatalf("login: %d %s", resp.StatusCode, wantStatus(t, resp, resp.StatusCode))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie && c.Value != "" {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Secure {
		t.Fatalf("session cookie %+v (Secure only behind TLS)", cookie)
	}
	s := p.session()
	if s.Name != "li.na" || s.Role != "counter" || len(s.Sites) != 1 || len(s.Sites[0].Counters) != 1 || s.Sites[0].Counters[0].ID != "5" {
		t.Fatalf("session %+v", s)
	}
	if strings.Contains(se.log.String(), "secret-pass") {
		t.Fatal("a password in the log")
	}
	page := p.do("GET", "/counter", "", nil)
	if wantStatus(t, page, 200); !strings.Contains(page.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
		t.Fatalf("counter page headers %v", page.Header)
	}

	// Idle: reads by the page itself do not keep the session; an action does.
	se.clock.Add(9 * time.Minute)
	wantStatus(t, p.do("GET", "/counter/api/main/5", "", nil), 200)
	se.clock.Add(2 * time.Minute)
	if code := problemCode(t, p.do("GET", "/counter/api/main/5", "", nil), 401); code != "login_required" {
		t.Fatalf("after 11 idle minutes: %s", code)
	}
	if got := p.do("GET", "/counter", "", nil); got.StatusCode != http.StatusSeeOther {
		t.Fatalf("counter page after the time-out: %d", got.StatusCode)
	}

	// Logout needs the token; then the session is gone.
	p.login("li.na", "secret-pass")
	p.session()
	if code := problemCode(t, p.form("/logout", url.Values{"csrf": {"wrong"}}), 403); code != "csrf" {
		t.Fatalf("logout without token: %s", code)
	}
	if got := p.form("/logout", url.Values{"csrf": {p.csrf}}); got.StatusCode != http.StatusSeeOther || got.Header.Get("Location") != "/login" {
		t.Fatalf("logout: %d", got.StatusCode)
	}
	problemCode(t, p.do("GET", "/counter/api/session", "", nil), 401)

	// A disabled account, with the right password.
	q := se.person(t)
	if body := wantStatus(t, q.login("off", "secret-pass"), 403); !strings.Contains(body, "disabled") {
		t.Fatalf("disabled: %s", body)
	}
	// The rate limit: 3 failures for a name, then even the right password waits.
	for range 3 {
		wantStatus(t, q.login("wang", "wrong-pass"), 401)
	}
	if body := wantStatus(t, q.login("wang", "secret-pass"), 429); !strings.Contains(body, "Too many failed logins") {
		t.Fatalf("rate limited: %s", body)
	}
	// A login form posted without the page's token (another site's form).
	r := se.person(t)
	if body := wantStatus(t, r.form("/login", url.Values{"name": {"li.na"}, "password": {"secret-pass"}}), 403); !strings.Contains(body, "expired") {
		t.Fatalf("login without csrf: %s", body)
	}
	// Hostile login forms: a body past the limit, a name of 5000
	// characters, control characters, a password of 100 KB; each a clear
	// refusal, and no session (a fresh daemon: this address has failed
	// too often above).
	h := newStaffEnv(t, nil).person(t)
	for _, v := range []url.Values{
		{"name": {strings.Repeat("a", 5000)}, "password": {"secret-pass"}},
		{"name": {"li.na\x00"}, "password": {"secret-pass"}},
		{"name": {"li.na"}, "password": {strings.Repeat("p", 100<<10)}},
	} {
		resp := h.login(v.Get("name"), v.Get("password"))
		if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusBadRequest {
			t.Errorf("hostile login %.30q: %d", v.Get("name"), resp.StatusCode)
		}
		if body := wantStatus(t, resp, resp.StatusCode); !strings.Contains(body, "Wrong name or password.") {
			t.Errorf("hostile login %.30q: %.200s", v.Get("name"), body)
		}
	}
	problemCode(t, h.do("GET", "/counter/api/session", "", nil), 401)

	// The login page speaks the browser's language.
	zh := se.person(t)
	resp = zh.do("GET", "/login", "", map[string]string{"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"})
	if body := wantStatus(t, resp, 200); !strings.Contains(body, "员工登录") || !strings.Contains(body, `lang="zh"`) {
		t.Fatalf("zh login page: %s", body)
	}
}

// TestStaffActions: a clerk acts at their counter with the actor
// user:NAME@counter-ID; a repeated key acts once; another counter and a
// missing CSRF token are refused (and logged) with nothing written;
// hostile bodies get a 400 saying why, with nothing written either.
func TestStaffActions(t *testing.T) {
	se := newStaffEnv(t, nil)
	p := se.person(t)
	p.login("li.na", "secret-pass")
	p.session()
	a1, a2 := se.issue("A"), se.issue("A")

	res := decode[StaffActionResult](t, p.act("5", "next", `{"key":"click-000001"}`), 200)
	if res.Ticket == nil || res.Ticket.Number != a1.Number {
		t.Fatalf("next: %+v", res)
	}
	again := decode[StaffActionResult](t, p.act("5", "next", `{"key":"click-000001"}`), 200)
	if again.Ticket.Number != a1.Number {
		t.Fatalf("the same key called %s", again.Ticket.Number)
	}
	evs, err := se.eng.Events(context.Background(), "main", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, e := range evs {
		if e.Type == queue.EventCalled {
			calls++
			if e.Actor != "user:li.na@counter-5" {
				t.Fatalf("actor %q", e.Actor)
			}
		}
	}
	if calls != 1 {
		t.Fatalf("%d calls for one key", calls)
	}
	board := decode[CounterBoard](t, p.do("GET", "/counter/api/main/5", "", nil), 200)
	if board.Ticket == nil || board.Ticket.Number != a1.Number || board.Ticket.Status != "CALLED" ||
		len(board.Queues) != 1 || board.Queues[0].Waiting != 1 || board.Queues[0].Tickets[0].Number != a2.Number {
		t.Fatalf("board %+v", board)
	}

	before := lastVersion(t, se.env)
	// Another counter: refused and logged.
	if code := problemCode(t, p.act("6", "next", `{"key":"click-000002"}`), 403); code != "forbidden_counter" {
		t.Fatalf("other counter: %s", code)
	}
	if !strings.Contains(se.log.String(), "staff refused at a counter not theirs") || !strings.Contains(se.log.String(), "user=li.na") {
		t.Fatalf("refusal not logged: %s", se.log.String())
	}
	problemCode(t, p.do("GET", "/counter/api/main/6", "", nil), 403)
	// No CSRF token, a wrong one, a foreign origin.
	for _, hdr := range []map[string]string{
		{"Content-Type": "application/json"},
		{"Content-Type": "application/json", csrfHeader: "forged"},
		{"Content-Type": "application/json", csrfHeader: p.csrf, "Origin": "https://evil.example"},
	} {
		if code := problemCode(t, p.do("POST", "/counter/api/main/5/recall", `{"key":"click-000003"}`, hdr), 403); code != "csrf" {
			t.Fatalf("%v: %s", hdr, code)
		}
	}
	// Hostile input.
	for _, tt := range []struct{ action, body string }{
		{"recall", ``},
		{"recall", `{}`},
		{"recall", `{"key":"short"}`},
		{"recall", `{"key":"` + strings.Repeat("k", 200) + `"}`},
		{"recall", `{"key":"click-<script>"}`},
		{"recall", `{"key":12345678}`},
		{"recall", `{"key":"click-000004","admin":true}`},
		{"recall", `{"key":"click-000004","number":"A001"}`},
		{"recall", `[1,2,3]`},
		{"recall", `{"key":"click-000004"` + strings.Repeat(" ", 5000) + `}`},
		{"call", `{"key":"click-000004","number":"A001'; DROP TABLE tickets;--"}`},
		{"call", `{"key":"click-000004","number":""}`},
		{"call", `{"key":"click-000004","number":["A001"]}`},
		{"transfer", `{"key":"click-000004"}`},
		{"transfer", `{"key":"click-000004","to_service":"A","to_counter":"6"}`},
		{"transfer", `{"key":"click-000004","to_service":"../../etc"}`},
		{"transfer", `{"key":"click-000004","to_service":"A","reason":"` + strings.Repeat("长", 201) + `"}`},
		{"transfer", `{"key":"click-000004","to_service":"A","reason":"line\u0000break"}`},
	} {
		resp := p.act("5", tt.action, tt.body)
		var pb Problem
		if err := json.Unmarshal([]byte(wantStatus(t, resp, 400)), &pb); err != nil || pb.Code != "bad_request" || pb.Detail == "" {
			t.Errorf("%s %.60s: %+v %v", tt.action, tt.body, pb, err)
		}
	}
	if code := problemCode(t, p.act("5", "reboot", `{"key":"click-000004"}`), 404); code != "unknown_action" {
		t.Fatalf("unknown action: %s", code)
	}
	if got := lastVersion(t, se.env); got != before {
		t.Fatalf("refused requests wrote events: version %d, was %d", got, before)
	}

	// The rest of a cycle, and the engine's refusals as problems.
	if code := problemCode(t, p.act("5", "next", `{"key":"click-000005"}`), 409); code != "counter_busy" {
		t.Fatalf("next while calling: %s", code)
	}
	decode[StaffActionResult](t, p.act("5", "start", `{"key":"click-000006"}`), 200)
	tr := decode[StaffActionResult](t, p.act("5", "transfer", `{"key":"click-000007","to_counter":"6","reason":"needs the F desk"}`), 200)
	if tr.Ticket.Number != a1.Number {
		t.Fatalf("transfer %+v", tr)
	}
	evs, _ = se.eng.Events(context.Background(), "main", 0, 100)
	if e := evs[len(evs)-1]; e.Type != queue.EventTransferred || e.Detail != "counter 6: needs the F desk" {
		t.Fatalf("transfer event %+v", e)
	}
	decode[StaffActionResult](t, p.act("5", "call", `{"key":"click-000008","number":"`+a2.Number+`"}`), 200)
	decode[StaffActionResult](t, p.act("5", "noshow", `{"key":"click-000009"}`), 200)
	if m := decode[StaffActionResult](t, p.act("5", "pause", `{"key":"click-000010"}`), 200); m.Mode != "paused" {
		t.Fatalf("pause %+v", m)
	}
	if code := problemCode(t, p.act("5", "next", `{"key":"click-000011"}`), 409); code != "counter_paused" {
		t.Fatalf("next while paused: %s", code)
	}
	decode[StaffActionResult](t, p.act("5", "resume", `{"key":"click-000012"}`), 200)

	// A supervisor acts at any counter of the site.
	w := se.person(t)
	w.login("wang", "secret-pass")
	if s := w.session(); len(s.Sites[0].Counters) != 2 {
		t.Fatalf("supervisor's counters %+v", s.Sites[0].Counters)
	}
	decode[StaffActionResult](t, w.act("6", "next", `{"key":"click-000013"}`), 200)
}

func lastVersion(t *testing.T, e *env) int64 {
	t.Helper()
	v, err := e.eng.LastVersion(context.Background(), "main")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestStaffSSO: the trusted header logs a person in only from a
// configured proxy; from elsewhere it is ignored and logged.
func TestStaffSSO(t *testing.T) {
	se := newStaffEnv(t, func(_ *queue.Opts, o *Opts) {
		o.TrustedHeader = "X-Remote-User"
		o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
	p := se.person(t)
	resp := p.do("GET", "/counter/api/session", "", map[string]string{"X-Remote-User": "wang"})
	if s := decode[StaffSession](t, resp, 200); s.Name != "wang" {
		t.Fatalf("sso session %+v", s)
	}
	problemCode(t, se.person(t).do("GET", "/counter/api/session", "", map[string]string{"X-Remote-User": "off"}), 401)
	problemCode(t, se.person(t).do("GET", "/counter/api/session", "", map[string]string{"X-Remote-User": "nobody"}), 401)

	other := newStaffEnv(t, func(_ *queue.Opts, o *Opts) {
		o.TrustedHeader = "X-Remote-User"
		o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.1.2.3/32")}
	})
	problemCode(t, other.person(t).do("GET", "/counter/api/session", "", map[string]string{"X-Remote-User": "wang"}), 401)
	if !strings.Contains(other.log.String(), "not a trusted proxy") {
		t.Fatalf("untrusted header not logged: %s", other.log.String())
	}
	// Without the option the header means nothing.
	plain := newStaffEnv(t, nil)
	problemCode(t, plain.person(t).do("GET", "/counter/api/session", "", map[string]string{"X-Remote-User": "wang"}), 401)
}

// TestStaffCookieTLS: over TLS the session cookie is Secure.
func TestStaffCookieTLS(t *testing.T) {
	se := newStaffEnv(t, nil)
	hs := httptest.NewTLSServer(se.srv.Handler())
	t.Cleanup(hs.Close)
	p := se.person(t)
	p.base = hs.URL
	p.c.Transport = hs.Client().Transport
	resp := p.login("li.na", "secret-pass")
	var secure bool
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie && c.Value != "" {
			secure = c.Secure && c.HttpOnly
		}
	}
	if resp.StatusCode != http.StatusSeeOther || !secure {
		t.Fatalf("login over TLS: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
}
