package web

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// TestBrowserKiosk: a browser kiosk page is provisioned with its device's
// secret (a wrong one refused), issues a ticket as that device (the
// engine's number, shown with its QR code: no printer here), and turns
// "out of service" when the daemon stops and back when it returns.
func TestBrowserKiosk(t *testing.T) {
	b := startBrowser(t)
	kiosks := []KioskDevice{testKiosk}
	se := newStaffEnv(t, func(qo *queue.Opts, wo *Opts) {
		counterSite(qo, wo)
		wo.Kiosks, wo.PublicURL = kiosks, "http://queue.example.org"
	})
	addr := se.http.Listener.Addr().String()
	p := b.window(t, se.http.URL+"/kiosk/main?device=kiosk-web", 1280, 1024)
	b.waitFor(t, p, "document.getElementById('provision').hidden", "false", 10*time.Second)
	b.eval(p, "document.getElementById('p-secret').value = 'wrong-secret-0123456789'; document.getElementById('f-provision').requestSubmit()")
	b.waitFor(t, p, "document.getElementById('k-message').textContent", "Wrong device or secret.", 10*time.Second)
	if !strings.Contains(se.log.String(), "kiosk provisioning refused") {
		t.Fatalf("refusal not logged: %s", se.log.String())
	}
	b.eval(p, "document.getElementById('p-secret').value = '"+testKiosk.Secret+"'; document.getElementById('f-provision').requestSubmit()")
	b.waitFor(t, p, "document.getElementById('choose').hidden", "false", 10*time.Second)
	b.waitFor(t, p, "document.querySelectorAll('.service').length", "2", 5*time.Second)
	se.issue("A")
	// 5 min of service for 1 waiting, over the 3 open counters serving A.
	b.waitFor(t, p, "document.querySelector('.service[data-service=A] .meta').textContent", "1 waiting · about 2 min", 5*time.Second)
	dir := artifacts(t)
	if err := os.WriteFile(filepath.Join(dir, "kiosk-choose-1280x1024-en.png"), b.fullShot(t, p), 0o644); err != nil {
		t.Fatal(err)
	}
	b.eval(p, "document.querySelector('.service[data-service=A]').click()")
	b.waitFor(t, p, "document.getElementById('ticket').hidden", "false", 10*time.Second)
	if got, _ := b.eval(p, "document.getElementById('t-number').textContent"); got != "A002" {
		t.Fatalf("kiosk shows %q, want A002", got)
	}
	b.waitFor(t, p, "document.getElementById('t-qr').complete && document.getElementById('t-qr').naturalWidth > 0", "true", 5*time.Second)
	evs, err := se.eng.Events(t.Context(), "main", 0, 10)
	if err != nil || len(evs) != 2 || evs[1].Actor != "kiosk-web" || evs[1].Number != "A002" {
		t.Fatalf("events %+v, %v", evs, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kiosk-ticket-1280x1024-en.png"), b.fullShot(t, p), 0o644); err != nil {
		t.Fatal(err)
	}
	b.eval(p, "document.getElementById('t-back').click()")
	// Without the cookie (another browser) the API refuses.
	other := se.person(t)
	if code := problemCode(t, other.do("POST", "/kiosk/main/api/tickets?device=kiosk-web", `{"service":"A","key":"forged-00001"}`,
		kioskHeader()), 401); code != "kiosk_not_provisioned" {
		t.Fatalf("unprovisioned: %s", code)
	}

	// The daemon stops: out of service; it returns on the same address.
	se.srv.stop()
	se.http.Close()
	b.waitFor(t, p, "document.body.dataset.oos", "1", 15*time.Second)
	if err := os.WriteFile(filepath.Join(dir, "kiosk-out-of-service-1280x1024-en.png"), b.fullShot(t, p), 0o644); err != nil {
		t.Fatal(err)
	}
	serveAgain(t, addr, Opts{Engine: se.eng, Clock: se.env.clock.Now, Kiosks: kiosks, PublicURL: "http://queue.example.org"})
	b.waitFor(t, p, "document.body.dataset.oos", "0", 15*time.Second)
	b.waitFor(t, p, "document.getElementById('choose').hidden", "false", 5*time.Second)
}

// TestBrowserKioskShots: the kiosk page's service choice and its ticket on
// screen, at 1920×1080 and 390×844 in each of the site's languages, meet
// the contrast and fit checks the staff pages meet; the screenshots are
// kept as artifacts.
func TestBrowserKioskShots(t *testing.T) {
	b := startBrowser(t)
	se := newStaffEnv(t, func(qo *queue.Opts, wo *Opts) {
		counterSite(qo, wo)
		wo.Kiosks, wo.PublicURL = []KioskDevice{testKiosk}, "http://queue.example.org"
	})
	se.issueN(3, "A")
	dir := artifacts(t)
	for _, size := range [][2]int{{1920, 1080}, {390, 844}} {
		for _, lang := range []string{"en", "zh", "pt"} {
			p := b.kiosk(t, se, "&lang="+lang, size[0], size[1])
			b.waitFor(t, p, "document.querySelectorAll('.service').length", "2", 10*time.Second)
			if got, _ := b.eval(p, "document.documentElement.lang"); got != lang {
				t.Errorf("%s: page language %q", lang, got)
			}
			name := fmt.Sprintf("kiosk-%dx%d-%s", size[0], size[1], lang)
			b.checkShot(t, p, filepath.Join(dir, name+".png"), size[0])
			b.eval(p, "document.querySelector('.service[data-service=A]').click()")
			b.waitFor(t, p, "document.getElementById('t-qr').complete && document.getElementById('t-qr').naturalWidth > 0", "true", 10*time.Second)
			b.checkShot(t, p, filepath.Join(dir, name+"-ticket.png"), size[0])
		}
	}
}

// TestBrowserKioskClosed: a bank branch's browser kiosk on Friday 15:59
// offers its services; at 16:01 their hours close them, and a touch is
// refused saying, in the kiosk's language, that the service is closed and
// when it opens; every button then says so ("Fechado agora · abre seg.,
// 10:00"), in the site's time zone.
func TestBrowserKioskClosed(t *testing.T) {
	b := startBrowser(t)
	site := closedBranch(t)
	se := newStaffEnv(t, func(qo *queue.Opts, wo *Opts) {
		qo.Sites = []queue.Site{site}
		wo.Kiosks = []KioskDevice{testKiosk}
	})
	se.env.clock.Fix(time.Date(2026, 12, 4, 15, 59, 0, 0, site.Location))
	p := b.kiosk(t, se, "&lang=pt", 1280, 1024)
	b.waitFor(t, p, "document.querySelector('.service[data-service=P] .meta').textContent", "0 em espera · sem espera", 10*time.Second)
	se.env.clock.Fix(time.Date(2026, 12, 4, 16, 1, 0, 0, site.Location))
	b.eval(p, "document.querySelector('.service[data-service=P]').click()")
	const closed = "Fechado agora · abre seg., 10:00"
	b.waitFor(t, p, "document.getElementById('k-message').textContent", closed, 10*time.Second)
	for _, code := range []string{"P", "B", "V"} {
		b.waitFor(t, p, "document.querySelector('.service[data-service="+code+"] .meta').textContent", closed, time.Second)
	}
	if err := os.WriteFile(filepath.Join(artifacts(t), "kiosk-closed-1280x1024-pt.png"), b.fullShot(t, p), 0o644); err != nil {
		t.Fatal(err)
	}
}

// kiosk opens the page of kiosk device kiosk-web at site main (query
// added to its address) in a window of w×h and provisions it with the
// device's secret, as an installer does once.
func (b *browser) kiosk(t *testing.T, se *staffEnv, query string, w, h int) string {
	t.Helper()
	p := b.window(t, se.http.URL+"/kiosk/main?device=kiosk-web"+query, w, h)
	b.waitFor(t, p, "document.getElementById('provision').hidden", "false", 10*time.Second)
	b.eval(p, "document.getElementById('p-secret').value = '"+testKiosk.Secret+"'; document.getElementById('f-provision').requestSubmit()")
	return p
}
