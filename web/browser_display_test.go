package web

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// overflowJS reports, as one string, what does not fit the viewport:
// "ok", or the document's scroll size when the page scrolls, each visible
// element that reaches outside the viewport, each row of a list or line
// of the big call that its box cuts (a row must be dropped, not cut), and
// each number, count or name cut short: a name that does not fit must
// scroll (class scroll), never end cut or in "…".
const overflowJS = `(function () {
  var W = innerWidth, H = innerHeight, d = document.documentElement, bad = [];
  function name(e) { return e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className ? "." + e.className : "") + " " + JSON.stringify((e.textContent || "").slice(0, 20)); }
  if (d.scrollWidth > W || d.scrollHeight > H) bad.push("page scrolls: " + d.scrollWidth + "x" + d.scrollHeight + " in " + W + "x" + H);
  document.querySelectorAll("body *").forEach(function (e) {
    if (e.closest("[hidden]") || getComputedStyle(e).visibility === "hidden" || e.tagName === "SCRIPT") return;
    if (e.closest(".scroll")) return; // a scrolling name moves inside its box
    var r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return;
    if (r.left < -0.5 || r.top < -0.5 || r.right > W + 0.5 || r.bottom > H + 0.5) bad.push("outside: " + name(e));
  });
  document.querySelectorAll("li, #current-number, #current-counter, .label, h2").forEach(function (e) {
    var r = e.getBoundingClientRect(), p = e.parentElement.getBoundingClientRect();
    if (r.bottom > p.bottom + 0.5 || r.right > p.right + 0.5) bad.push("cut by its box: " + name(e));
    if (e.id && e.scrollWidth > e.clientWidth + 1) bad.push("text wider than its box: " + name(e));
  });
  document.querySelectorAll(".calls .counter, .calls .number, .waiting .count, .waiting .name, .waiting .note, #site").forEach(function (e) {
    var s = getComputedStyle(e);
    if (e.scrollWidth > e.clientWidth + 1 && !e.classList.contains("scroll")) bad.push("cut: " + name(e));
    if (s.textOverflow === "ellipsis") bad.push("may end in an ellipsis: " + name(e));
  });
  return bad.length ? bad.join("; ") : "ok";
})()`

// fitSizes are the screens of the fit test: 16:9 twice, 16:10, 4:3, a
// portrait TV and a phone.
var fitSizes = []struct{ w, h int }{{1920, 1080}, {1366, 768}, {1680, 1050}, {1024, 768}, {1080, 1920}, {390, 844}}

// cut20 is s cut to 20 characters: the names of the fit test are that
// long in every language.
func cut20(s string) string {
	r := []rune(s)
	return string(r[:min(20, len(r))])
}

var (
	fitServiceEN = []string{"General practitioner", "Paediatrics, infants", "Cardiology and heart", "Ophthalmology & eyes", "Dermatology and skin", "Orthopaedics & bones", "Pharmacy prescribing", "Blood tests and labs", "Radiology and X-rays", "Cashier and payments", "Maternity and births", "Ear, nose and throat", "Dental and oral care", "Physiotherapy, rehab", "Vaccination & travel", "Emergency and triage"}
	fitServicePT = []string{"Clínica geral adulto", "Pediatria e infância", "Cardiologia do idoso", "Oftalmologia e olhos", "Dermatologia clínica", "Ortopedia e fraturas", "Farmácia de receitas", "Análises clínicas AB", "Radiologia e imagens", "Guichê de pagamentos", "Ginecologia e partos", "Otorrinolaringologia", "Odontologia e dentes", "Fisioterapia adultos", "Vacinas para viagens", "Emergência e triagem"}
	fitServiceZH = []string{"内科", "儿科", "心内科", "眼科", "皮肤科", "骨科", "取药", "检验抽血", "放射科", "收费处", "妇产科", "耳鼻喉科", "口腔科", "康复科", "预防接种", "急诊"}
)

