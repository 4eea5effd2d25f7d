package web

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// dashSite is the hospital of testdata/hospital.yaml in short, with the
// Portuguese of testdata/bank.yaml beside its Chinese: zh first, long
// names, wait targets, four counters and two bookable resources.
func dashSite(qo *queue.Opts, _ *Opts) {
	s := &qo.Sites[0]
	s.Languages = []string{"zh", "en", "pt"}
	s.Names = map[string]string{"zh": "市人民医院门诊大厅", "en": "City Hospital Outpatient Hall", "pt": "Hospital Municipal · Sala de Consultas Externas"}
	s.Services[0].Names = map[string]string{"zh": "初诊（内科、外科、儿科）", "en": "First visit: internal medicine, surgery and paediatrics", "pt": "Primeira consulta: medicina interna, cirurgia e pediatria"}
	s.Services[0].WaitTarget = 30 * time.Minute
	s.Services[1].Names = map[string]string{"zh": "复诊", "en": "Revisit", "pt": "Consulta de seguimento"}
	s.Services[1].DailyCap, s.Services[1].WaitTarget = 0, 20*time.Minute
	s.Services = append(s.Services, queue.Service{Code: "E", Prefix: "E", Width: 3, AvgService: 5 * time.Minute,
		Names: map[string]string{"zh": "急诊", "en": "Emergency", "pt": "Urgência"}, WaitTarget: 10 * time.Minute})
	s.Counters = []queue.Counter{
		{ID: "1", Names: map[string]string{"zh": "1号窗口", "en": "Counter 1", "pt": "Balcão 1"}, Services: []queue.CounterService{{Service: "A", Weight: 1}}, Policy: queue.PolicyStrict},
		{ID: "2", Names: map[string]string{"zh": "2号窗口", "en": "Counter 2", "pt": "Balcão 2"}, Services: []queue.CounterService{{Service: "A", Weight: 1}, {Service: "F", Weight: 1}}, Policy: queue.PolicyStrict},
		{ID: "3", Names: map[string]string{"zh": "3号窗口（复诊）", "en": "Counter 3 (revisits)", "pt": "Balcão 3 (seguimento)"}, Services: []queue.CounterService{{Service: "F", Weight: 1}}, Policy: queue.PolicyStrict},
		{ID: "5", Names: map[string]string{"zh": "5号急诊窗口", "en": "Emergency counter 5", "pt": "Balcão de urgência 5"}, Services: []queue.CounterService{{Service: "E", Weight: 1}}, Policy: queue.PolicyStrict},
	}
	sched := queue.Schedule{Open: 9 * time.Hour, Close: 12 * time.Hour, Slot: 30 * time.Minute, Capacity: 2, DaysAhead: 7, OpensAt: 7 * time.Hour}
	s.Resources = []queue.Resource{
		{ID: "li", Service: "A", Names: map[string]string{"zh": "李医生", "en": "Dr Li", "pt": "Dra. Li"}, Schedule: sched},
		{ID: "vacc", Service: "A", Names: map[string]string{"zh": "疫苗接种", "en": "Vaccination", "pt": "Vacinação"}, Schedule: sched},
	}
	s.Appointments = queue.Appointments{PatientRate: 50, PatientWindow: time.Second}
}

