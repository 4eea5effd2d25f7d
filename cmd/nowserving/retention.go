package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/daemon"
	"github.com/nowserving/nowserving/metrics"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/report"
)

// purgePause is the rest between two batches of the retention purge.
const purgePause = 20 * time.Millisecond

// newPurger builds the retention purge of cfg over the daemon's store,
// for the engine's sites, counted on reg.
func newPurger(cfg *config.Config, ps *daemon.PendingStore, eng *queue.Engine, reg prometheus.Registerer, log *slog.Logger) (*daemon.Purger, error) {
	m, err := metrics.NewRetention(reg)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	rt := cfg.Retention
	return daemon.NewPurger(daemon.PurgerOpts{Store: ps, Holder: probeName(cfg), Sites: eng.Sites,
		Requests: rt.Requests, Events: rt.Events, Tickets: rt.Tickets, Bookings: rt.Bookings, Outbox: rt.Outbox, Personal: rt.Personal,
		Batch: rt.Batch, Every: rt.Every, Timeout: cfg.Store.Timeout, Pause: purgePause, Now: time.Now, Metrics: m, Logger: log,
		Sum: func(ctx context.Context, site string, now time.Time) (string, bool, error) {
			return report.SumDays(ctx, eng, ps, site, now, sumChunk, log)
		}}), nil
}

// sumChunk is how many days one read of the event log sums into the
// daily figures (a backfill of a year is a dozen).
const sumChunk = 31
