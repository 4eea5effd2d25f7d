package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// TestReadyzBounded: a readiness check that never returns, even one that
// ignores its context, gets 503 within ReadyTimeout.
func TestReadyzBounded(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	for name, ready := range map[string]func(context.Context) error{
		"ignores its context": func(context.Context) error { <-hang; return nil },
		"honours its context": func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, func(_ *queue.Opts, o *Opts) { o.Ready = ready })
			start := time.Now()
			p := decode[Problem](t, e.do("GET", "/readyz", "-", ""), 503)
			if took := time.Since(start); took > ReadyTimeout+500*time.Millisecond {
				t.Errorf("/readyz took %s, want at most %s", took, ReadyTimeout)
			}
			if p.Code != "not_ready" || p.Detail == "" {
				t.Errorf("/readyz problem: %+v", p)
			}
			if name == "ignores its context" && !strings.Contains(p.Detail, "store did not answer within 1s") {
				t.Errorf("/readyz detail %q", p.Detail)
			}
		})
	}
}

// TestUnavailableHidesCause: a 503 says what the caller can act on; the
// driver's error behind it goes to the log, not into the body (issue 14).
func TestUnavailableHidesCause(t *testing.T) {
	cause := fmt.Errorf("%w: FATAL: terminating connection due to administrator command (SQLSTATE 57P01)", queue.ErrUnavailable)
	e := newEnv(t, func(_ *queue.Opts, o *Opts) { o.Ready = func(context.Context) error { return cause } })
	p := decode[Problem](t, e.do("GET", "/readyz", "-", ""), 503)
	if p.Detail != "store unavailable" {
		t.Errorf("/readyz detail %q, want %q", p.Detail, "store unavailable")
	}
	rec := httptest.NewRecorder()
	writeError(rec, slog.New(slog.DiscardHandler), cause)
	if body := rec.Body.String(); rec.Code != 503 || strings.Contains(body, "SQLSTATE") || !strings.Contains(body, "store_unavailable") {
		t.Errorf("API 503: %d %s", rec.Code, body)
	}
}

// TestReadyzNamesReason: /readyz says whether the store refuses writes or
// does not answer, so whoever looks knows whether a failover is under way
// (issue 21).
func TestReadyzNamesReason(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("postgres: probe: %w: cannot execute INSERT in a read-only transaction (SQLSTATE 25006)", queue.ErrReadOnly), "store read-only"},
		{fmt.Errorf("mysql: probe: %w: invalid connection", queue.ErrNotAnswering), "store not answering"},
		{fmt.Errorf("postgres: probe: %w", context.DeadlineExceeded), "store not answering"},
		{fmt.Errorf("mysql: probe: %w: too many connections", queue.ErrUnavailable), "store unavailable"},
		{errors.New("schema at version 3, this binary wants 7"), "see the daemon's log"},
	} {
		e := newEnv(t, func(_ *queue.Opts, o *Opts) { o.Ready = func(context.Context) error { return c.err } })
		if p := decode[Problem](t, e.do("GET", "/readyz", "-", ""), 503); p.Detail != c.want {
			t.Errorf("/readyz for %v: detail %q, want %q", c.err, p.Detail, c.want)
		}
	}
}
