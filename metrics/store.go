package metrics

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nowserving/nowserving/queue"
)

// Store is a queue.Store that measures the store it wraps.
type Store struct {
	next    queue.Store
	latency *prometheus.HistogramVec
	errs    *prometheus.CounterVec
	now     func() time.Time
}

var _ queue.Store = (*Store)(nil)

// NewStore wraps next and registers on reg:
//
//	nowserving_store_transaction_duration_seconds{op="update|view"}
//	nowserving_store_errors_total{op, kind="conflict|duplicate|unavailable|other"}
//
// Refusals of one request by the rules (service full, unknown ticket, ...)
// are not store errors and are not counted, nor are cancelled contexts.
// Registering twice on one registry reuses the first collectors; any other
// registration failure is returned.
func NewStore(next queue.Store, reg prometheus.Registerer) (*Store, error) {
	const sub subsystem = "store"
	lat := sub.histogramVec("transaction_duration_seconds", "Time to run and commit one store transaction, by op (update or view).",
		[]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}, "op")
	errs := sub.counterVec("errors_total",
		"Store transactions that failed, by op and kind (conflict, duplicate, unavailable, other).", "op", "kind")
	var err error
	if lat, err = register(reg, lat); err != nil {
		return nil, fmt.Errorf("metrics: register store latency: %w", err)
	}
	if errs, err = register(reg, errs); err != nil {
		return nil, fmt.Errorf("metrics: register store errors: %w", err)
	}
	for _, op := range []string{"update", "view"} {
		lat.WithLabelValues(op)
		for _, k := range []string{"conflict", "aborted", "duplicate", "unavailable", "other"} {
			errs.WithLabelValues(op, k)
		}
	}
	return &Store{next: next, latency: lat, errs: errs, now: time.Now}, nil
}

// Update measures next.Update.
func (s *Store) Update(ctx context.Context, fn func(ctx context.Context, tx queue.Tx) error) error {
	return s.measure("update", func() error { return s.next.Update(ctx, fn) })
}

// View measures next.View.
func (s *Store) View(ctx context.Context, fn func(ctx context.Context, tx queue.Tx) error) error {
	return s.measure("view", func() error { return s.next.View(ctx, fn) })
}

// Close closes next.
func (s *Store) Close() error { return s.next.Close() }

func (s *Store) measure(op string, fn func() error) error {
	start := s.now()
	err := fn()
	s.latency.WithLabelValues(op).Observe(s.now().Sub(start).Seconds())
	if k := ErrorKind(err); k != "" {
		s.errs.WithLabelValues(op, k).Inc()
	}
	return err
}

// ErrorKind classifies a store error for the errors counter: "" for nil and
// for refusals by the rules, else conflict, aborted, duplicate, unavailable or other.
func ErrorKind(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, queue.ErrConflict):
		return "conflict"
	case errors.Is(err, queue.ErrAborted):
		return "aborted"
	case errors.Is(err, queue.ErrDuplicate):
		return "duplicate"
	case errors.Is(err, queue.ErrUnavailable):
		return "unavailable"
	}
	if queue.IsRefusal(err) || errors.Is(err, context.Canceled) {
		return "" // an answer by the rules, or a caller that left
	}
	return "other"
}

// Failovers reports how many times the store dropped its connections
// because the server refused writes (readOnly) or was gone or did not
// answer in time (notAnswering), and a transaction then succeeded again.
type Failovers func() (readOnly, notAnswering uint64)

var failoversDesc = prometheus.NewDesc("nowserving_store_failovers_total",
	"Times the store dropped its connections because the database refused writes (reason read_only) or was gone or did not answer in time (reason not_answering), and a transaction then succeeded on a new connection.",
	[]string{"reason"}, nil)

// RegisterFailovers registers on reg, read from counts at scrape time:
//
//	nowserving_store_failovers_total{reason="read_only|not_answering"}
func RegisterFailovers(reg prometheus.Registerer, counts Failovers) error {
	if err := reg.Register(failovers(counts)); err != nil {
		return fmt.Errorf("metrics: register store failovers: %w", err)
	}
	return nil
}

type failovers Failovers

func (f failovers) Describe(ch chan<- *prometheus.Desc) { ch <- failoversDesc }

func (f failovers) Collect(ch chan<- prometheus.Metric) {
	ro, na := f()
	ch <- prometheus.MustNewConstMetric(failoversDesc, prometheus.CounterValue, float64(ro), "read_only")
	ch <- prometheus.MustNewConstMetric(failoversDesc, prometheus.CounterValue, float64(na), "not_answering")
}