// fitSite is a site of n services and c counters, every name 20
// characters long in zh, en and pt. Every fourth service, from the second,
// has nobody waiting.
func fitSite(id string, n, c int) queue.Site {
	s := queue.Site{ID: id, Location: time.UTC, Languages: []string{"zh", "en", "pt"},
		Names: map[string]string{"en": "City Hospital Hall 2", "pt": "Hospital da Cidade 2", "zh": cut20("市第一人民医院门诊大厅二号楼综合服务中心")}}
	for i := range n {
		code := string(rune('A' + i))
		s.Services = append(s.Services, queue.Service{Code: code, Prefix: code, Width: 3, AvgService: 5 * time.Minute,
			Names: map[string]string{"en": fitServiceEN[i], "pt": fitServicePT[i], "zh": cut20(fitServiceZH[i] + "门诊部第一诊区综合服务中心专家号窗口")}})
	}
	for i := 1; i <= c; i++ {
		own := s.Services[(i-1)%n].Code
		var serves []queue.CounterService
		serves = append(serves, queue.CounterService{Service: own, Weight: 1})
		for _, sv := range s.Services {
			if sv.Code != own {
				serves = append(serves, queue.CounterService{Service: sv.Code, Weight: 1})
			}
		}
		s.Counters = append(s.Counters, queue.Counter{ID: strconv.Itoa(i), Services: serves, Policy: queue.PolicyStrict,
			Names: map[string]string{"en": fmt.Sprintf("Examination room %03d", i), "pt": fmt.Sprintf("Sala de exames nº%03d", i),
				"zh": cut20(fmt.Sprintf("第%d号诊室门诊部综合服务专家普通窗口区域", i))}})
	}
	return s
}

// fitAllBusy is the site of the fit test where every service has people
// waiting: more than fit one screen at 16:9, so its list turns pages.
const fitAllBusy = "s16c20"

