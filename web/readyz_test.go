package web

import (
	"context"
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
