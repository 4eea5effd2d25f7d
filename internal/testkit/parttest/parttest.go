// Package parttest runs the daemon's long-lived parts in tests: a Run(ctx)
// loop that Shutdown(ctx) ends, as net/http's Serve and Shutdown, or one
// that its context ends (Until).
package parttest

import (
	"context"
	"testing"
	"time"
)

// Part is what the daemon runs: devices.Dispatcher, notify.Worker,
// metrics.Queue, web.Part, ...
type Part interface {
	Run(ctx context.Context) error
	Shutdown(ctx context.Context) error
}

// Go runs p.Run(ctx) on a goroutine; its result arrives on the channel.
func Go(ctx context.Context, p Part) <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- p.Run(ctx) }()
	return errc
}

// Start runs p on ctx until the test ends, then stops it as Stop does.
func Start(t testing.TB, ctx context.Context, p Part) {
	t.Helper()
	errc := Go(ctx, p)
	t.Cleanup(func() { Stop(t, p, errc) })
}

// Until runs run on a goroutine, on a context derived from ctx, until the
// test ends; then it cancels that context and fails the test when run
// returns an error. It is for a loop its context stops instead of a
// Shutdown: the daemon's run, booking.Front.Follow.
func Until(t testing.TB, ctx context.Context, run func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("run: %v", err)
		}
	})
}

// Stop shuts p down (within 10 s) and fails the test when Shutdown fails
// or Run, whose result comes on errc, returned an error; it reports
// whether both ended clean.
func Stop(t testing.TB, p Part, errc <-chan error) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
		return false
	}
	if err := <-errc; err != nil {
		t.Errorf("run: %v", err)
		return false
	}
	return true
}