// fitHall runs the sites of the fit test: 3 services and 5 counters, 8
// and 20, 16 and 40, 16 and 5, 3 and 40, and fitAllBusy. Each busy
// service gets 8 to 12 tickets, and up to 10 counters call one, so that
// every busy service of every site still has people waiting (testFit
// checks it).
func fitHall(t *testing.T) (*env, []queue.Site) {
	var sites []queue.Site
	for _, sc := range [][2]int{{3, 5}, {8, 20}, {16, 40}, {16, 5}, {3, 40}, {16, 20}} {
		sites = append(sites, fitSite(fmt.Sprintf("s%dc%d", sc[0], sc[1]), sc[0], sc[1]))
	}
	e := newEnv(t, func(qo *queue.Opts, wo *Opts) {
		qo.Sites = sites
		wo.RecentCalls = 12
	})
	ctx := context.Background()
	for _, s := range sites {
		for i, sv := range s.Services {
			if i%4 == 1 && s.ID != fitAllBusy {
				continue
			}
			for range 8 + i%5 {
				if _, err := e.eng.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: s.ID, Device: "kiosk"}, Service: sv.Code}); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, c := range s.Counters[:min(10, len(s.Counters))] {
			if _, err := e.eng.CallNext(ctx, queue.CounterRequest{Request: queue.Request{Site: s.ID, Device: "keypad"}, Counter: c.ID}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return e, sites
}

// testFit opens the display of every site of fitHall in zh, en and pt
// at every one of fitSizes (one page per site and language, resized):
// nothing overflows the viewport, every row shown is whole and every name
// whole or scrolling, at least three last calls show, on the TVs the
// number called is at least a fifth of the screen's height (read at
// 10 m), and every service with people waiting is on screen, on one page
// or on one of the pages the list turns through (a dropped row fails).
// A screenshot of each, at half size, goes to $NOWSERVING_ARTIFACTS.
func testFit(t *testing.T, b *browser) {
	e, sites := fitHall(t)
	dir := artifacts(t)
	ctx := context.Background()
	for _, s := range sites {
		sn, err := e.eng.Snapshot(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		var busy []string
		for _, sv := range sn.Services {
			if sv.Waiting > 0 {
				busy = append(busy, sv.Code)
			}
		}
		want := len(s.Services) - (len(s.Services)+2)/4 // fitHall skips every fourth from the second
		if s.ID == fitAllBusy {
			want = len(s.Services)
		}
		if len(busy) != want {
			t.Fatalf("%s: %d services with people waiting, want %d: the fit test would check too few", s.ID, len(busy), want)
		}
		for _, lang := range fitLangs(s) {
			t.Run(s.ID+"-"+lang, func(t *testing.T) {
				p := b.openAt(t, e.http.URL+"/display/"+s.ID+"?rotate=0&page=600&lang="+lang, fitSizes[0].w, fitSizes[0].h)
				b.waitFor(t, p, "document.body.dataset.ready", "1", 20*time.Second)
				most := 0 // pages of the list, at the size with most
				for _, sz := range fitSizes {
					name := fmt.Sprintf("%dx%d", sz.w, sz.h)
					if err := b.call(p, "Emulation.setDeviceMetricsOverride", map[string]any{
						"width": sz.w, "height": sz.h, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
						t.Fatal(err)
					}
					b.waitFor(t, p, "document.body.dataset.size", name, 5*time.Second)
					most = max(most, checkFit(t, b, p, name, busy))
					b.shotScaled(t, p, dir, fmt.Sprintf("display-%s-%s-%s.png", s.ID, lang, name), sz.w, sz.h, 0.5)
				}
				if s.ID == fitAllBusy && most < 2 {
					t.Errorf("%d services waiting on one page at every size: the pages are not tested", len(busy))
				}
			})
		}
	}
	tk := b.openAt(t, e.http.URL+"/t/s3c5/A001?lang=pt", 390, 844)
	b.waitFor(t, tk, "document.body.dataset.status", "CALLED", 20*time.Second)
	if got, err := b.eval(tk, overflowJS); err != nil || got != "ok" {
		t.Errorf("ticket page overflow: %s %v", got, err)
	}
	b.shot(t, tk, dir, "ticket-390x844.png")
}

// fitLangs are the languages a site of the fit test is shown in: all
// three for the sites that grow together (3 and 5, 8 and 20, 16 and 40),
// one for the lopsided ones, to keep the run short.
func fitLangs(s queue.Site) []string {
	switch n, c := len(s.Services), len(s.Counters); {
	case n == 16 && c == 5:
		return []string{"zh"}
	case n == 3 && c == 40:
		return []string{"pt"}
	case s.ID == fitAllBusy:
		return []string{"en"}
	}
	return []string{"zh", "en", "pt"}
}

// checkFit checks one display at one size (see testFit), turning the
// pages of the waiting list with the right arrow key, and returns how
// many pages the list has.
func checkFit(t *testing.T, b *browser, p, size string, busy []string) int {
	t.Helper()
	pages, _ := b.eval(p, "document.body.dataset.waitingPages")
	n, _ := strconv.Atoi(pages)
	first, _ := b.eval(p, "document.body.dataset.waitingPage")
	at, _ := strconv.Atoi(first)
	seen := map[string]bool{}
	for k := range max(n, 1) {
		if k > 0 {
			if _, err := b.eval(p, "document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight'}))"); err != nil {
				t.Fatal(err)
			}
			at = (at + 1) % n
			b.waitFor(t, p, "document.body.dataset.waitingPage", strconv.Itoa(at), time.Second)
		}
		if n > 1 {
			b.waitFor(t, p, "document.getElementById('waiting-page').textContent", fmt.Sprintf("%d/%d", at+1, n), time.Second)
		}
		if got, err := b.eval(p, overflowJS); err != nil || got != "ok" {
			t.Errorf("%s page %d: overflow: %s %v", size, at+1, got, err)
		}
		codes, _ := b.eval(p, "Array.from(document.querySelectorAll('#waiting li')).map(function (li) { return li.dataset.code }).join(' ')")
		for _, c := range strings.Fields(codes) {
			seen[c] = true
		}
	}
	var missing []string
	for _, c := range busy {
		if !seen[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		t.Errorf("%s: services with people waiting not shown: %v (pages %d)", size, missing, n)
	}
	calls, _ := b.eval(p, "document.body.dataset.callsShown")
	if c, _ := strconv.Atoi(calls); c < 3 {
		t.Errorf("%s: %s last calls shown, want at least 3", size, calls)
	}
	px, _ := b.eval(p, "parseFloat(getComputedStyle(document.getElementById('current-number')).fontSize)")
	var w, h int
	fmt.Sscanf(size, "%dx%d", &w, &h)
	if f, _ := strconv.ParseFloat(px, 64); w > h && f < float64(h)/5 {
		t.Errorf("%s: number called: font %s px, want at least a fifth of %d", size, px, h)
	}
	layout, _ := b.eval(p, "document.body.dataset.waitingCols + ' column(s), letters at ' + document.body.dataset.waitingScale")
	t.Logf("%s: %s calls, %d services waiting on %d page(s), %s, number %s px", size, calls, len(busy), max(n, 1), layout, px)
	return max(n, 1)
}

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
	serveAgain(t, addr, Opts{Engine: e.eng, Clock: e.clock.Now})
	b.waitFor(t, p, "document.body.dataset.connected", "1", 10*time.Second)
	b.waitFor(t, p, "document.getElementById('current-number').textContent", "D003", time.Second)
	b.waitFor(t, p, "document.getElementById('offline').hidden", "true", time.Second)
}

// closedBranch is site "main", a bank branch in São Paulo whose three
// services (P, B, V) take tickets Monday to Friday, 10:00 to 16:00.
func closedBranch(t *testing.T) queue.Site {
	sp, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	weekdays := []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}
	hours := []queue.Hours{{Days: weekdays, Open: 10 * time.Hour, Close: 16 * time.Hour}}
	site := queue.Site{ID: "main", Location: sp, Languages: []string{"pt", "en"},
		Names: map[string]string{"pt": "Banco Central, agência 12", "en": "Central Bank, branch 12"}}
	for _, sv := range []struct{ code, pt, en string }{{"P", "Pessoa física", "Personal"}, {"B", "Empresas", "Business"}, {"V", "Prioritário", "Priority"}} {
		site.Services = append(site.Services, queue.Service{Code: sv.code, Prefix: sv.code, Width: 3, Hours: hours,
			Names: map[string]string{"pt": sv.pt, "en": sv.en}})
	}
	site.Counters = []queue.Counter{{ID: "1", Services: []queue.CounterService{{Service: "P"}, {Service: "B"}, {Service: "V"}}}}
	return site
}

// testClosed: a bank branch on a Saturday, its services closed by their
// hours until Monday 10:00. The display says so in place of a number, in
// the language on screen, and each service says it is closed and when
// it opens.
func testClosed(t *testing.T, b *browser) {
	site := closedBranch(t)
	sp := site.Location
	e := newEnv(t, func(qo *queue.Opts, _ *Opts) { qo.Sites = []queue.Site{site} })
	e.clock.Fix(time.Date(2026, 12, 5, 12, 0, 0, 0, sp)) // Saturday noon
	dir := artifacts(t)
	for _, tc := range []struct{ lang, closed, opens, note string }{
		{"pt", "Fechado", "abre seg., 10:00", "Fechado"},
		{"en", "Closed", "opens Mon 10:00 AM", "Closed"},
	} {
		p := b.openAt(t, e.http.URL+"/display/main?rotate=0&lang="+tc.lang, 1920, 1080)
		b.waitFor(t, p, "document.body.dataset.ready", "1", 20*time.Second)
		b.waitFor(t, p, "document.getElementById('current-number').textContent", tc.closed, time.Second)
		b.waitFor(t, p, "document.getElementById('current-counter').textContent", tc.opens, time.Second)
		b.waitFor(t, p, "document.querySelectorAll('#waiting li.closed').length", "3", time.Second)
		b.waitFor(t, p, "document.querySelector('#waiting .note').textContent", tc.note, time.Second)
		if got, err := b.eval(p, overflowJS); err != nil || got != "ok" {
			t.Errorf("%s: overflow: %s %v", tc.lang, got, err)
		}
		b.shot(t, p, dir, "display-closed-"+tc.lang+"-1920x1080.png")
	}
	// Saturday with V open until 13:00: the board is live, and P and B say
	// when they open.
	open := site
	open.Services = slices.Clone(site.Services)
	open.Services[2].Hours = []queue.Hours{{Open: 9 * time.Hour, Close: 13 * time.Hour}}
	if err := e.eng.SetSites([]queue.Site{open}); err != nil {
		t.Fatal(err)
	}
	e.issue("V")
	p := b.openAt(t, e.http.URL+"/display/main?rotate=0&lang=pt", 1366, 768)
	b.waitFor(t, p, "document.body.dataset.ready", "1", 20*time.Second)
	b.waitFor(t, p, "document.getElementById('current-number').textContent", "\u2014", time.Second)
	b.waitFor(t, p, "document.querySelector('#waiting [data-code=P] .note').textContent", "abre seg., 10:00", time.Second)
	b.waitFor(t, p, "document.querySelector('#waiting [data-code=V] .count').textContent", "1", time.Second)
	if got, err := b.eval(p, overflowJS); err != nil || got != "ok" {
		t.Errorf("partly open: overflow: %s %v", got, err)
	}
	b.shot(t, p, dir, "display-partly-closed-pt-1366x768.png")
}

// testReload: an open display shows a counter renamed by a reload within
// 2 s, through the stream it holds (no reconnect, no event needed), and
// so a new main language and a new service.
func testReload(t *testing.T, b *browser) {
	e := newEnv(t, nil)
	e.issue("A")
	e.call("5")
	p := b.openAt(t, e.http.URL+"/display/main?rotate=0", 1366, 768)
	b.waitFor(t, p, "document.body.dataset.ready", "1", 20*time.Second)
	b.waitFor(t, p, "document.getElementById('current-counter').textContent", "\u2192 Counter 5", time.Second)
	next := testSite()
	next.Counters[0].Names = map[string]string{"en": "Room 5"}
	next.Services[0].Names = map[string]string{"en": "General medicine"}
	start := time.Now()
	if err := e.eng.SetSites([]queue.Site{next}); err != nil {
		t.Fatal(err)
	}
	seen := b.waitFor(t, p, "document.getElementById('current-counter').textContent", "\u2192 Room 5", 2*time.Second)
	b.waitFor(t, p, "document.querySelector('#waiting [data-code=A] .name').textContent", "General medicine", time.Second)
	t.Logf("renamed counter on screen %v after the reload", seen.Sub(start).Round(time.Millisecond))

	// A second reload makes Chinese the site's main language and adds a
	// service: the page, which shows the main language (rotate=0), turns
	// to it within 2 s, and lists the new service by its name.
	zh := next
	zh.Languages = []string{"zh", "en"}
	zh.Names = map[string]string{"en": "Main Hall", "zh": "门诊大厅"}
	zh.Counters = slices.Clone(next.Counters)
	zh.Counters[0].Names = map[string]string{"en": "Room 5", "zh": "5号诊室"}
	zh.Services = append(slices.Clone(next.Services), queue.Service{Code: "B", Prefix: "B", Width: 3, AvgService: 5 * time.Minute,
		Names: map[string]string{"en": "Pharmacy", "zh": "取药"}})
	start = time.Now()
	if err := e.eng.SetSites([]queue.Site{zh}); err != nil {
		t.Fatal(err)
	}
	seen = b.waitFor(t, p, "document.getElementById('current-counter').textContent", "\u2192 5号诊室", 2*time.Second)
	b.waitFor(t, p, "document.getElementById('site').textContent", "门诊大厅", time.Second)
	b.waitFor(t, p, "document.querySelector('#waiting [data-code=B] .name').textContent", "取药", time.Second)
	t.Logf("new main language on screen %v after the reload", seen.Sub(start).Round(time.Millisecond))
}
