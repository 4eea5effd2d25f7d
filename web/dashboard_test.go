package web

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDashboardAccess: the dashboard is for the supervisor and admin roles
// of the site: a person not logged in is sent to /login, a counter clerk
// is refused the page and its stream (403, logged).
func TestDashboardAccess(t *testing.T) {
	se := newStaffEnv(t, dashSite)
	anon := se.person(t)
	if r := anon.do("GET", "/dashboard/main", "", nil); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/login" {
		t.Errorf("no session: %d to %q, want 303 to /login", r.StatusCode, r.Header.Get("Location"))
	}
	wantStatus(t, anon.do("GET", "/dashboard/main/events", "", nil), http.StatusUnauthorized)
	clerk := se.person(t)
	wantStatus(t, clerk.login("li.na", "secret-pass"), http.StatusSeeOther)
	wantStatus(t, clerk.do("GET", "/dashboard/main", "", nil), http.StatusForbidden)
	wantStatus(t, clerk.do("GET", "/dashboard/main/events", "", nil), http.StatusForbidden)
	if !strings.Contains(se.log.String(), "supervisor page refused") {
		t.Errorf("refusal not logged: %s", se.log.String())
	}
	sup := se.person(t)
	wantStatus(t, sup.login("wang", "secret-pass"), http.StatusSeeOther)
	page := sup.do("GET", "/dashboard/main", "", nil)
	if body := wantStatus(t, page, http.StatusOK); !strings.Contains(body, "/static/vendor/uplot.min.js") {
		t.Errorf("dashboard page does not load the vendored chart library")
	}
	wantStatus(t, sup.do("GET", "/dashboard/nope", "", nil), http.StatusNotFound)
	for _, f := range []string{"uplot.min.js", "uplot.min.css", "uplot.LICENSE"} {
		wantStatus(t, sup.do("GET", "/static/vendor/"+f, "", nil), http.StatusOK)
	}
}

// TestDashboardStream: the first "dash" has today's figures as the test
// made them (arrivals per hour, waits against target, a breach, the
// counters, the line from the morning), and a later one only the newest
// point.
func TestDashboardStream(t *testing.T) {
	se := newStaffEnv(t, dashSite)
	se.issueN(3, "A") // 09:00
	se.env.clock.Add(40 * time.Minute)
	se.issue("F") // 09:40
	se.call("1")  // A001 waited 40 min: over its 30
	se.env.clock.Add(5 * time.Minute)
	se.call("3") // F001 waited 5 min: within its 20
	sup := se.person(t)
	wantStatus(t, sup.login("wang", "secret-pass"), http.StatusSeeOther)
	sse := newSSE(t, sup.do("GET", "/dashboard/main/events", "", nil))
	d := unmarshal[Dash](t, sse.nextOf("dash").Data)
	if d.Arrivals[9] != 4 || d.Served != 0 {
		t.Errorf("arrivals at 9: %d, served %d; want 4, 0", d.Arrivals[9], d.Served)
	}
	if d.Waits.Over[5] != 1 || d.Waits.Within[1] != 1 { // 40 min in 30-45, 5 min in 5-10
		t.Errorf("waits: within %v, over %v", d.Waits.Within, d.Waits.Over)
	}
	a := d.Services[0]
	if a.Code != "A" || a.Waiting != 2 || !a.Breach || a.LongestS != 45*60 || a.TargetS != 30*60 {
		t.Errorf("service A: %+v; want 2 waiting 45 min, over its 30 min target", a)
	}
	if c := d.Counters[0]; c.ID != "1" || c.Number != "A001" || c.Status != "CALLED" {
		t.Errorf("counter 1: %+v", c)
	}
	if len(d.Series) < 2 || d.Series[0].W[0] != 3 || d.Point.W[0] != 2 || d.MaxPoints != 289 {
		t.Errorf("line: %+v, point %+v", d.Series, d.Point)
	}
	if len(d.Bookings) != 2 || d.Bookings[0].Names["zh"] != "李医生" {
		t.Errorf("bookings: %+v", d.Bookings)
	}
	se.issue("A")
	d = unmarshal[Dash](t, sse.nextOf("dash").Data)
	if d.Series != nil || d.Point.W[0] != 3 || d.Arrivals[9] != 5 {
		t.Errorf("after an issue: series %v, point %+v, arrivals %v", d.Series, d.Point, d.Arrivals)
	}
}