// TestBrowserDashboard opens the supervisor's dashboard in headless
// Chromium after a busy morning: it shows each service, counter and
// resource, screenshots at 1920×1080 (zh) and 1366×768 (pt, en); then
// the rest of a compressed busy day runs while it is open (flat), and its
// heap, DOM nodes and listeners must not grow, nor its waiting line pass
// its bound.
func TestBrowserDashboard(t *testing.T) {
	b := startBrowser(t)
	se := newStaffEnv(t, dashSite)
	if _, err := se.eng.GenerateSlots(context.Background()); err != nil {
		t.Fatal(err)
	}
	day := &busyDay{t: t, e: se.env}
	bks := day.bookings()
	day.run(time.Hour, 5*time.Minute, 6) // 09:00 to 10:00, six tickets each five minutes
	day.checkIn(bks[0])                  // 10:00 at Dr Li
	day.checkIn(bks[4])                  // 10:00 at vaccination
	day.run(time.Hour, 5*time.Minute, 6) // to 11:00
	s := b.window(t, se.http.URL+"/login", 1920, 1080)
	b.loginByKeys(t, s, "wang", "secret-pass")
	b.waitFor(t, s, "location.pathname", "/counter", 10*time.Second)
	b.navigate(t, s, se.http.URL+"/dashboard/main")
	b.waitFor(t, s, "document.body.dataset.ready", "1", 15*time.Second)
	if got := b.awaitEval(t, s, "document.querySelectorAll('#targets li').length + ' ' + document.querySelectorAll('#counters li').length + ' ' + document.querySelectorAll('#bookings tr').length"); got != "3 4 2" {
		t.Errorf("services, counters, resources shown: %s, want 3 4 2", got)
	}
	if got := b.awaitEval(t, s, "document.querySelectorAll('#targets li.breach').length > 0"); got != "true" {
		t.Errorf("no breach marked after a morning with waits past the targets")
	}
	dir := artifacts(t)
	b.shot(t, s, dir, "dashboard-1920x1080-zh.png")
	for _, v := range []struct{ lang, name string }{{"pt", "dashboard-1366x768-pt.png"}, {"en", "dashboard-1366x768-en.png"}} {
		p := b.window(t, se.http.URL+"/login", 1366, 768)
		b.loginByKeys(t, p, "wang", "secret-pass")
		b.waitFor(t, p, "location.pathname", "/counter", 10*time.Second)
		b.navigate(t, p, se.http.URL+"/dashboard/main?lang="+v.lang)
		b.waitFor(t, p, "document.body.dataset.ready", "1", 15*time.Second)
		b.shot(t, p, dir, v.name)
		if got := b.awaitEval(t, p, `(function () { var w = document.getElementById("within");
			return w.textContent.length > 0 && w.scrollWidth <= w.clientWidth + 1 &&
				w.getBoundingClientRect().right <= w.parentElement.getBoundingClientRect().right + 1; })()`); got != "true" {
			t.Errorf("%s: the share of waits within target is cut at 1366×768", v.lang)
		}
		if got := b.awaitEval(t, p, "document.documentElement.scrollHeight <= innerHeight + 1"); got != "true" {
			t.Errorf("%s: the dashboard scrolls at 1366×768", v.lang)
		}
	}
	t.Run("flat", func(t *testing.T) { testDashFlat(t, b, s, day) })
	t.Run("reports", func(t *testing.T) { testReports(t, b, se) })
}

