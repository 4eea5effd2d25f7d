package booking

import (
	"sync"
	"time"
)

// rate is n requests per window per.
type rate struct {
	n   int
	per time.Duration
}

// limiter counts each patient's requests in fixed windows: at most n in a
// window that starts at the patient's first request. It keeps no state for
// patients whose window ended (swept as the map grows).
type limiter struct {
	rates map[string]rate // by site

	mu      sync.Mutex
	windows map[string]*window // by site and patient
	sweepAt int
}

type window struct {
	start time.Time
	n     int
}

func newLimiter(rates map[string]rate) *limiter {
	return &limiter{rates: rates, windows: map[string]*window{}, sweepAt: 1024}
}

// allow counts one request of patient at site at now; when it is past the
// rate it returns false and how long until the window ends.
func (l *limiter) allow(site, patient string, now time.Time) (time.Duration, bool) {
	r, ok := l.rates[site]
	if !ok || r.n <= 0 || r.per <= 0 {
		return 0, true
	}
	key := site + "\x00" + patient
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.windows[key]
	if w == nil || now.Sub(w.start) >= r.per {
		if len(l.windows) >= l.sweepAt {
			l.sweep(now)
		}
		l.windows[key] = &window{start: now, n: 1}
		return 0, true
	}
	if w.n >= r.n {
		return w.start.Add(r.per).Sub(now), false
	}
	w.n++
	return 0, true
}

// sweep drops the windows that ended; l.mu is held. The next sweep waits
// until the map doubles, so its cost stays proportional to the inserts.
func (l *limiter) sweep(now time.Time) {
	longest := time.Duration(0)
	for _, r := range l.rates {
		longest = max(longest, r.per)
	}
	for k, w := range l.windows {
		if now.Sub(w.start) >= longest {
			delete(l.windows, k)
		}
	}
	l.sweepAt = max(1024, 2*len(l.windows))
}
