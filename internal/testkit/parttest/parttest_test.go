package parttest

import (
	"context"
	"errors"
	"testing"
)

// part ends Run when Shutdown is called, with runErr; Shutdown returns
// shutErr.
type part struct {
	stop            chan struct{}
	runErr, shutErr error
}

func (p *part) Run(ctx context.Context) error { <-p.stop; return p.runErr }

func (p *part) Shutdown(ctx context.Context) error { close(p.stop); return p.shutErr }

// recorder counts the failures Stop reports.
type recorder struct {
	testing.TB
	errors int
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.errors++ }

func TestStop(t *testing.T) {
	for _, c := range []struct {
		name            string
		runErr, shutErr error
		ok              bool
	}{
		{"clean", nil, nil, true},
		{"run fails", errors.New("boom"), nil, false},
		{"shutdown fails", nil, context.DeadlineExceeded, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &part{stop: make(chan struct{}), runErr: c.runErr, shutErr: c.shutErr}
			r := &recorder{TB: t}
			if ok := Stop(r, p, Go(t.Context(), p)); ok != c.ok || (r.errors == 0) != c.ok {
				t.Errorf("Stop = %v with %d errors, want %v", ok, r.errors, c.ok)
			}
		})
	}
}

func TestStart(t *testing.T) {
	p := &part{stop: make(chan struct{})}
	t.Run("inner", func(t *testing.T) { Start(t, t.Context(), p) })
	select {
	case <-p.stop:
	default:
		t.Error("Start did not stop the part when its test ended")
	}
}
