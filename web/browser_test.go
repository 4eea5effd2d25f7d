package web

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// artifacts is where screenshots go: $NOWSERVING_ARTIFACTS, else a
// temporary directory.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("NOWSERVING_ARTIFACTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBrowser opens the hall display and a ticket page in headless
// Chromium: the display shows a call within a second of a keypad pressing
// next, and the ticket page says which counter calls it. The 1 s bound is
// a correctness window (the page is live), not a performance target.
func TestBrowser(t *testing.T) {
	b := startBrowser(t) // one browser for the subtests: it is slow to start
	t.Run("call", func(t *testing.T) { testCall(t, b) })
	t.Run("words", func(t *testing.T) { testWords(t, b) })
}

func testCall(t *testing.T, b *browser) {
	e := newEnv(t, nil)
	e.issue("A")
	e.issue("A")
	dir := artifacts(t)

	display := b.open(t, e.http.URL+"/display/main")
	ticket := b.open(t, e.http.URL+"/t/main/A002")
	b.waitFor(t, display, "document.body.dataset.ready", "1", 20*time.Second)
	b.waitFor(t, display, "document.getElementById('current-number').textContent", "\u2014", time.Second)
	b.waitFor(t, ticket, "document.body.dataset.status", "WAITING", 20*time.Second)
	b.waitFor(t, ticket, "document.getElementById('ahead').textContent", "1", time.Second)

	start := time.Now()
	e.call("5") // the keypad presses next: A001 to counter 5
	seen := b.waitFor(t, display, "document.getElementById('current-number').textContent", "A001", 5*time.Second)
	// The page stamps when it rendered the call (browser and test share
	// the machine's clock); polling over the DevTools pipe adds its own
	// tens of milliseconds, so the bound is checked on the page's stamp.
	v, err := b.eval(display, "document.body.dataset.shownAt")
	if err != nil {
		t.Fatal(err)
	}
	shown, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("data-shown-at %q: %v", v, err)
	}
	if d := time.Duration(shown-start.UnixMilli()) * time.Millisecond; d > time.Second {
		t.Errorf("display showed the call %v after it, want within 1 s", d)
	} else {
		t.Logf("display rendered A001 %v after the call (seen by the test after %v)", d, seen.Sub(start).Round(time.Millisecond))
	}
	b.waitFor(t, display, "document.getElementById('current-counter').textContent", "Counter 5", time.Second)
	b.waitFor(t, display, "document.body.dataset.chimes", "1", time.Second) // one call, one chime
	if v, _ := b.eval(display, "document.body.dataset.audio"); v != "running" {
		t.Logf("audio context %s (muted headless browser)", v)
	}
	b.waitFor(t, display, "document.querySelector('#waiting .count').textContent", "1", time.Second)
	b.waitFor(t, ticket, "document.getElementById('ahead').textContent", "0", 2*time.Second)

	ctx := context.Background()
	if _, err := e.eng.Start(ctx, queue.CounterRequest{Request: queue.Request{Site: "main", Device: "k"}, Counter: "5"}); err != nil {
		t.Fatal(err)
	}
	e.call("5") // A002, the ticket page's number
	b.waitFor(t, ticket, "document.getElementById('message').textContent", "You are being called to counter 5", 2*time.Second)
	b.waitFor(t, display, "document.querySelector('#calls .number').textContent", "A001", 2*time.Second)

	for name, s := range map[string]string{"display.png": display, "ticket.png": ticket} {
		png := b.screenshot(t, s)
		if !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Fatalf("%s: not a PNG", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots in %s", dir)
}

// testWords: a site whose main language is Chinese gets the page's
// own words in Chinese (names come from the configuration). CJK glyphs
// need a font such as Debian's fonts-noto-cjk to look right on a screen;
// the test checks the text, not the pixels.
func testWords(t *testing.T, b *browser) {
	e := newEnv(t, func(qo *queue.Opts, _ *Opts) { qo.Sites[0].Languages = []string{"zh", "en"} })
	page := b.open(t, e.http.URL+"/display/main")
	b.waitFor(t, page, "document.body.dataset.ready", "1", 20*time.Second)
	b.waitFor(t, page, "document.querySelector('[data-word=nowCalling]').textContent", "\u6b63\u5728\u547c\u53eb", time.Second)
	b.waitFor(t, page, "document.documentElement.lang", "zh", time.Second)
	// Names fall back to another language when the site has none in zh.
	b.waitFor(t, page, "document.getElementById('site').textContent", "Main Hall", time.Second)
}
