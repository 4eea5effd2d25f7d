// Package metrics exposes nowserving's Prometheus metrics on a registry the
// caller passes in (never the global one). Names follow
// nowserving_<subsystem>_<name>_<unit>; counters end in _total.
//
//   - [NewStore] wraps a queue.Store and measures transaction latency and
//     store errors (subsystem "store").
//   - [Queue] follows the engine's events and counts tickets issued, called,
//     served and no-shows, wait and service times and wait-target breaches;
//     at scrape time it reads a snapshot of every site for the gauges
//     (subsystem "queue").
//   - [Protocol] implements protocol.Metrics: sessions by role, errors by
//     code, auth failures, request latency (subsystem "protocol").
//   - [RegisterDevices] turns plain functions into LED, printer and voice
//     gauges, so this package never imports the device drivers.
//   - [RegisterOutbox] does the same for the delivery of notifications:
//     delivered, failed and dead per receiver, the outbox's backlog, dead
//     messages and oldest age (subsystem "notify").
package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// register registers c on reg; when an equal collector is already there it
// returns that one, so building a part twice on one registry works.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if old, ok := are.ExistingCollector.(C); ok {
				return old, nil
			}
		}
		return c, err
	}
	return c, nil
}
