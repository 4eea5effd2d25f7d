package web

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// testKiosk is the kiosk device of the kiosk page's tests, at site main.
var testKiosk = KioskDevice{ID: "kiosk-web", Site: "main", Secret: "kiosk-secret-0123456789"}

// kioskHeader is what the kiosk page sends with a call of its API: the
// header that tells it from a forged form, and a JSON body.
func kioskHeader() map[string]string {
	return map[string]string{"X-Kiosk": "1", "Content-Type": "application/json"}
}

// provisionKiosk provisions p's browser as testKiosk with the device's
// secret, as the kiosk page does, failing t unless that succeeds.
func provisionKiosk(t *testing.T, p *person) {
	t.Helper()
	wantStatus(t, p.do("POST", "/kiosk/main/api/provision", `{"device":"kiosk-web","secret":"kiosk-secret-0123456789"}`, kioskHeader()), 200)
}

// TestKioskAPI: provisioning needs the device's secret and the page's
// header; a provisioned page issues as its device; hostile bodies get a
// 400 saying why and write nothing.
func TestKioskAPI(t *testing.T) {
	se := newStaffEnv(t, func(_ *queue.Opts, wo *Opts) {
		wo.Kiosks, wo.PublicURL = []KioskDevice{testKiosk}, "http://q.example.org"
	})
	p := se.person(t)
	hdr := kioskHeader()
	for _, tt := range []struct {
		body string
		hdr  map[string]string
		code string
	}{
		{`{"device":"kiosk-web","secret":"kiosk-secret-0123456789"}`, map[string]string{"Content-Type": "application/json"}, "csrf"},
		{`{"device":"kiosk-web","secret":"wrong-secret-0123456789"}`, hdr, "kiosk_refused"},
		{`{"device":"kiosk-1","secret":"kiosk-secret-0123456789"}`, hdr, "kiosk_refused"},
		{`{"device":"kiosk-web"}`, hdr, "bad_request"},
	} {
		resp := p.do("POST", "/kiosk/main/api/provision", tt.body, tt.hdr)
		if code := problemCode(t, resp, map[string]int{"csrf": 403, "kiosk_refused": 403, "bad_request": 400}[tt.code]); code != tt.code {
			t.Errorf("%s: %s, want %s", tt.body, code, tt.code)
		}
	}
	if code := problemCode(t, p.do("GET", "/kiosk/main/api/state?device=kiosk-web", "", nil), 401); code != "kiosk_not_provisioned" {
		t.Fatalf("state before provisioning: %s", code)
	}
	provisionKiosk(t, p)
	st := decode[KioskState](t, p.do("GET", "/kiosk/main/api/state?device=kiosk-web", "", nil), 200)
	if st.Device != "kiosk-web" || len(st.Services) != 2 || !st.Services[0].Open {
		t.Fatalf("state %+v", st)
	}
	before := lastVersion(t, se.env)
	for _, body := range []string{``, `{}`, `{"service":"A"}`, `{"service":"A","key":"short"}`, `{"service":"A; drop","key":"kiosk-000001"}`,
		`{"service":"` + strings.Repeat("A", 100) + `","key":"kiosk-000001"}`, `{"service":1,"key":"kiosk-000001"}`,
		`{"service":"A","key":"kiosk-000001","class":"vip"}`} {
		if code := problemCode(t, p.do("POST", "/kiosk/main/api/tickets?device=kiosk-web", body, hdr), 400); code != "bad_request" {
			t.Errorf("%.40s: %s", body, code)
		}
	}
	if code := problemCode(t, p.do("POST", "/kiosk/main/api/tickets?device=kiosk-web", `{"service":"A","key":"kiosk-000001"}`,
		map[string]string{"Content-Type": "application/json"}), 403); code != "csrf" {
		t.Fatalf("no header: %s", code)
	}
	if v := lastVersion(t, se.env); v != before {
		t.Fatalf("refused requests wrote: version %d, was %d", v, before)
	}
	for range 2 { // a retry with the same key takes one ticket
		tk := decode[KioskTicket](t, p.do("POST", "/kiosk/main/api/tickets?device=kiosk-web", `{"service":"A","key":"kiosk-000001"}`, hdr), 201)
		if tk.Ticket.Number != "A001" || tk.Printed || tk.StatusURL != "http://q.example.org/t/main/A001?day=2026-03-02" {
			t.Fatalf("ticket %+v", tk)
		}
	}
	if v := lastVersion(t, se.env); v != before+1 {
		t.Fatalf("version %d after one ticket, was %d", v, before)
	}
	resp := p.do("GET", "/kiosk/main/qr?number=A001&day=2026-03-02", "", nil)
	if wantStatus(t, resp, 200); resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("qr %v", resp.Header)
	}
	problemCode(t, p.do("GET", "/kiosk/main/qr?number=A001<script>", "", nil), http.StatusBadRequest)
}

// TestKioskStateClosed: the kiosk page's state says when a service its
// hours close opens (and when an open one closes), in the site's zone, so
// the page can say "Fechado agora · abre seg., 10:00"; a ticket asked of
// it is refused as service_closed with when it opens in every language.
func TestKioskStateClosed(t *testing.T) {
	site := closedBranch(t)
	se := newStaffEnv(t, func(qo *queue.Opts, wo *Opts) {
		qo.Sites = []queue.Site{site}
		wo.Kiosks = []KioskDevice{testKiosk}
	})
	p := se.person(t)
	hdr := kioskHeader()
	provisionKiosk(t, p)
	monday := time.Date(2026, 12, 7, 10, 0, 0, 0, site.Location)
	four := time.Date(2026, 12, 4, 16, 0, 0, 0, site.Location)
	for _, tc := range []struct {
		now           time.Time
		open          bool
		opens, closes *time.Time
	}{
		{time.Date(2026, 12, 5, 12, 0, 0, 0, site.Location), false, &monday, nil}, // Saturday noon
		{time.Date(2026, 12, 4, 15, 0, 0, 0, site.Location), true, nil, &four},
	} {
		se.env.clock.Fix(tc.now)
		st := decode[KioskState](t, p.do("GET", "/kiosk/main/api/state?device=kiosk-web", "", nil), 200)
		if st.TimeZone != "America/Sao_Paulo" || !st.Now.Equal(tc.now) || len(st.Services) != 3 {
			t.Fatalf("%v: state %+v", tc.now, st)
		}
		for _, sv := range st.Services {
			if sv.Open != tc.open || !sameTime(sv.Opens, tc.opens) || !sameTime(sv.Closes, tc.closes) {
				t.Errorf("%v: service %s open %v opens %v closes %v; want %v %v %v", tc.now, sv.Code, sv.Open, sv.Opens, sv.Closes, tc.open, tc.opens, tc.closes)
			}
		}
	}
	se.env.clock.Fix(time.Date(2026, 12, 5, 12, 0, 0, 0, site.Location))
	resp := p.do("POST", "/kiosk/main/api/tickets?device=kiosk-web", `{"service":"P","key":"kiosk-000001"}`, hdr)
	pr := decode[Problem](t, resp, 409)
	if want := "Pessoa física: fechado, abre seg 10:00 / Personal: closed, opens Mon 10:00"; pr.Code != "service_closed" || !strings.Contains(pr.Detail, want) {
		t.Errorf("ticket of a closed service: %+v, want service_closed saying %q", pr, want)
	}
}

// sameTime reports whether a and b are both nil or the same instant.
func sameTime(a, b *time.Time) bool {
	return a == nil && b == nil || a != nil && b != nil && a.Equal(*b)
}
