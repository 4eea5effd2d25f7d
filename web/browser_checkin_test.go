package web

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// checkInEnv is a staff env with a kiosk device and the resource dr (1
// place every 15 minutes from 10:00, service A), its slots made, and one
// booking of the 10:00 slot, whose code it returns. The clock is 09:00:
// too early to check in (from 09:30).
func checkInEnv(t *testing.T) (*staffEnv, string) {
	t.Helper()
	se := newStaffEnv(t, func(qo *queue.Opts, wo *Opts) {
		s := &qo.Sites[0]
		s.Languages = []string{"en", "zh", "pt"}
		s.Resources = []queue.Resource{{ID: "dr", Service: "A", Schedule: queue.Schedule{Open: 10 * time.Hour, Close: 12 * time.Hour,
			Slot: 15 * time.Minute, Capacity: 1, DaysAhead: 7, OpensAt: 7 * time.Hour}}}
		wo.Kiosks, wo.PublicURL = []KioskDevice{testKiosk}, "http://q.example.org"
	})
	if _, err := se.eng.GenerateSlots(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := decode[Appointment](t, se.bookSlot(se.slotIDs(t, "dr")[0], "patient-1", "book-1"), http.StatusCreated)
	return se, a.Code
}

// TestKioskCheckInAPI: a provisioned kiosk page checks a booking in by
// its code as its device; too early says when to come back; a second
// check-in, an unknown code and hostile bodies are refused with nothing
// written; a retried key checks in once.
func TestKioskCheckInAPI(t *testing.T) {
	se, code := checkInEnv(t)
	p := se.person(t)
	hdr := kioskHeader()
	const path = "/kiosk/main/api/check-in?device=kiosk-web"
	problemCode(t, p.do("POST", path, `{"code":"`+code+`","key":"checkin-0001"}`, hdr), 401)
	provisionKiosk(t, p)
	if st := decode[KioskState](t, p.do("GET", "/kiosk/main/api/state?device=kiosk-web", "", nil), 200); !st.CheckIn {
		t.Fatalf("a site with resources offers no check-in: %+v", st)
	}
	before := lastVersion(t, se.env)
	for _, body := range []string{``, `{}`, `{"code":"` + code + `"}`, `{"code":"ABC","key":"checkin-0001"}`,
		`{"code":"` + strings.Repeat("A", 100) + `","key":"checkin-0001"}`, `{"code":"ABCD'; --X","key":"checkin-0001"}`,
		`{"code":12345678,"key":"checkin-0001"}`, `{"code":"` + code + `","key":"checkin-0001","patient":"x"}`} {
		if got := problemCode(t, p.do("POST", path, body, hdr), 400); got != "bad_request" {
			t.Errorf("%.40s: %s", body, got)
		}
	}
	if got := problemCode(t, p.do("POST", path, `{"code":"`+code+`","key":"checkin-0001"}`, map[string]string{"Content-Type": "application/json"}), 403); got != "csrf" {
		t.Fatalf("no header: %s", got)
	}
	resp := p.do("POST", path, `{"code":"`+strings.ToLower(code[:4]+"-"+code[4:])+`","key":"checkin-0001"}`, hdr)
	if pb := decode[Problem](t, resp, http.StatusConflict); pb.Code != "check_in_early" || pb.Detail != "09:30" {
		t.Fatalf("too early: %+v", pb)
	}
	if got := problemCode(t, p.do("POST", path, `{"code":"ZZZZZZZZ","key":"checkin-0002"}`, hdr), 404); got != "booking_not_found" {
		t.Fatalf("unknown code: %s", got)
	}
	if v := lastVersion(t, se.env); v != before {
		t.Fatalf("refused check-ins wrote: version %d, was %d", v, before)
	}
	se.env.clock.Add(45 * time.Minute) // 09:45: on time for 10:00
	for range 2 {
		ci := decode[KioskCheckIn](t, p.do("POST", path, `{"code":"`+code+`","key":"checkin-0003"}`, hdr), http.StatusCreated)
		if ci.Ticket.Number != "A001" || ci.Ticket.Class != "appointment" || ci.Appointment != "10:00" || !ci.OnTime ||
			ci.StatusURL != "http://q.example.org/t/main/A001?day=2026-03-02" {
			t.Fatalf("check-in %+v", ci)
		}
	}
	if got := problemCode(t, p.do("POST", path, `{"code":"`+code+`","key":"checkin-0004"}`, hdr), 409); got != "appointment_state" {
		t.Fatalf("a second check-in: %s", got)
	}
	evs, err := se.eng.Events(t.Context(), "main", before, 10)
	if err != nil || len(evs) != 2 {
		t.Fatalf("events %+v, %v", evs, err)
	}
	for _, e := range evs {
		if e.Actor != "kiosk-web" {
			t.Errorf("%s by %q, want kiosk-web", e.Type, e.Actor)
		}
	}
}

// TestBrowserKioskCheckIn: at the kiosk page a patient types the booking
// code on the screen's keys (and a keyboard or scanner), is told to come
// back when too early, then gets the appointment ticket the engine
// issued, with its QR code; an unknown code and a second check-in are
// refused in the kiosk's language.
func TestBrowserKioskCheckIn(t *testing.T) {
	b := startBrowser(t)
	se, code := checkInEnv(t)
	p := b.kiosk(t, se, "", 1280, 1024)
	b.waitFor(t, p, "document.getElementById('k-checkin').hidden", "false", 10*time.Second)
	dir := artifacts(t)
	if err := os.WriteFile(filepath.Join(dir, "kiosk-choose-checkin-1280x1024-en.png"), b.fullShot(t, p), 0o644); err != nil {
		t.Fatal(err)
	}
	b.eval(p, "document.getElementById('k-checkin').click()")
	b.waitFor(t, p, "document.getElementById('checkin').hidden", "false", 5*time.Second)
	msg := "document.getElementById('k-message').textContent"
	shown := "document.getElementById('ci-code').textContent"
	// The first half on the screen's keys, the rest typed in lower case.
	for _, c := range code[:4] {
		b.eval(p, "document.querySelector('#ci-keys button[data-key=\""+string(c)+"\"]').click()")
	}
	b.waitFor(t, p, shown, code[:4], 5*time.Second)
	for _, c := range strings.ToLower(code[4:]) + "x" { // a ninth is ignored
		b.press(t, p, string(c))
	}
	b.waitFor(t, p, shown, code[:4]+"-"+code[4:], 5*time.Second)
	if err := os.WriteFile(filepath.Join(dir, "kiosk-checkin-1280x1024-en.png"), b.fullShot(t, p), 0o644); err != nil {
		t.Fatal(err)
	}
	b.press(t, p, "Enter")
	b.waitFor(t, p, msg, "Too early to check in: please come back at 09:30.", 10*time.Second)
	se.env.clock.Add(45 * time.Minute)
	b.eval(p, "document.getElementById('ci-go').click()")
	b.waitFor(t, p, "document.getElementById('ticket').hidden", "false", 10*time.Second)
	if got, _ := b.eval(p, "document.getElementById('t-number').textContent + ' / ' + document.getElementById('t-appt').textContent + ' / ' + document.getElementById('t-service').textContent"); got != "A001 / Appointment at 10:00 / General" {
		t.Fatalf("ticket shown: %q", got)
	}
	b.waitFor(t, p, "document.getElementById('t-qr').complete && document.getElementById('t-qr').naturalWidth > 0", "true", 5*time.Second)
	if err := os.WriteFile(filepath.Join(dir, "kiosk-checkin-ticket-1280x1024-en.png"), b.fullShot(t, p), 0o644); err != nil {
		t.Fatal(err)
	}
	// Again, in Chinese: checked in already; then an unknown code.
	b.eval(p, "document.getElementById('t-back').click(); document.querySelector('#langs button[lang=zh]').click(); document.getElementById('k-checkin').click()")
	b.waitFor(t, p, "document.getElementById('checkin').hidden", "false", 5*time.Second)
	for _, c := range code {
		b.press(t, p, string(c))
	}
	b.press(t, p, "Enter")
	b.waitFor(t, p, msg, "此预约已签到或已取消。", 10*time.Second)
	for range 8 {
		b.eval(p, "document.getElementById('ci-del').click()")
	}
	for range 8 {
		b.press(t, p, "Z")
	}
	b.press(t, p, "Enter")
	b.waitFor(t, p, msg, "没有此预约码，请核对。", 10*time.Second)
	if err := os.WriteFile(filepath.Join(dir, "kiosk-checkin-refused-1280x1024-zh.png"), b.fullShot(t, p), 0o644); err != nil {
		t.Fatal(err)
	}
	evs, err := se.eng.Events(t.Context(), "main", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, string(e.Type)+" "+e.Actor)
	}
	if want := "BOOKING_BOOKED api:his,ISSUED kiosk-web,BOOKING_CHECKED_IN kiosk-web"; strings.Join(got, ",") != want {
		t.Fatalf("events %v, want %s", got, want)
	}
}
