package metrics

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nowserving/nowserving/follow"
	"github.com/nowserving/nowserving/internal/part"
	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/view"
)

// QueueOpts configures a Queue collector.
type QueueOpts struct {
	// Engine is followed; required.
	Engine *queue.Engine
	// Registry receives the metrics; required.
	Registry prometheus.Registerer
	// Logger receives subscription problems; nil discards them.
	Logger *slog.Logger
	// ScrapeTimeout bounds the snapshots read at scrape time (default 5s).
	ScrapeTimeout time.Duration
}

// Queue follows the engine's events of every site and keeps the ticket
// counters and the wait and service time histograms; at scrape time it reads
// each site's snapshot for the gauges. Metrics (labels site, service unless
// said otherwise):
//
//	nowserving_queue_tickets_issued_total
//	nowserving_queue_tickets_called_total       (every call, not recalls)
//	nowserving_queue_tickets_served_total       (DONE)
//	nowserving_queue_tickets_noshow_total
//	nowserving_queue_wait_duration_seconds      (issue to first call)
//	nowserving_queue_service_duration_seconds   (start to done)
//	nowserving_queue_wait_target_breaches_total (first call after the service's wait target)
//	nowserving_queue_waiting_tickets            (gauge, scrape time)
//	nowserving_queue_longest_wait_seconds       (gauge, scrape time)
//	nowserving_queue_counters{site, mode}       (gauge, scrape time: open, paused, closed)
//
// The counters and histograms come from the events alone (each carries its
// ticket's wait so far and service time), so a ticket issued before the
// process started is measured like any other; the figures are defined in
// package view: issued and waits by the service that issued the ticket.
type Queue struct {
	eng     *queue.Engine
	log     *slog.Logger
	timeout time.Duration

	issued, called, served, noShow, breaches *prometheus.CounterVec
	wait, service                            *prometheus.HistogramVec

	waitingDesc, longestDesc, countersDesc *prometheus.Desc

	stop *part.Stop // requested by Shutdown; Done when Run returns

	mu       sync.Mutex
	versions map[string]int64 // last version applied per site
	changed  chan struct{}    // closed and replaced after each batch
}

// WaitBuckets are the wait-time histogram buckets in seconds: 30 s to 2 h.
var WaitBuckets = []float64{30, 60, 120, 300, 600, 900, 1200, 1800, 2700, 3600, 7200}

// ServiceBuckets are the service-time histogram buckets in seconds.
var ServiceBuckets = []float64{30, 60, 120, 180, 300, 600, 900, 1200, 1800, 3600}

