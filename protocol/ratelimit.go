package protocol

import (
	"sync"
	"time"
)

// bucket is a token bucket: rate tokens per second, at most burst stored.
// A device's sessions share one bucket, so reconnecting does not refill it.
type bucket struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

func newBucket(rate float64, burst int, now time.Time) *bucket {
	return &bucket{rate: rate, burst: float64(burst), tokens: float64(burst), last: now}
}

// take removes one token at time now. When none is left it returns false
// and how long until one is back.
func (b *bucket) take(now time.Time) (bool, time.Duration) {
	if b.rate < 0 {
		return true, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if el := now.Sub(b.last); el > 0 {
		b.tokens = min(b.burst, b.tokens+el.Seconds()*b.rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	if b.rate == 0 {
		return false, time.Second
	}
	wait := time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
	return false, max(wait, time.Millisecond)
}
