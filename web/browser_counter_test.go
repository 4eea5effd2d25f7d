package web

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue"
)

// TestBrowserCounter drives the counter page in headless Chromium: two
// pages and a keypad calling at once never get the same ticket (race); a
// counter clerk is refused at another counter (refused); a whole cycle by
// keyboard alone (keyboard); login, logout, time-out, CSRF, rate limit and
// a disabled account as a person meets them (login); screenshots at
// 1920×1080 and 390×844 in en, zh and pt (shots).
func TestBrowserCounter(t *testing.T) {
	b := startBrowser(t)
	t.Run("race", func(t *testing.T) { testCounterRace(t, b) })
	t.Run("refused", func(t *testing.T) { testCounterRefused(t, b) })
	t.Run("keyboard", func(t *testing.T) { testCounterKeyboard(t, b) })
	t.Run("login", func(t *testing.T) { testCounterLogin(t, b) })
	t.Run("shots", func(t *testing.T) { testCounterShots(t, b) })
}

// counterSite adds counters 7 and 8, serving A as counter 5 does.
func counterSite(qo *queue.Opts, _ *Opts) {
	s := &qo.Sites[0]
	s.Languages = []string{"en", "zh", "pt"}
	s.Names["zh"], s.Names["pt"] = "门诊大厅", "Sala principal"
	s.Services[0].Names["zh"], s.Services[0].Names["pt"] = "普通门诊", "Clínica geral"
	for _, id := range []string{"7", "8"} {
		s.Counters = append(s.Counters, queue.Counter{ID: id, Names: map[string]string{"en": "Counter " + id, "zh": id + "号窗口", "pt": "Balcão " + id},
			Services: []queue.CounterService{{Service: "A", Weight: 1}}, Policy: queue.PolicyStrict})
	}
	s.Counters[0].Names["zh"], s.Counters[0].Names["pt"] = "5号窗口", "Balcão 5"
}

// window is one browser context (its own cookies: one person) with a page.
func (b *browser) window(t *testing.T, url string, w, h int) string {
	t.Helper()
	var c struct {
		BrowserContextID string `json:"browserContextId"`
	}
	if err := b.call("", "Target.createBrowserContext", map[string]any{}, &c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = b.call("", "Target.disposeBrowserContext", map[string]any{"browserContextId": c.BrowserContextID}, nil)
	})
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call("", "Target.createTarget", map[string]any{"url": "about:blank", "browserContextId": c.BrowserContextID}, &target); err != nil {
		t.Fatal(err)
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		t.Fatal(err)
	}
	s := att.SessionID
	if err := b.call(s, "Emulation.setDeviceMetricsOverride", map[string]any{"width": w, "height": h, "deviceScaleFactor": 1, "mobile": w < 800}, nil); err != nil {
		t.Fatal(err)
	}
	b.navigate(t, s, url)
	return s
}

func (b *browser) navigate(t *testing.T, s, url string) {
	t.Helper()
	if err := b.call(s, "Page.navigate", map[string]any{"url": url}, nil); err != nil {
		t.Fatal(err)
	}
}

