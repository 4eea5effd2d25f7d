package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
)

// fakePart records the order of shutdowns.
type fakePart struct {
	name string
	log  *[]string
	mu   *sync.Mutex
	stop chan struct{}
	err  error
}

func (p *fakePart) Name() string { return p.name }
func (p *fakePart) Run(context.Context) error {
	if p.err != nil {
		return p.err
	}
	<-p.stop
	return nil
}
func (p *fakePart) Shutdown(context.Context) error {
	p.mu.Lock()
	*p.log = append(*p.log, "shutdown "+p.name)
	p.mu.Unlock()
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	return nil
}

func TestGroupOrder(t *testing.T) {
	for _, failing := range []bool{false, true} {
		t.Run(fmt.Sprintf("failing=%v", failing), func(t *testing.T) {
			var got []string
			var mu sync.Mutex
			mk := func(name string) *fakePart {
				return &fakePart{name: name, log: &got, mu: &mu, stop: make(chan struct{})}
			}
			a, b := mk("protocol"), mk("sweeper")
			if failing {
				b.err = errors.New("boom")
			}
			closeStep := func(name string) Closer {
				return Closer{name, func(context.Context) error {
					mu.Lock()
					got = append(got, "close "+name)
					mu.Unlock()
					return nil
				}}
			}
			d := &Group{Logger: slog.New(slog.DiscardHandler), Grace: time.Second, Parts: []Part{a, b},
				Closers: []Closer{closeStep("engine"), closeStep("store")}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- d.Run(ctx) }()
			if !failing {
				cancel()
			}
			err := <-done
			if failing != (err != nil) {
				t.Errorf("run: %v", err)
			}
			want := "shutdown protocol,shutdown sweeper,close engine,close store"
			if s := strings.Join(got, ","); s != want {
				t.Errorf("order %q, want %q", s, want)
			}
		})
	}
}

// stuckPart never stops: its Shutdown and its Run ignore every deadline,
// as a part waiting on a hung database does.
type stuckPart struct{ never chan struct{} }

func (p stuckPart) Name() string                   { return "stuck" }
func (p stuckPart) Run(context.Context) error      { <-p.never; return nil }
func (p stuckPart) Shutdown(context.Context) error { <-p.never; return nil }

// TestGroupAbandons: a signalled shutdown ends within the grace even when
// a part and a closer never return; it names them at WARN and returns nil.
func TestGroupAbandons(t *testing.T) {
	never := make(chan struct{})
	defer close(never)
	var logs strings.Builder // Run has returned before it is read
	d := &Group{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Grace: 300 * time.Millisecond,
		Parts:   []Part{stuckPart{never}},
		Closers: []Closer{{"store", func(context.Context) error { <-never; return nil }}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	cancel()
	start := time.Now()
	if err, _ := poll.Recv(t, done, "run to return after its grace"); err != nil {
		t.Errorf("run: %v, want nil after a signal", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("run returned %s after the signal, grace 300ms", took)
	}
	for _, want := range []string{"level=WARN", "part=stuck", "part=store", "abandon"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}