// testReports opens the day's report (after the busy day of flat) at
// 1920×1080 in zh and 1366×768 in pt, and prints it: one A4 page.
func testReports(t *testing.T, b *browser, se *staffEnv) {
	dir := artifacts(t)
	for _, v := range []struct {
		lang string
		w, h int
	}{{"zh", 1920, 1080}, {"pt", 1366, 768}} {
		p := b.window(t, se.http.URL+"/login", v.w, v.h)
		b.loginByKeys(t, p, "wang", "secret-pass")
		b.waitFor(t, p, "location.pathname", "/counter", 10*time.Second)
		b.navigate(t, p, se.http.URL+"/reports/main?period=day&day=2026-03-02&lang="+v.lang)
		b.waitFor(t, p, "document.body.dataset.ready", "1", 15*time.Second)
		if got := b.awaitEval(t, p, "document.querySelectorAll('.card').length + ' ' + document.querySelectorAll('.card canvas').length"); got != "8 7" {
			t.Errorf("%s: cards and charts %s, want 8 7", v.lang, got)
		}
		b.shot(t, p, dir, fmt.Sprintf("report-%dx%d-%s.png", v.w, v.h, v.lang))
		// A table heading wraps between its words, and fits its column (it
		// was broken inside words: "Chama|das", "median|a").
		if got := b.awaitEval(t, p, headingsBroken); got != "" {
			t.Errorf("%s: table headings broken inside a word or wider than their column: %s", v.lang, got)
		}
		var pdf struct {
			Data []byte `json:"data"`
		}
		if err := b.call(p, "Page.printToPDF", map[string]any{"preferCSSPageSize": true, "printBackground": true}, &pdf); err != nil {
			t.Fatal(err)
		}
		if n := len(regexp.MustCompile(`/Type\s*/Page[^s]`).FindAll(pdf.Data, -1)); n != 1 {
			t.Errorf("%s: the printed report has %d pages, want 1 A4 page", v.lang, n)
		}
		name := filepath.Join(dir, "report-print-"+v.lang+".pdf")
		if err := os.WriteFile(name, pdf.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// headingsBroken lists the report tables' headings that a line ends inside
// a word of (a letter of a script written with spaces begins a new line
// right after another), or that are wider than their cell. Chinese breaks
// between any two characters.
const headingsBroken = `Array.prototype.filter.call(document.querySelectorAll(".fig th"), function (th) {
	if (th.scrollWidth > th.clientWidth + 1) return true;
	var r = document.createRange(), top = null, text = th.textContent, node = th.firstChild, latin = /[0-9A-Za-z\u00C0-\u024F]/;
	if (!node || node.nodeType !== 3) return false;
	for (var i = 0; i < text.length; i++) {
		r.setStart(node, i); r.setEnd(node, i + 1);
		var y = r.getBoundingClientRect().top;
		if (top !== null && y > top + 1 && i > 0 && latin.test(text[i - 1]) && latin.test(text[i])) return true;
		top = y;
	}
	return false;
}).map(function (th) { return th.textContent; }).join("; ")`

// testDashFlat runs the rest of the day (11:00 to 21:00: 10 hours, 40
// steps of a quarter of an hour) with the dashboard open, and compares its heap,
// DOM nodes and event listeners after a garbage collection before and
// after.
func testDashFlat(t *testing.T, b *browser, s string, day *busyDay) {
	before := b.heap(t, s)
	day.run(10*time.Hour, 15*time.Minute, 3)
	v := strconv.FormatInt(day.last, 10)
	b.waitFor(t, s, "document.body.dataset.version >= "+v, "true", 20*time.Second)
	after := b.heap(t, s)
	t.Logf("dashboard heap %.1f → %.1f MB, nodes %.0f → %.0f, listeners %.0f → %.0f over %d events",
		before["JSHeapUsedSize"]/1e6, after["JSHeapUsedSize"]/1e6, before["Nodes"], after["Nodes"],
		before["JSEventListeners"], after["JSEventListeners"], day.events)
	if after["JSHeapUsedSize"] > before["JSHeapUsedSize"]*1.3+1e6 {
		t.Errorf("heap grew from %.0f to %.0f bytes over a compressed day", before["JSHeapUsedSize"], after["JSHeapUsedSize"])
	}
	for _, m := range []string{"Nodes", "JSEventListeners"} {
		if after[m] > before[m]*1.1+20 {
			t.Errorf("%s grew from %.0f to %.0f", m, before[m], after[m])
		}
	}
	pts := b.awaitEval(t, s, "nowservingDash.points() <= nowservingDash.max() && nowservingDash.points() > 50")
	if pts != "true" {
		t.Errorf("waiting line: %s points, max %s", b.awaitEval(t, s, "nowservingDash.points()"), b.awaitEval(t, s, "nowservingDash.max()"))
	}
}

// heap collects the page's garbage and returns its performance metrics.
func (b *browser) heap(t *testing.T, s string) map[string]float64 {
	t.Helper()
	for _, m := range []string{"Performance.enable", "HeapProfiler.collectGarbage"} {
		if err := b.call(s, m, map[string]any{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var r struct {
		Metrics []struct {
			Name  string  `json:"name"`
			Value float64 `json:"value"`
		} `json:"metrics"`
	}
	if err := b.call(s, "Performance.getMetrics", map[string]any{}, &r); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, m := range r.Metrics {
		out[m.Name] = m.Value
	}
	return out
}

// busyDay drives the site of dashSite through a day on the test clock:
// every five minutes some tickets, calls at every counter, and the
// tickets in hand done.
type busyDay struct {
	t      *testing.T
	e      *env
	n      int
	events int
	last   int64
}

func (d *busyDay) op(name string, _ queue.Ticket, err error) {
	d.t.Helper()
	if err != nil && !queueEmpty(err) {
		d.t.Fatalf("%s: %v", name, err)
	}
	if err == nil {
		d.events++
	}
}

func queueEmpty(err error) bool {
	return errors.Is(err, queue.ErrNoneWaiting) || errors.Is(err, queue.ErrCounterIdle)
}

// run advances the clock by span in steps of step, issuing perStep
// tickets (A mostly, some F and E) and, at each counter, completing the
// ticket in hand and calling the next.
func (d *busyDay) run(span, step time.Duration, perStep int) {
	ctx := context.Background()
	for range int(span / step) {
		d.e.clock.Add(step)
		for i := range perStep {
			d.n++
			svc := []string{"A", "A", "F", "A", "E", "F"}[i%6]
			tk, err := d.e.eng.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: "main", Device: "kiosk", Key: fmt.Sprint("k", d.n)}, Service: svc})
			d.op("issue", tk, err)
		}
		for _, c := range []string{"1", "2", "3", "5"} {
			d.counter(c)
		}
	}
	v, err := d.e.eng.LastVersion(ctx, "main")
	if err != nil {
		d.t.Fatal(err)
	}
	d.last = v
}

// counter completes the ticket its counter started a step before, calls
// the next and starts it; now and then the one called is a no-show (at
// counter 2) or sent to service A (at counter 3). Counter 1 is a person,
// li.na, the others keypads.
func (d *busyDay) counter(c string) {
	ctx := context.Background()
	dev := "keypad-" + c
	if c == "1" {
		dev = "user:li.na@counter-1"
	}
	cr := queue.CounterRequest{Request: queue.Request{Site: "main", Device: dev}, Counter: c}
	tk, err := d.e.eng.Complete(ctx, cr)
	d.op("done", tk, err)
	tk, err = d.e.eng.CallNext(ctx, cr)
	d.op("next", tk, err)
	if err != nil {
		return
	}
	switch {
	case c == "2" && d.n%7 == 0:
		tk, err = d.e.eng.NoShow(ctx, cr)
	case c == "3" && d.n%5 == 0:
		tk, err = d.e.eng.Transfer(ctx, queue.TransferRequest{Request: cr.Request, Counter: c, ToService: "A"})
	default:
		tk, err = d.e.eng.Start(ctx, cr)
	}
	d.op("act", tk, err)
}

// bookings books four of today's places at each resource (10:00 and
// 10:30) and returns the bookings.
func (d *busyDay) bookings() []queue.Booking {
	ctx := context.Background()
	var out []queue.Booking
	for _, r := range []string{"li", "vacc"} {
		slots, err := d.e.eng.Slots(ctx, "main", r, "2026-03-02")
		if err != nil || len(slots) < 4 {
			d.t.Fatalf("slots of %s: %d, %v", r, len(slots), err)
		}
		for i := range 4 {
			bk, _, err := d.e.eng.Book(ctx, queue.BookRequest{Request: queue.Request{Site: "main", Device: "api:test", Key: fmt.Sprint("b", r, i)},
				Slot: slots[i/2+2].ID, Patient: fmt.Sprint("p-", r, i)})
			if err != nil {
				d.t.Fatal(err)
			}
			out = append(out, bk)
		}
	}
	return out
}

// checkIn checks the booking in, as the kiosk does.
func (d *busyDay) checkIn(bk queue.Booking) {
	_, err := d.e.eng.CheckIn(context.Background(), queue.BookingRequest{Request: queue.Request{Site: "main", Device: "kiosk", Key: fmt.Sprint("ci", bk.ID)}, ID: bk.ID})
	if err != nil {
		d.t.Fatalf("check in %d: %v", bk.ID, err)
	}
}
