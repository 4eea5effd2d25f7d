package protocol

import (
	"time"

	"golang.org/x/time/rate"
)

// bucket is a device's token bucket (golang.org/x/time/rate): rate tokens
// per second, at most burst stored, full at first. A device's sessions
// share one bucket, so reconnecting does not refill it.
type bucket struct {
	lim *rate.Limiter
}

// newBucket makes a bucket of r tokens per second (r < 0: no limit; 0: the
// burst, then nothing) holding at most burst.
func newBucket(r float64, burst int) *bucket {
	l := rate.Limit(r)
	if r < 0 {
		l = rate.Inf
	}
	return &bucket{lim: rate.NewLimiter(l, burst)}
}

// take removes one token at time now. When none is left it returns false
// and how long until one is back (a second at a zero rate, when none will
// be).
func (b *bucket) take(now time.Time) (bool, time.Duration) {
	r := b.lim.ReserveN(now, 1)
	d := r.DelayFrom(now)
	if d == 0 {
		return true, 0
	}
	// Refused, not delayed: the token goes back.
	r.CancelAt(now)
	if b.lim.Limit() == 0 || !r.OK() {
		return false, time.Second
	}
	return false, max(d, time.Millisecond)
}
