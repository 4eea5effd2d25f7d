package notify

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// ReceiverStats counts the attempts of one receiver since the worker
// started.
type ReceiverStats struct {
	Name      string
	Delivered uint64 // messages delivered
	Failed    uint64 // attempts that failed (the last of a dead message included)
	Dead      uint64 // messages given up
}

// Stats is what the worker knows, for the metrics.
type Stats struct {
	// Receivers are the configured receivers, by name.
	Receivers []ReceiverStats
	// Outbox is the outbox as last read (every daemon's messages), at
	// StatusAt; StatusAt is zero before the first read succeeded.
	Outbox   sqlstore.OutboxStatus
	StatusAt time.Time
}

// Stats returns the counts so far and the outbox as last read.
func (w *Worker) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := Stats{Outbox: w.status, StatusAt: w.statusAt}
	for _, c := range w.counts {
		st.Receivers = append(st.Receivers, *c)
	}
	slices.SortFunc(st.Receivers, func(a, b ReceiverStats) int { return strings.Compare(a.Name, b.Name) })
	return st
}

// count applies f to the counts of receiver (one not configured is not
// counted).
func (w *Worker) count(receiver string, f func(*ReceiverStats)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.counts[receiver]; ok {
		f(c)
	}
}

// readStatus reads the outbox's counts for Stats; a failure keeps the last
// ones (the claim's failure is what is logged).
func (w *Worker) readStatus(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, w.o.Timeout)
	defer cancel()
	st, err := w.o.Store.OutboxStatus(ctx, 0)
	if err != nil {
		w.log.Debug("notify: read outbox status", "err", err)
		return
	}
	w.mu.Lock()
	w.status, w.statusAt = st, w.o.Now()
	w.mu.Unlock()
}
