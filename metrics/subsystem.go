package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// subsystem builds the metrics of one part, each named
// nowserving_<subsystem>_<name>, so that no constructor spells out the
// namespace and subsystem of every metric again.
type subsystem string

func (s subsystem) counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "nowserving", Subsystem: string(s), Name: name, Help: help})
}

func (s subsystem) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "nowserving", Subsystem: string(s), Name: name, Help: help}, labels)
}

func (s subsystem) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "nowserving", Subsystem: string(s), Name: name, Help: help}, labels)
}

func (s subsystem) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "nowserving", Subsystem: string(s), Name: name, Help: help, Buckets: buckets,
	}, labels)
}

// registerAll registers cs on reg and fails on the first one reg refuses
// (a second registration included, unlike [register]); what names the
// metrics in the error.
func registerAll(reg prometheus.Registerer, what string, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("metrics: register %s: %w", what, err)
		}
	}
	return nil
}