// NewQueue registers the collector's metrics; Run feeds them.
func NewQueue(o QueueOpts) (*Queue, error) {
	if o.Engine == nil || o.Registry == nil {
		return nil, errors.New("metrics: new queue collector: engine and registry are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.ScrapeTimeout = positive.Or(o.ScrapeTimeout, 5*time.Second)
	const sub subsystem = "queue"
	counter := func(name, help string) *prometheus.CounterVec { return sub.counterVec(name, help, "site", "service") }
	hist := func(name, help string, b []float64) *prometheus.HistogramVec {
		return sub.histogramVec(name, help, b, "site", "service")
	}
	q := &Queue{
		eng: o.Engine, log: o.Logger, timeout: o.ScrapeTimeout,
		issued:   counter("tickets_issued_total", "Tickets issued."),
		called:   counter("tickets_called_total", "Tickets called to a counter (recalls not counted)."),
		served:   counter("tickets_served_total", "Tickets served to the end (DONE)."),
		noShow:   counter("tickets_noshow_total", "Tickets marked no-show."),
		breaches: counter("wait_target_breaches_total", "Tickets first called after waiting longer than the service's wait target."),
		wait:     hist("wait_duration_seconds", "Time from issue to first call.", WaitBuckets),
		service:  hist("service_duration_seconds", "Time from start of service to done.", ServiceBuckets),
		waitingDesc: prometheus.NewDesc("nowserving_queue_waiting_tickets",
			"Tickets waiting now.", []string{"site", "service"}, nil),
		longestDesc: prometheus.NewDesc("nowserving_queue_longest_wait_seconds",
			"How long the ticket waiting longest has waited.", []string{"site", "service"}, nil),
		countersDesc: prometheus.NewDesc("nowserving_queue_counters",
			"Counters by mode (open, paused, closed).", []string{"site", "mode"}, nil),
		versions: map[string]int64{},
		changed:  make(chan struct{}),
		stop:     part.NewStop(),
	}
	if err := registerAll(o.Registry, "queue metrics", q.issued, q.called, q.served, q.noShow, q.breaches, q.wait, q.service, scrape{q}); err != nil {
		return nil, err
	}
	for _, s := range o.Engine.Sites() {
		for _, sv := range s.Services {
			for _, v := range []*prometheus.CounterVec{q.issued, q.called, q.served, q.noShow, q.breaches} {
				v.WithLabelValues(s.ID, sv.Code)
			}
		}
	}
	return q, nil
}

// Name names the collector among the daemon's parts.
func (q *Queue) Name() string { return "metrics" }

// Run follows every site's events from the current version until ctx ends,
// Shutdown is called or the engine closes, and returns nil: store trouble
// is logged and retried, never returned, so metrics cannot stop the
// daemon. A follower that falls too far behind takes a snapshot and goes on
// from it (the missed events are not counted). Run is called once.
func (q *Queue) Run(ctx context.Context) error {
	defer q.stop.Ended()
	ctx, cancel := q.stop.Context(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range q.eng.Sites() {
		wg.Go(func() {
			q.site(ctx, s)
		})
	}
	wg.Wait()
	return nil
}

// site follows one site from a snapshot's version (store trouble is
// retried by the follower: metrics never stop the daemon). After a gap the
// follower's fresh snapshot moves it on: the missed events are not counted.
func (q *Queue) site(ctx context.Context, s queue.Site) {
	q.follow(ctx, s, follow.New(q.eng, s.ID, follow.Opts{Quiet: true, MinRetry: time.Second, Log: q.log, Who: "metrics"}))
}

// follow counts the updates of f until ctx ends or the engine closes.
func (q *Queue) follow(ctx context.Context, s queue.Site, f *follow.Site) {
	for {
		u, err := f.Next(ctx)
		if err != nil {
			return
		}
		for i := range u.Events {
			q.apply(&s, &u.Events[i])
		}
		if v := u.Version(); v > 0 || u.Snapshot != nil {
			q.applied(s.ID, v)
		}
	}
}

// Shutdown stops Run and waits for it within ctx.
func (q *Queue) Shutdown(ctx context.Context) error {
	return q.stop.Shutdown(ctx, "metrics: shutdown")
}

func (q *Queue) applied(site string, v int64) {
	q.mu.Lock()
	q.versions[site] = v
	close(q.changed)
	q.changed = make(chan struct{})
	q.mu.Unlock()
}

// waitVersion blocks until the events of site up to v are applied.
func (q *Queue) waitVersion(ctx context.Context, site string, v int64) error {
	for {
		q.mu.Lock()
		got, ch := q.versions[site], q.changed
		q.mu.Unlock()
		if got >= v {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// apply counts one event. What an event contributes (which service
// issued the ticket, whether it is a first call and its wait, a service
// time) is defined once, in package view.
func (q *Queue) apply(s *queue.Site, ev *queue.Event) {
	switch ev.Type {
	case queue.EventIssued:
		q.issued.WithLabelValues(s.ID, view.Issuer(ev)).Inc()
	case queue.EventCalled:
		q.called.WithLabelValues(s.ID, ev.Service).Inc()
	case queue.EventNoShow:
		q.noShow.WithLabelValues(s.ID, ev.Service).Inc()
	}
	if w, ok := view.FirstCall(ev); ok {
		svc := view.Issuer(ev)
		q.wait.WithLabelValues(s.ID, svc).Observe(w.Seconds())
		for _, sv := range s.Services {
			if sv.Code == svc && sv.WaitTarget > 0 && w > sv.WaitTarget {
				q.breaches.WithLabelValues(s.ID, svc).Inc()
			}
		}
	}
	if d, ok := view.Completed(ev); ok {
		q.served.WithLabelValues(s.ID, ev.Service).Inc()
		if d > 0 {
			q.service.WithLabelValues(s.ID, ev.Service).Observe(d.Seconds())
		}
	}
}

// scrape is the part of Queue read from snapshots at scrape time.
type scrape struct{ q *Queue }

func (c scrape) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.q.waitingDesc
	ch <- c.q.longestDesc
	ch <- c.q.countersDesc
}

func (c scrape) Collect(ch chan<- prometheus.Metric) {
	q := c.q
	for _, s := range q.eng.Sites() {
		ctx, cancel := context.WithTimeout(context.Background(), q.timeout)
		snap, err := q.eng.Snapshot(ctx, s.ID)
		cancel()
		if err != nil {
			q.log.Warn("metrics: snapshot at scrape", "site", s.ID, "err", err)
			continue
		}
		for _, sv := range snap.Services {
			ch <- prometheus.MustNewConstMetric(q.waitingDesc, prometheus.GaugeValue, float64(sv.Waiting), s.ID, sv.Code)
			ch <- prometheus.MustNewConstMetric(q.longestDesc, prometheus.GaugeValue, sv.LongestWait.Seconds(), s.ID, sv.Code)
		}
		modes := map[queue.CounterMode]int{queue.CounterOpen: 0, queue.CounterPaused: 0, queue.CounterClosed: 0}
		for _, cs := range snap.Counters {
			modes[cs.Mode]++
		}
		for m, n := range modes {
			ch <- prometheus.MustNewConstMetric(q.countersDesc, prometheus.GaugeValue, float64(n), s.ID, string(m))
		}
	}
}
