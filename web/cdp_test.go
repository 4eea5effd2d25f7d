package web

import (
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/cdptest"
)

// browser is the headless Chromium of package cdptest, with the lower-case
// names the browser tests of this package use.
type browser struct{ *cdptest.Browser }

func startBrowser(t *testing.T) *browser { return &browser{cdptest.Start(t)} }

func (b *browser) call(session, method string, params any, out any) error {
	return b.Call(session, method, params, out)
}

func (b *browser) open(t testing.TB, url string) string { t.Helper(); return b.Open(t, url) }

func (b *browser) openAt(t testing.TB, url string, w, h int) string {
	t.Helper()
	return b.OpenAt(t, url, w, h)
}

func (b *browser) eval(session, expr string) (string, error) { return b.Eval(session, expr) }

func (b *browser) waitFor(t testing.TB, session, expr, want string, timeout time.Duration) time.Time {
	t.Helper()
	return b.WaitFor(t, session, expr, want, timeout)
}

func (b *browser) screenshot(t testing.TB, session string) []byte {
	t.Helper()
	return b.Screenshot(t, session)
}
