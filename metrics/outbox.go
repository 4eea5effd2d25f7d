package metrics

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Outbox is the state of the delivery of notifications, as the worker
// reports it.
type Outbox struct {
	// Receivers count this daemon's attempts since it started.
	Receivers []OutboxReceiver
	// Known says the counts below were read from the store (not before
	// the first read succeeds); they cover every daemon's messages.
	Known   bool
	Pending int
	Dead    int
	// OldestPending is the age of the oldest pending message's event; 0
	// when none is pending.
	OldestPending time.Duration
}

// OutboxReceiver counts the attempts of one receiver.
type OutboxReceiver struct {
	Name                    string
	Delivered, Failed, Dead uint64
}

// RegisterOutbox registers a collector that reads src at scrape time:
//
//	nowserving_notify_delivered_total{receiver}      messages delivered
//	nowserving_notify_failures_total{receiver}       attempts that failed
//	nowserving_notify_dead_total{receiver}           messages given up (dead)
//	nowserving_notify_pending_messages               the backlog, every daemon's
//	nowserving_notify_dead_messages                  dead messages in the outbox
//	nowserving_notify_oldest_pending_seconds         age of the oldest pending one
//
// The three gauges are absent until the outbox has been read once.
func RegisterOutbox(reg prometheus.Registerer, src func() Outbox) error {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("nowserving_notify_"+name, help, labels, nil)
	}
	c := &outboxCollector{src: src, descs: [6]*prometheus.Desc{
		desc("delivered_total", "Notifications delivered by this daemon.", "receiver"),
		desc("failures_total", "Notification attempts that failed (each is retried until it is dead).", "receiver"),
		desc("dead_total", "Notifications this daemon gave up on after the configured attempts.", "receiver"),
		desc("pending_messages", "Notifications waiting in the outbox for delivery (every daemon's)."),
		desc("dead_messages", "Dead notifications kept in the outbox for an operator."),
		desc("oldest_pending_seconds", "Age of the oldest notification waiting for delivery (0: none)."),
	}}
	if err := reg.Register(c); err != nil {
		return fmt.Errorf("metrics: register notify metrics: %w", err)
	}
	return nil
}

type outboxCollector struct {
	src   func() Outbox
	descs [6]*prometheus.Desc
}

func (c *outboxCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *outboxCollector) Collect(ch chan<- prometheus.Metric) {
	o := c.src()
	seen := map[string]bool{}
	for _, r := range o.Receivers {
		if seen[r.Name] {
			continue
		}
		seen[r.Name] = true
		for i, v := range []uint64{r.Delivered, r.Failed, r.Dead} {
			ch <- prometheus.MustNewConstMetric(c.descs[i], prometheus.CounterValue, float64(v), r.Name)
		}
	}
	if !o.Known {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.descs[3], prometheus.GaugeValue, float64(o.Pending))
	ch <- prometheus.MustNewConstMetric(c.descs[4], prometheus.GaugeValue, float64(o.Dead))
	ch <- prometheus.MustNewConstMetric(c.descs[5], prometheus.GaugeValue, o.OldestPending.Seconds())
}
