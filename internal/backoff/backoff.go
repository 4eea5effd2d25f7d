// Package backoff paces retries: a pause that doubles from a minimum up to
// a cap, jitter so that parties failing together do not retry together,
// and a sleep that a context cuts short. It imports only the standard
// library, so that any package (the stores, the drivers, the client) may
// use it.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Exp returns the pause before retry n (0 for the first): min doubled n
// times, capped at max (a max below min counts as min). With min 1 s and
// max 5 s: 1 s, 2 s, 4 s, then 5 s. A min of zero or less gives 0.
func Exp(n int, min, max time.Duration) time.Duration {
	if min <= 0 {
		return 0
	}
	if max < min {
		max = min
	}
	d := min
	for i := 0; i < n && d < max; i++ {
		if d > max/2 {
			return max
		}
		d *= 2
	}
	return d
}

// Jitter returns a pause drawn uniformly from [d/2, d]: it keeps at least
// half of the backoff while spreading out those who failed at once.
func Jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d/2 + rand.N(d-d/2+1)
}

// Sleep waits for d, or until ctx is done and then returns its error. A d
// of zero or less returns at once.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
