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
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestReadinessRateLimited: however often /readyz is asked, the store is
// probed (its health row written) at most once per readyTTL, and callers
// arriving together share one probe.
func TestReadinessRateLimited(t *testing.T) {
	s := storetest.SQLite(t)
	st := s.Store
	ps := &PendingStore{}
	r := NewReadiness(ps, "d", time.Second)
	var mu sync.Mutex
	now := time.UnixMilli(1_700_000_000_000)
	r.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	wait := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	if err := r.Ready(t.Context()); err == nil || !strings.Contains(err.Error(), "store: connecting") {
		t.Errorf("before the store opened: %v", err)
	}
	ps.opened(st)
	defer ps.Close()
	// The probe's row is written; when it ran is what the probe noted.
	probed := func() time.Time {
		var at int64
		if err := st.DB().QueryRowContext(t.Context(), "SELECT probed_ms FROM health WHERE daemon = 'd'").Scan(&at); err != nil {
			t.Fatal(err)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.at
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if err := r.Ready(t.Context()); err != nil {
				t.Errorf("ready: %v", err)
			}
		})
	}
	wg.Wait()
	first := probed()
	wait(readyTTL - time.Millisecond)
	for range 20 {
		if err := r.Ready(t.Context()); err != nil {
			t.Fatalf("ready: %v", err)
		}
	}
	if again := probed(); again != first {
		t.Errorf("probed again within %s: at %s then %s", readyTTL, first, again)
	}
	wait(time.Millisecond)
	if err := r.Ready(t.Context()); err != nil {
		t.Fatal(err)
	}
	if later := probed(); later == first {
		t.Errorf("not probed again after %s", readyTTL)
	}
}

func TestOpenRetry(t *testing.T) {
	for _, tc := range []struct {
		n        int
		min, max time.Duration
	}{{0, 500 * time.Millisecond, time.Second}, {1, time.Second, 2 * time.Second}, {4, 8 * time.Second, 16 * time.Second},
		{5, 15 * time.Second, 30 * time.Second}, {60, 15 * time.Second, 30 * time.Second}} {
		for range 50 {
			if d := openRetry(tc.n); d < tc.min || d > tc.max {
				t.Errorf("openRetry(%d) = %s, want %s..%s", tc.n, d, tc.min, tc.max)
			}
		}
	}
}

// TestConnector: attempts that find the database unavailable are retried
// (transactions fail as unavailable meanwhile, naming the reason) until
// one opens the store; an error retrying cannot cure stops at once.
func TestConnector(t *testing.T) {
	s := storetest.SQLite(t)
	attempts := 0
	open := func(context.Context) (*sqlstore.Store, error) {
		if attempts++; attempts == 1 {
			return nil, fmt.Errorf("dial: %w", queue.ErrUnavailable)
		}
		return s.Store, nil
	}
	ps := &PendingStore{}
	defer ps.Close()
	k := Connect(ps, "sqlite", open, slog.New(slog.DiscardHandler))
	<-k.First()
	err := ps.Update(t.Context(), func(context.Context, queue.Tx) error { return nil })
	if !errors.Is(err, queue.ErrUnavailable) || !strings.Contains(err.Error(), "dial: ") {
		t.Errorf("while connecting: %v, want ErrUnavailable naming the reason", err)
	}
	poll.Recv(t, k.Done(), "the store to open on the second attempt")
	if err := k.Run(t.Context()); err != nil || attempts != 2 {
		t.Errorf("run: %v after %d attempts", err, attempts)
	}
	if err := ps.View(t.Context(), func(context.Context, queue.Tx) error { return nil }); err != nil {
		t.Errorf("after it opened: %v", err)
	}

	bad := errors.New("password authentication failed")
	k = Connect(&PendingStore{}, "postgres", func(context.Context) (*sqlstore.Store, error) { return nil, bad }, slog.New(slog.DiscardHandler))
	<-k.Done()
	if err := k.Run(t.Context()); !errors.Is(err, bad) {
		t.Errorf("incurable: %v, want %v", err, bad)
	}
}
