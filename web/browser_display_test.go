package web

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// overflowJS reports, as one string, what does not fit the viewport:
// "ok", or the document's scroll size when the page scrolls, each visible
// element that reaches outside the viewport, each row of a list or line
// of the big call that its box cuts (a row must be dropped, not cut), and
// each number or counter name of a row cut short.
const overflowJS = `(function () {
  var W = innerWidth, H = innerHeight, d = document.documentElement, bad = [];
  function name(e) { return e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className ? "." + e.className : "") + " " + JSON.stringify((e.textContent || "").slice(0, 20)); }
  if (d.scrollWidth > W || d.scrollHeight > H) bad.push("page scrolls: " + d.scrollWidth + "x" + d.scrollHeight + " in " + W + "x" + H);
  document.querySelectorAll("body *").forEach(function (e) {
    if (e.closest("[hidden]") || getComputedStyle(e).visibility === "hidden" || e.tagName === "SCRIPT") return;
    var r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return;
    if (r.left < -0.5 || r.top < -0.5 || r.right > W + 0.5 || r.bottom > H + 0.5) bad.push("outside: " + name(e));
  });
  document.querySelectorAll("li, #current-number, #current-counter, .label, h2").forEach(function (e) {
    var r = e.getBoundingClientRect(), p = e.parentElement.getBoundingClientRect();
    if (r.bottom > p.bottom + 0.5 || r.right > p.right + 0.5) bad.push("cut by its box: " + name(e));
    if (e.id && e.scrollWidth > e.clientWidth + 1) bad.push("text wider than its box: " + name(e));
  });
  // Counter names and numbers are never cut (a long service name may end in "…").
  document.querySelectorAll(".calls .counter, .calls .number, .waiting .count").forEach(function (e) {
    if (e.scrollWidth > e.clientWidth + 1) bad.push("cut: " + name(e));
  });
  return bad.length ? bad.join("; ") : "ok";
})()`

// hallSite is a busy hall: ten services with long names and eight
// counters serving all of them, named in English and Chinese.
func hallSite() queue.Site {
	s := queue.Site{ID: "main", Location: time.UTC, Languages: []string{"en", "zh"},
		Names: map[string]string{"en": "Outpatient Hall, Building 2", "zh": "门诊大厅 2 号楼"}}
	names := []string{"General medicine", "Paediatrics", "Cardiology", "Ophthalmology", "Dermatology",
		"Orthopaedics", "Pharmacy pick-up", "Laboratory and blood tests", "Radiology", "Cashier"}
	zh := []string{"内科", "儿科", "心内科", "眼科", "皮肤科", "骨科", "取药", "检验抽血", "放射科", "收费处"}
	var all []queue.CounterService
	for i, n := range names {
		code := string(rune('A' + i))
		s.Services = append(s.Services, queue.Service{Code: code, Prefix: code, Width: 3, AvgService: 5 * time.Minute,
			Names: map[string]string{"en": n, "zh": zh[i]}})
		all = append(all, queue.CounterService{Service: code, Weight: 1})
	}
	for i := 1; i <= 8; i++ {
		id := strconv.Itoa(i)
		s.Counters = append(s.Counters, queue.Counter{ID: id, Services: all, Policy: queue.PolicyStrict,
			Names: map[string]string{"en": "Room " + id, "zh": id + " 号诊室"}})
	}
	return s
}

