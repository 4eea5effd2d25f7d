package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/queue"
)

// addAdmin gives se the admin account root.
func (se *staffEnv) addAdmin(t *testing.T) {
	t.Helper()
	if err := se.people.Create(context.Background(), queue.Account{Name: "root", Role: queue.RoleAdmin}, "secret-pass"); err != nil {
		t.Fatal(err)
	}
}

// admin posts to the admin API with the session's CSRF token.
func (p *person) admin(path, body string) *http.Response {
	p.t.Helper()
	return p.do("POST", "/admin/api/accounts"+path, body, map[string]string{"Content-Type": "application/json", csrfHeader: p.csrf})
}

func (p *person) accounts() AdminList {
	p.t.Helper()
	l := decode[AdminList](p.t, p.do("GET", "/admin/api/accounts", "", nil), http.StatusOK)
	p.csrf = l.CSRF
	return l
}

func accountOf(l AdminList, name string) *AdminAccount {
	for i := range l.Accounts {
		if l.Accounts[i].Name == name {
			return &l.Accounts[i]
		}
	}
	return nil
}

// TestStaffAdmin: only an admin reaches the accounts; add, password,
// access, disable and enable do what they say (a new password or a
// disabled account ends the person's sessions); hostile and wrong input
// is refused with a reason and nothing written; an admin cannot lock
// themselves out; every change needs the CSRF token.
func TestStaffAdmin(t *testing.T) {
	se := newStaffEnv(t, nil)
	se.addAdmin(t)
	anon := se.person(t)
	if r := anon.do("GET", "/admin", "", nil); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/login" {
		t.Fatalf("admin page without a session: %d", r.StatusCode)
	}
	problemCode(t, anon.do("GET", "/admin/api/accounts", "", nil), 401)

	clerk := se.person(t)
	clerk.login("li.na", "secret-pass")
	clerk.session()
	wantStatus(t, clerk.do("GET", "/admin", "", nil), 403)
	if code := problemCode(t, clerk.do("GET", "/admin/api/accounts", "", nil), 403); code != "forbidden_role" {
		t.Fatalf("a clerk lists accounts: %s", code)
	}
	if code := problemCode(t, clerk.do("POST", "/admin/api/accounts", `{"name":"evil","password":"secret-pass","role":"admin"}`,
		map[string]string{"Content-Type": "application/json", csrfHeader: clerk.csrf}), 403); code != "forbidden_role" {
		t.Fatalf("a clerk adds an account: %s", code)
	}
	if !strings.Contains(se.log.String(), "admin page refused") || !strings.Contains(se.log.String(), "user=li.na") {
		t.Fatalf("refusal not logged: %s", se.log.String())
	}

	root := se.person(t)
	root.login("root", "secret-pass")
	wantStatus(t, root.do("GET", "/admin", "", nil), 200)
	raw := wantStatus(t, root.do("GET", "/admin/api/accounts", "", nil), 200)
	if strings.Contains(raw, "argon2") || strings.Contains(raw, "hash") {
		t.Fatalf("the list shows hashes: %s", raw)
	}
	l := root.accounts()
	if len(l.Accounts) != 4 || l.Me != "root" || len(l.Sites) != 1 || len(l.Sites[0].Counters) != 2 {
		t.Fatalf("list %+v", l)
	}

	// Refusals, each with its reason, and nothing written.
	for _, tt := range []struct{ body, code, detail string }{
		{`{"name":"Bad Name","password":"secret-pass","role":"counter","counters":["5"]}`, "bad_request", "name"},
		{`{"name":"` + strings.Repeat("a", 5000) + `","password":"secret-pass","role":"admin"}`, "bad_request", "name"},
		{`{"name":"x\u0000y","password":"secret-pass","role":"admin"}`, "bad_request", "name"},
		{`{"name":"zhou","password":"secret-pass","role":"root"}`, "bad_request", "role"},
		{`{"name":"zhou","password":"secret-pass","role":"counter"}`, "bad_request", "at least one counter"},
		{`{"name":"zhou","password":"secret-pass","role":"counter","counters":["99"]}`, "bad_request", "no such counter"},
		{`{"name":"zhou","password":"secret-pass","role":"counter","sites":["elsewhere"],"counters":["5"]}`, "bad_request", "no such site"},
		{`{"name":"zhou","password":"secret-pass","role":"counter","counters":["5,6"]}`, "bad_request", "site or counter"},
		{`{"name":"zhou","password":"short","role":"admin"}`, "bad_password", "8 to 256"},
		{`{"name":"zhou","password":"` + strings.Repeat("p", 300) + `","role":"admin"}`, "bad_password", "8 to 256"},
		{`{"name":"zhou","password":"secret-pass","role":"admin","admin":true}`, "bad_request", "unknown field"},
		{`{"name":["zhou"]}`, "bad_request", "body"},
		{`[1,2]`, "bad_request", "body"},
	} {
		resp := root.admin("", tt.body)
		body := wantStatus(t, resp, 400)
		if !strings.Contains(body, `"code":"`+tt.code+`"`) || !strings.Contains(body, tt.detail) || strings.Contains(body, `"detail":"staff: `) {
			t.Errorf("%.60s: %s (want %s, %q)", tt.body, body, tt.code, tt.detail)
		}
	}
	if code := problemCode(t, root.admin("", `{"name":"li.na","password":"secret-pass","role":"admin"}`), 409); code != "account_exists" {
		t.Fatalf("an existing name: %s", code)
	}
	if n := len(root.accounts().Accounts); n != 4 {
		t.Fatalf("%d accounts after refusals, want 4", n)
	}
	// Without the token, or from another origin.
	for _, hdr := range []map[string]string{{"Content-Type": "application/json"},
		{"Content-Type": "application/json", csrfHeader: root.csrf, "Origin": "https://evil.example"}} {
		if code := problemCode(t, root.do("POST", "/admin/api/accounts", `{"name":"zhou","password":"secret-pass","role":"admin"}`, hdr), 403); code != "csrf" {
			t.Fatalf("%v: %s", hdr, code)
		}
	}

	// Add, and the new person logs in.
	wantStatus(t, root.admin("", `{"name":"zhou","password":"zhou-pass-1","role":"counter","sites":["main"],"counters":["6"]}`), 201)
	z := se.person(t)
	if r := z.login("zhou", "zhou-pass-1"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("new account's login: %d", r.StatusCode)
	}
	if s := z.session(); len(s.Sites) != 1 || s.Sites[0].Counters[0].ID != "6" {
		t.Fatalf("new account's session %+v", s)
	}
	// A new password ends zhou's session; the old one no longer works.
	wantStatus(t, root.admin("/zhou/password", `{"password":"zhou-pass-2"}`), 200)
	problemCode(t, z.do("GET", "/counter/api/session", "", nil), 401)
	wantStatus(t, se.person(t).login("zhou", "zhou-pass-1"), 401)
	z.login("zhou", "zhou-pass-2")
	z.session()
	if code := problemCode(t, root.admin("/zhou/password", `{"password":"short"}`), 400); code != "bad_password" {
		t.Fatalf("short password: %s", code)
	}
	// Access: zhou moves to counter 5, at once in their session.
	wantStatus(t, root.admin("/zhou/access", `{"role":"counter","sites":["main"],"counters":["5"]}`), 200)
	if s := z.session(); s.Sites[0].Counters[0].ID != "5" {
		t.Fatalf("after the access change %+v", s)
	}
	if a := accountOf(root.accounts(), "zhou"); a == nil || a.Counters[0] != "5" || a.Role != "counter" {
		t.Fatalf("listed %+v", a)
	}
	if code := problemCode(t, root.admin("/zhou/access", `{"role":"counter","counters":["77"]}`), 400); code != "bad_request" {
		t.Fatalf("unknown counter: %s", code)
	}
	// Disable ends the session; enable lets them in again.
	wantStatus(t, root.admin("/zhou/disable", `{}`), 200)
	problemCode(t, z.do("GET", "/counter/api/session", "", nil), 401)
	wantStatus(t, se.person(t).login("zhou", "zhou-pass-2"), 403)
	if a := accountOf(root.accounts(), "zhou"); !a.Disabled {
		t.Fatalf("not disabled: %+v", a)
	}
	wantStatus(t, root.admin("/zhou/enable", `{}`), 200)
	wantStatus(t, se.person(t).login("zhou", "zhou-pass-2"), 303)

	// An admin cannot lock themselves out.
	if code := problemCode(t, root.admin("/root/disable", `{}`), 409); code != "self" {
		t.Fatalf("disable self: %s", code)
	}
	if code := problemCode(t, root.admin("/root/access", `{"role":"supervisor"}`), 409); code != "self" {
		t.Fatalf("demote self: %s", code)
	}
	// Unknown accounts and actions; bodies an action does not take.
	if code := problemCode(t, root.admin("/nobody/disable", `{}`), 404); code != "unknown_account" {
		t.Fatalf("unknown account: %s", code)
	}
	if code := problemCode(t, root.admin("/zhou/delete", `{}`), 404); code != "unknown_action" {
		t.Fatalf("unknown action: %s", code)
	}
	problemCode(t, root.admin("/zhou/disable", `{"role":"admin"}`), 400)
	problemCode(t, root.admin("/zhou/password", `{"password":"zhou-pass-3","role":"admin"}`), 400)
	problemCode(t, root.admin("/Bad%20Name/disable", `{}`), 400)
	if strings.Contains(se.log.String(), "zhou-pass") {
		t.Fatal("a password in the log")
	}
	if !strings.Contains(se.log.String(), "account changed") || !strings.Contains(se.log.String(), "by=root") {
		t.Fatalf("changes not logged with their admin: %s", se.log.String())
	}
}
