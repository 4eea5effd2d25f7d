package daemon

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nowserving/nowserving/web"
)

// Readiness is /readyz's check: the store is open, its schema is the
// newest this binary embeds, and it can write now (sqlstore.Store.Probe).
// Both listeners are open before the HTTP server serves, so "listeners up"
// holds whenever /readyz answers. One probe runs at a time, with the store
// deadline and detached from the request that started it, and its result
// is kept for readyTTL: a load balancer polling /readyz adds at most one
// small write per readyTTL, and never holds SQLite's one writer longer
// than the store deadline.
type Readiness struct {
	ps      *PendingStore
	daemon  string           // the probe's row in the health table
	timeout time.Duration    // the store deadline
	now     func() time.Time // time.Now; a test gives its own clock

	mu      sync.Mutex
	at      time.Time // when the last probe ended
	err     error     // its result
	running chan struct{}
}

// readyTTL is how long a probe's result answers /readyz.
const readyTTL = time.Second

// NewReadiness returns the readiness of the store ps will hold, probed as
// daemon (its row of the health table) within timeout.
func NewReadiness(ps *PendingStore, daemon string, timeout time.Duration) *Readiness {
	return &Readiness{ps: ps, daemon: daemon, timeout: timeout, now: time.Now}
}

// Ready reports whether the daemon can serve; it returns when ctx ends
// even if the probe has not.
func (r *Readiness) Ready(ctx context.Context) error {
	if _, err := r.ps.Store(); err != nil {
		return err
	}
	r.mu.Lock()
	if r.running == nil && (r.at.IsZero() || r.now().Sub(r.at) >= readyTTL) {
		r.running = make(chan struct{})
		go r.probe(r.running)
	}
	wait := r.running
	err := r.err
	r.mu.Unlock()
	if wait == nil {
		return err
	}
	select {
	case <-wait:
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.err
	case <-ctx.Done():
		return fmt.Errorf("store did not answer within %s", web.ReadyTimeout)
	}
}

func (r *Readiness) probe(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	err := r.check(ctx)
	r.mu.Lock()
	r.at, r.err, r.running = r.now(), err, nil
	r.mu.Unlock()
	close(done)
}

func (r *Readiness) check(ctx context.Context) error {
	st, err := r.ps.Store()
	if err != nil {
		return err
	}
	if err := st.CheckSchema(ctx); err != nil {
		return err
	}
	return st.Probe(ctx, r.daemon)
}