// busyHall runs hallSite with three tickets per service, eight counters
// calling and four of them calling again after a no-show: 12 last calls.
func busyHall(t *testing.T) *env {
	e := newEnv(t, func(qo *queue.Opts, wo *Opts) {
		qo.Sites = []queue.Site{hallSite()}
		wo.RecentCalls = 12
	})
	for range 3 {
		for _, sv := range hallSite().Services {
			e.issue(sv.Code)
		}
	}
	for i := 1; i <= 8; i++ {
		e.call(strconv.Itoa(i))
	}
	for i := 1; i <= 4; i++ {
		req := queue.CounterRequest{Request: queue.Request{Site: "main", Device: "k"}, Counter: strconv.Itoa(i)}
		if _, err := e.eng.NoShow(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		e.call(strconv.Itoa(i))
	}
	return e
}

// testFit opens the busy hall at six screen sizes (16:9 twice, 16:10,
// 4:3, a portrait TV and a phone): nothing overflows the
// viewport, every row shown is whole, at least three last calls and two
// services show, and on the TVs the number called is at least a fifth of
// the screen's height (read at 10 m).
func testFit(t *testing.T, b *browser) {
	e := busyHall(t)
	dir := artifacts(t)
	for _, sz := range []struct{ w, h int }{{1920, 1080}, {1366, 768}, {1680, 1050}, {1024, 768}, {1080, 1920}, {390, 844}} {
		name := fmt.Sprintf("%dx%d", sz.w, sz.h)
		t.Run(name, func(t *testing.T) {
			p := b.openAt(t, e.http.URL+"/display/main?rotate=0", sz.w, sz.h)
			b.waitFor(t, p, "document.body.dataset.ready", "1", 20*time.Second)
			b.waitFor(t, p, "document.getElementById('current-number').textContent", "D003", time.Second) // counter 4's second call: the newest
			b.waitFor(t, p, "innerWidth + 'x' + innerHeight", name, time.Second)
			if got, err := b.eval(p, overflowJS); err != nil || got != "ok" {
				t.Errorf("overflow: %s %v", got, err)
			}
			calls, _ := b.eval(p, "+document.body.dataset.callsShown >= 3 && +document.body.dataset.waitingShown >= 2")
			shown, _ := b.eval(p, "document.body.dataset.callsShown + ' calls, ' + document.body.dataset.waitingShown + ' services'")
			if calls != "true" {
				t.Errorf("shown: %s, want at least 3 calls and 2 services", shown)
			}
			px, _ := b.eval(p, "parseFloat(getComputedStyle(document.getElementById('current-number')).fontSize)")
			if f, _ := strconv.ParseFloat(px, 64); sz.w > sz.h && f < float64(sz.h)/5 {
				t.Errorf("number called: font %s px, want at least a fifth of %d", px, sz.h)
			}
			// Services nobody waits for give their place to those with people.
			if got, _ := b.eval(p, "document.querySelector('#waiting .name').textContent"); got != "Dermatology" {
				t.Errorf("first service shown %q, want Dermatology (A to D have nobody waiting)", got)
			}
			t.Logf("%s: %s, number called %s px", name, shown, px)
			b.shot(t, p, dir, "display-"+name+".png")
		})
	}
	p := b.openAt(t, e.http.URL+"/display/main?lang=zh", 1920, 1080)
	b.waitFor(t, p, "document.body.dataset.ready", "1", 20*time.Second)
	b.waitFor(t, p, "document.getElementById('site').textContent", "门诊大厅 2 号楼", time.Second)
	if got, err := b.eval(p, overflowJS); err != nil || got != "ok" {
		t.Errorf("zh overflow: %s %v", got, err)
	}
	b.shot(t, p, dir, "display-zh-1920x1080.png")
	tk := b.openAt(t, e.http.URL+"/t/main/D003", 390, 844)
	b.waitFor(t, tk, "document.body.dataset.status", "CALLED", 20*time.Second)
	if got, err := b.eval(tk, overflowJS); err != nil || got != "ok" {
		t.Errorf("ticket page overflow: %s %v", got, err)
	}
	b.shot(t, tk, dir, "ticket-390x844.png")
}

// testOffline stops the daemon's HTTP side under an open display: within
// a few seconds the whole screen says "not connected" and no number is
// left on it; a daemon back on the same address brings the board back.
func testOffline(t *testing.T, b *browser) {
	e := busyHall(t)
	addr := e.http.Listener.Addr().String()
	p := b.openAt(t, e.http.URL+"/display/main?rotate=0", 1920, 1080)
	b.waitFor(t, p, "document.body.dataset.ready", "1", 20*time.Second)
	b.waitFor(t, p, "document.body.dataset.connected", "1", time.Second)

	stopped := time.Now()
	e.srv.stop() // end the streams, as a daemon shutting down does
	e.http.Close()
	seen := b.waitFor(t, p, "document.body.dataset.connected", "0", 10*time.Second)
	t.Logf("\"not connected\" %v after the daemon stopped", seen.Sub(stopped).Round(100*time.Millisecond))
	b.waitFor(t, p, "document.getElementById('offline').hidden", "false", time.Second)
	b.waitFor(t, p, "document.getElementById('offline').textContent.trim().split(/\\s*\\n\\s*/)[0]", "Not connected", time.Second)
	b.waitFor(t, p, "document.getElementById('current-number').textContent + document.getElementById('calls').textContent", "\u2014", time.Second)
	// The notice covers the whole screen.
	b.waitFor(t, p, "(function(){var r=document.getElementById('offline').getBoundingClientRect();return r.width+'x'+r.height})()", "1920x1080", time.Second)
	b.shot(t, p, artifacts(t), "display-offline.png")

	// The daemon comes back on the same address.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	srv, err := New(Opts{Engine: e.eng, Clock: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	hs := &httptest.Server{Listener: ln, Config: &http.Server{Handler: srv.Handler()}}
	hs.Start()
	t.Cleanup(func() { srv.stop(); hs.Close() })
	b.waitFor(t, p, "document.body.dataset.connected", "1", 10*time.Second)
	b.waitFor(t, p, "document.getElementById('current-number').textContent", "D003", time.Second)
	b.waitFor(t, p, "document.getElementById('offline').hidden", "true", time.Second)
}
