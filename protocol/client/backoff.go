package client

import "time"

// Backoff returns the pause before retry number attempt (0 for the first
// retry): min, doubling each time, capped at max — with the defaults 0.5 s,
// 1 s, 2 s, 4 s, then 5 s, as PROTOCOL.md §6 suggests. It is pure; the
// client adds up to 20% jitter so that many devices do not come back in step.
func Backoff(attempt int, min, max time.Duration) time.Duration {
	if min <= 0 {
		min = DefaultMinBackoff
	}
	if max < min {
		max = min
	}
	d := min
	for i := 0; i < attempt && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	return d
}