// press types one key as a keyboard does (keyDown with its text, keyUp).
func (b *browser) press(t *testing.T, s, key string) {
	t.Helper()
	codes := map[string]int{"Tab": 9, "Enter": 13, "Escape": 27, "ArrowDown": 40, "ArrowUp": 38, " ": 32}
	down := map[string]any{"type": "keyDown", "key": key}
	if c, ok := codes[key]; ok {
		down["windowsVirtualKeyCode"], down["nativeVirtualKeyCode"] = c, c
		if key == "Enter" {
			down["text"] = "\r"
		}
		if key == " " {
			down["text"] = " "
		}
	} else {
		down["text"] = key
		down["windowsVirtualKeyCode"] = int(strings.ToUpper(key)[0])
	}
	for _, ev := range []map[string]any{down, {"type": "keyUp", "key": key, "windowsVirtualKeyCode": down["windowsVirtualKeyCode"]}} {
		if err := b.call(s, "Input.dispatchKeyEvent", ev, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// typeText types text into the focused field.
func (b *browser) typeText(t *testing.T, s, text string) {
	t.Helper()
	if err := b.call(s, "Input.insertText", map[string]any{"text": text}, nil); err != nil {
		t.Fatal(err)
	}
}

// awaitEval evaluates an expression that gives a promise and returns its
// value as a string.
func (b *browser) awaitEval(t *testing.T, s, expr string) string {
	t.Helper()
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
	}
	if err := b.call(s, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(r.Result.Value)
}

// loginByKeys logs in on the login page with the keyboard alone: the name
// field has the focus, Tab to the password, Enter submits.
func (b *browser) loginByKeys(t *testing.T, s, name, pw string) {
	t.Helper()
	b.waitFor(t, s, "document.activeElement && document.activeElement.id", "name", 10*time.Second)
	b.typeText(t, s, name)
	b.press(t, s, "Tab")
	b.typeText(t, s, pw)
	b.press(t, s, "Enter")
}

// clerk opens a logged-in counter page for name in a window of its own.
func (b *browser) clerk(t *testing.T, se *staffEnv, name, query string, w, h int) string {
	t.Helper()
	s := b.window(t, se.http.URL+"/login", w, h)
	b.loginByKeys(t, s, name, "secret-pass")
	b.waitFor(t, s, "location.pathname", "/counter", 10*time.Second)
	if query != "" {
		b.navigate(t, s, se.http.URL+"/counter"+query)
	}
	b.waitFor(t, s, "document.body.dataset.ready", "1", 10*time.Second)
	return s
}

const numberJS = "document.getElementById('number').textContent"

func testCounterRace(t *testing.T, b *browser) {
	se := newStaffEnv(t, counterSite)
	se.issueN(40, "A")
	p1 := b.clerk(t, se, "li.na", "", 1280, 800)
	p2 := b.clerk(t, se, "wang", "?counter=7", 1280, 800)
	ctx := context.Background()
	var seen []string
	for round := range 8 {
		for _, p := range []string{p1, p2} {
			b.waitFor(t, p, "document.getElementById('a-next').getAttribute('aria-disabled')", "false", 10*time.Second)
		}
		var wg sync.WaitGroup
		var keypad queue.Ticket
		var kerr error
		wg.Add(3)
		go func() { defer wg.Done(); _, _ = b.eval(p1, "document.getElementById('a-next').click()") }()
		go func() {
			defer wg.Done()
			_, _ = b.eval(p2, "document.getElementById('a-next').click(); document.getElementById('a-next').click()")
		}()
		go func() {
			defer wg.Done()
			keypad, kerr = se.eng.CallNext(ctx, queue.CounterRequest{Request: queue.Request{Site: "main", Device: "keypad-8", Key: fmt.Sprint("k", round)}, Counter: "8"})
		}()
		wg.Wait()
		if kerr != nil {
			t.Fatal(kerr)
		}
		n1 := waitNumber(t, b, p1)
		n2 := waitNumber(t, b, p2)
		got := []string{n1, n2, keypad.Number}
		for _, n := range got {
			if slices.Contains(seen, n) {
				t.Fatalf("round %d: %s called twice (%v, before %v)", round, n, got, seen)
			}
			seen = append(seen, n)
		}
		if n1 == n2 || n1 == keypad.Number || n2 == keypad.Number {
			t.Fatalf("round %d: the same ticket twice: %v", round, got)
		}
		for _, p := range []string{p1, p2} {
			b.waitFor(t, p, "document.getElementById('a-start').getAttribute('aria-disabled')", "false", 10*time.Second)
			b.press(t, p, "s")
			b.waitFor(t, p, "document.getElementById('ticket-state').textContent", "Being served", 10*time.Second)
			b.waitFor(t, p, "document.getElementById('a-done').getAttribute('aria-disabled')", "false", 10*time.Second)
			b.press(t, p, "d")
		}
		kp := queue.CounterRequest{Request: queue.Request{Site: "main", Device: "keypad-8"}, Counter: "8"}
		if _, err := se.eng.Start(ctx, kp); err != nil {
			t.Fatal(err)
		}
		if _, err := se.eng.Complete(ctx, queue.CounterRequest{Request: queue.Request{Site: "main", Device: "keypad-8"}, Counter: "8"}); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{p1, p2} {
			b.waitFor(t, p, numberJS, "—", 10*time.Second)
		}
	}
	// The log agrees: 24 calls, each of another ticket, by the people
	// named with their counters and by the keypad.
	evs, err := se.eng.Events(ctx, "main", 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	called := map[string]int{}
	actors := map[string]int{}
	for _, e := range evs {
		if e.Type == queue.EventCalled {
			called[e.Number]++
			actors[e.Actor]++
		}
	}
	for n, c := range called {
		if c != 1 {
			t.Errorf("%s called %d times", n, c)
		}
	}
	if len(called) != 24 || actors["user:li.na@counter-5"] != 8 || actors["user:wang@counter-7"] != 8 || actors["keypad-8"] != 8 {
		t.Fatalf("calls %d, by %v", len(called), actors)
	}
}

// waitNumber waits until the page shows a ticket in hand and returns it.
func waitNumber(t *testing.T, b *browser, p string) string {
	t.Helper()
	var n string
	if !poll.Within(10*time.Second, 20*time.Millisecond, func() bool {
		var err error
		if n, err = b.eval(p, numberJS); err != nil {
			t.Fatal(err)
		}
		return n != "—" && n != ""
	}) {
		t.Fatal("no ticket in hand after 10 s")
	}
	return n
}

func testCounterRefused(t *testing.T, b *browser) {
	se := newStaffEnv(t, counterSite)
	se.issue("A")
	// Asked for counter 7, the clerk of counter 5 is given 5: the picker
	// offers only their own.
	p := b.clerk(t, se, "li.na", "?counter=7", 1280, 800)
	if got, _ := b.eval(p, "document.getElementById('pick').value + ' ' + document.getElementById('pick').options.length"); got != "main/5 1" {
		t.Fatalf("picker %q", got)
	}
	// A request for counter 7 made from the page all the same.
	got := b.awaitEval(t, p, `fetch("/counter/api/main/7/next", {method: "POST", headers: {"Content-Type": "application/json",
		"X-CSRF-Token": document.getElementById("logout-csrf").value}, body: JSON.stringify({key: "forged-0001"})}).then(function (r) { return r.status + " " + r.headers.get("Content-Type"); })`)
	if got != "403 application/problem+json" {
		t.Fatalf("another counter: %s", got)
	}
	if !strings.Contains(se.log.String(), "staff refused at a counter not theirs") || !strings.Contains(se.log.String(), "counter=7") {
		t.Fatalf("not logged: %s", se.log.String())
	}
	if v := lastVersion(t, se.env); v != 1 {
		t.Fatalf("version %d after a refusal, want 1 (the issue)", v)
	}
}

func testCounterKeyboard(t *testing.T, b *browser) {
	se := newStaffEnv(t, counterSite)
	a1, a2, a3 := se.issue("A"), se.issue("A"), se.issue("A")
	a4 := se.issue("A")
	p := b.clerk(t, se, "li.na", "", 1366, 768)
	msg := "document.getElementById('message').textContent"
	state := "document.getElementById('ticket-state').textContent"
	step := func(key, wantMsg string) {
		t.Helper()
		b.press(t, p, key)
		b.waitFor(t, p, msg, wantMsg, 10*time.Second)
	}
	step("n", "Called "+a1.Number+".")
	b.waitFor(t, p, numberJS, a1.Number, 5*time.Second)
	step("r", "Called "+a1.Number+" again.")
	b.waitFor(t, p, "document.getElementById('ticket-meta').textContent.indexOf('called 2×') >= 0", "true", 5*time.Second)
	step("s", "Serving "+a1.Number+".")
	b.waitFor(t, p, state, "Being served", 5*time.Second)
	// A refusal in place: no-show of a ticket being served.
	step("x", "Not possible in the ticket's state.")
	step("d", a1.Number+" done.")
	b.waitFor(t, p, numberJS, "—", 5*time.Second)
	step("n", "Called "+a2.Number+".")
	step("x", a2.Number+" marked no-show.")
	// Call a number: C opens the dialog, type, Enter.
	b.waitFor(t, p, numberJS, "—", 5*time.Second)
	b.press(t, p, "c")
	b.waitFor(t, p, "document.activeElement.id", "call-number", 5*time.Second)
	b.typeText(t, p, strings.ToLower(a4.Number))
	b.press(t, p, "Enter")
	b.waitFor(t, p, msg, "Called "+a4.Number+".", 10*time.Second)
	// Transfer by keys: T, arrows to counter 8 (after the services A and
	// F and the counters 6 and 7), Tab to the reason, Enter.
	b.press(t, p, "t")
	b.waitFor(t, p, "document.activeElement.id", "to", 5*time.Second)
	for range 4 {
		b.press(t, p, "ArrowDown")
	}
	b.waitFor(t, p, "document.getElementById('to').value", "counter:8", 5*time.Second)
	b.press(t, p, "Tab")
	b.waitFor(t, p, "document.activeElement.id", "reason", 5*time.Second)
	b.typeText(t, p, "needs the other desk")
	b.press(t, p, "Enter")
	b.waitFor(t, p, msg, a4.Number+" transferred.", 10*time.Second)
	step("p", "Counter paused.")
	b.waitFor(t, p, "document.getElementById('mode').textContent", "Counter: Paused", 5*time.Second)
	step("n", "The counter is paused: resume it first.")
	step("o", "Counter open again.")
	step("n", "Called "+a3.Number+".")
	evs, err := se.eng.Events(context.Background(), "main", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		if e.Actor == "user:li.na@counter-5" {
			got = append(got, string(e.Type)+" "+e.Number+" "+e.Detail)
		}
	}
	want := []string{"CALLED " + a1.Number + " ", "RECALLED " + a1.Number + " ", "SERVING " + a1.Number + " ", "DONE " + a1.Number + " ",
		"CALLED " + a2.Number + " ", "NO_SHOW " + a2.Number + " ", "CALLED " + a4.Number + " ",
		"TRANSFERRED " + a4.Number + " counter 8: needs the other desk", "COUNTER_PAUSED  ", "COUNTER_OPENED  ", "CALLED " + a3.Number + " "}
	if !slices.Equal(got, want) {
		t.Fatalf("events by li.na:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func testCounterLogin(t *testing.T, b *browser) {
	se := newStaffEnv(t, counterSite)
	alert := "(document.getElementById('login-error') || {}).textContent"
	p := b.window(t, se.http.URL+"/counter", 390, 844)
	b.waitFor(t, p, "location.pathname", "/login", 10*time.Second)
	b.loginByKeys(t, p, "li.na", "wrong-pass")
	b.waitFor(t, p, alert, "Wrong name or password.", 10*time.Second)
	b.loginByKeys(t, p, "off", "secret-pass")
	b.waitFor(t, p, alert, "This account is disabled. Ask an administrator.", 10*time.Second)
	b.loginByKeys(t, p, "li.na", "secret-pass")
	b.waitFor(t, p, "document.body.dataset.ready", "1", 10*time.Second)
	// A forged request from the page (no token) is refused.
	if got := b.awaitEval(t, p, `fetch("/counter/api/main/5/next", {method: "POST", headers: {"Content-Type": "application/json"},
		body: JSON.stringify({key: "forged-0002"})}).then(function (r) { return r.json(); }).then(function (j) { return j.code; })`); got != "csrf" {
		t.Fatalf("no token: %s", got)
	}
	// Log out with the keyboard: focus the button, Enter.
	b.eval(p, "document.getElementById('logout').focus()")
	b.press(t, p, "Enter")
	b.waitFor(t, p, "location.pathname", "/login", 10*time.Second)
	b.navigate(t, p, se.http.URL+"/counter")
	b.waitFor(t, p, "location.pathname", "/login", 10*time.Second)
	// The session ends after being idle: the page's next read sends the
	// person to the login page, which says why.
	b.loginByKeys(t, p, "li.na", "secret-pass")
	b.waitFor(t, p, "document.body.dataset.ready", "1", 10*time.Second)
	se.clock.Add(11 * time.Minute)
	se.issue("A") // the stream's next state makes the page read its board
	b.waitFor(t, p, "location.pathname + location.search", "/login?ended=1", 10*time.Second)
	b.waitFor(t, p, alert, "Your session ended. Please log in again.", 10*time.Second)
	// The rate limit (LoginLimit 3): this address failed once above (and
	// the disabled account's right password counts no failure); two more,
	// then even the right password waits.
	for range 2 {
		b.navigate(t, p, se.http.URL+"/login")
		b.loginByKeys(t, p, "wang", "wrong-pass")
		b.waitFor(t, p, alert, "Wrong name or password.", 10*time.Second)
	}
	b.navigate(t, p, se.http.URL+"/login")
	b.loginByKeys(t, p, "wang", "secret-pass")
	b.waitFor(t, p, alert, "Too many failed logins. Wait 15 minutes and try again.", 10*time.Second)
}

// fitJS reports what a phone would scroll sideways or cut: "ok", or the
// elements wider than the viewport.
const fitJS = `(function () {
  var W = innerWidth, bad = [];
  if (document.documentElement.scrollWidth > W) bad.push("page scrolls sideways: " + document.documentElement.scrollWidth);
  document.querySelectorAll("body *").forEach(function (e) {
    var r = e.getBoundingClientRect();
    if (r.width && (r.left < -0.5 || r.right > W + 0.5) && !e.closest("dialog")) bad.push(e.tagName + "#" + e.id + " " + Math.round(r.left) + ".." + Math.round(r.right));
  });
  document.querySelectorAll("button").forEach(function (e) {
    var r = e.getBoundingClientRect(); // a hidden button has no box
    if (!e.closest("dialog") && r.width > 0 && r.height < 44) bad.push("button too small to touch: " + (e.id || e.textContent));
  });
  return bad.length ? bad.join("; ") : "ok";
})()`

// contrastJS reports each text whose colour is below WCAG 2.1 AA contrast
// with the background it is drawn on (4.5:1, 3:1 for large text: 24 px,
// or 18.7 px bold): "ok", or the texts and their ratios. Disabled
// controls are exempt (WCAG 1.4.3), as are texts in closed dialogs.
const contrastJS = `(function () {
  function rgb(s) { var m = s.match(/[\d.]+/g) || [0, 0, 0, 0]; return { r: +m[0], g: +m[1], b: +m[2], a: m[3] === undefined ? 1 : +m[3] }; }
  function lum(c) { return [c.r, c.g, c.b].map(function (v) { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); })
    .reduce(function (s, v, i) { return s + v * [0.2126, 0.7152, 0.0722][i]; }, 0); }
  function bg(e) {
    for (; e; e = e.parentElement) { var c = rgb(getComputedStyle(e).backgroundColor); if (c.a > 0.5) return c; }
    return { r: 255, g: 255, b: 255, a: 1 };
  }
  var bad = [];
  document.querySelectorAll("body *").forEach(function (e) {
    var own = Array.prototype.some.call(e.childNodes, function (n) { return n.nodeType === 3 && n.textContent.trim(); });
    if (!own || e.closest("dialog:not([open])") || e.closest("[aria-disabled=true]") || e.closest("[hidden]")) return;
    var cs = getComputedStyle(e), r = e.getBoundingClientRect();
    if (!r.width || cs.visibility === "hidden") return;
    var fg = lum(rgb(cs.color)), b = lum(bg(e)), ratio = (Math.max(fg, b) + 0.05) / (Math.min(fg, b) + 0.05);
    var size = parseFloat(cs.fontSize), large = size >= 24 || (size >= 18.66 && +cs.fontWeight >= 700);
    if (ratio < (large ? 3 : 4.5)) bad.push(JSON.stringify(e.textContent.trim().slice(0, 20)) + " " + ratio.toFixed(2));
  });
  return bad.length ? bad.join("; ") : "ok";
})()`

func testCounterShots(t *testing.T, b *browser) {
	se := newStaffEnv(t, counterSite)
	ctx := context.Background()
	// A morning: a ticket every 2 minutes, two of them VIP and one an
	// emergency; counter 5 serves the emergency.
	se.env.clock.Fix(time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC))
	for i := range 16 {
		class := queue.ClassNormal
		switch i {
		case 6, 11:
			class = queue.ClassVIP
		case 9:
			class = queue.ClassEmergency
		}
		if _, err := se.eng.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: "main", Device: "kiosk"}, Service: "A", Class: class}); err != nil {
			t.Fatal(err)
		}
		se.env.clock.Add(2 * time.Minute)
	}
	se.call("5")
	if _, err := se.eng.Start(ctx, queue.CounterRequest{Request: queue.Request{Site: "main", Device: "keypad"}, Counter: "5"}); err != nil {
		t.Fatal(err)
	}
	dir := artifacts(t)
	for _, size := range [][2]int{{1920, 1080}, {390, 844}} {
		for _, lang := range []string{"en", "zh", "pt"} {
			p := b.clerk(t, se, "li.na", "?lang="+lang, size[0], size[1])
			b.waitFor(t, p, "document.querySelectorAll('.waiting li').length > 0", "true", 10*time.Second)
			if got, _ := b.eval(p, "document.documentElement.lang"); got != lang {
				t.Errorf("%s: page language %q", lang, got)
			}
			b.checkShot(t, p, filepath.Join(dir, fmt.Sprintf("counter-%dx%d-%s.png", size[0], size[1], lang)), size[0])
		}
	}
}

// checkShot checks a people's page for WCAG AA contrast and, narrower
// than 800 px (a phone), for nothing wider than the screen and buttons
// large enough to touch, then writes its full screenshot to path.
func (b *browser) checkShot(t *testing.T, p, path string, width int) {
	t.Helper()
	if got, _ := b.eval(p, contrastJS); got != "ok" {
		t.Errorf("%s: contrast below AA: %s", filepath.Base(path), got)
	}
	if width < 800 {
		if got, _ := b.eval(p, fitJS); got != "ok" {
			t.Errorf("%s: %s", filepath.Base(path), got)
		}
	}
	if err := os.WriteFile(path, b.fullShot(t, p), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fullShot is a screenshot of the whole page, below the fold too (a phone
// scrolls down to the waiting list).
func (b *browser) fullShot(t *testing.T, s string) []byte {
	t.Helper()
	var r struct {
		Data []byte `json:"data"`
	}
	if err := b.call(s, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &r); err != nil {
		t.Fatal(err)
	}
	return r.Data
}
