package client

import (
	"time"

	"github.com/nowserving/nowserving/internal/backoff"
	"github.com/nowserving/nowserving/internal/positive"
)

// Backoff returns the pause before retry number attempt (0 for the first
// retry): backoff.Exp from min (DefaultMinBackoff when 0) up to max — with
// the defaults 0.5 s, 1 s, 2 s, 4 s, then 5 s, as PROTOCOL.md §6 suggests.
// It is pure; the client adds up to 20% jitter so that many devices do not
// come back in step.
func Backoff(attempt int, min, max time.Duration) time.Duration {
	min = positive.Or(min, DefaultMinBackoff)
	return backoff.Exp(attempt, min, max)
}
