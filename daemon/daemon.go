// Package daemon holds the machinery of the serve process that is no
// subsystem of its own: a Group of long-running parts started together and
// shut down in order within one grace period, the parts that are not a
// subsystem's (the protocol listener, the sweeper), the store connector
// that lets the daemon serve before its database answers, the readiness
// probe behind /readyz, and the adapters from the device dispatcher's
// status to the metrics and the console. cmd/nowserving builds the parts
// from the configuration and hands them to a Group.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Part is one long-running piece of the daemon (the protocol server, the
// sweeper, the HTTP server, the device dispatcher). Run blocks until the
// part stops and returns nil after Shutdown; Shutdown stops it, draining
// what is in flight within ctx.
type Part interface {
	Name() string
	Run(ctx context.Context) error
	Shutdown(ctx context.Context) error
}

// Closer closes what outlives the parts (the engine, the store).
type Closer struct {
	Name  string
	Close func(ctx context.Context) error
}

// Group runs its parts together and stops them in order.
type Group struct {
	Logger *slog.Logger
	// Parts are started together and shut down in list order: the ones
	// that take requests first, so nothing new arrives while the rest
	// drain.
	Parts []Part
	// Closers run after every part stopped, in order (engine, then store).
	Closers []Closer
	// Grace bounds the shutdown.
	Grace time.Duration
}

// Run runs every part until ctx ends or one fails, then shuts them down in
// order and runs the closers, all within one grace period from the
// signal. Whatever does not finish in time (a part, the engine waiting on
// a transaction a hung database holds, the store waiting on its
// connections) is abandoned and logged at WARN: Run returns within the
// grace whatever the database does. It returns nil after a shutdown ctx
// asked for, even when something was abandoned, and an error when a part
// failed.
func (g *Group) Run(ctx context.Context) error {
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	failed := make(chan error, len(g.Parts))
	var running sync.WaitGroup
	for _, p := range g.Parts {
		running.Go(func() {
			if err := p.Run(rctx); err != nil {
				failed <- fmt.Errorf("serve: %s: %w", p.Name(), err)
				stop()
			}
		})
	}
	<-rctx.Done()
	g.Logger.Info("shutting down", "grace_s", g.Grace.Seconds())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.Grace)
	defer cancel()
	var abandoned error
	for _, p := range g.Parts {
		if err := bounded(sctx, p.Shutdown); err != nil {
			g.Logger.Warn("shutdown", "part", p.Name(), "err", err)
			abandoned = errors.Join(abandoned, fmt.Errorf("shut down %s: %w", p.Name(), err))
		}
	}
	if err := bounded(sctx, func(context.Context) error { running.Wait(); return nil }); err != nil {
		g.Logger.Warn("shutdown: parts still running", "err", err)
		abandoned = errors.Join(abandoned, fmt.Errorf("wait for parts: %w", err))
	}
	if err := g.Close(sctx); err != nil {
		abandoned = errors.Join(abandoned, err)
	}
	var errs error
	for len(failed) > 0 {
		errs = errors.Join(errs, <-failed)
	}
	if errs != nil {
		return errors.Join(errs, abandoned)
	}
	if abandoned != nil {
		g.Logger.Warn("stopped, abandoning what did not finish within the grace", "err", abandoned)
		return nil
	}
	g.Logger.Info("stopped")
	return nil
}

// Close runs the closers in order, each abandoned when ctx (bounded by
// the grace) ends first, and logs each failure at WARN. It runs them once.
func (g *Group) Close(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.Grace)
		defer cancel()
	}
	var errs error
	for _, c := range g.Closers {
		if err := bounded(ctx, c.Close); err != nil {
			g.Logger.Warn("shutdown: close", "part", c.Name, "err", err)
			errs = errors.Join(errs, fmt.Errorf("serve: close %s: %w", c.Name, err))
		}
	}
	g.Closers = nil
	return errs
}

// bounded runs fn and waits for it until ctx ends; then fn is abandoned,
// left to finish (or not) on its own.
func bounded(ctx context.Context, fn func(ctx context.Context) error) error {
	_, err := boundedValue(ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, fn(ctx) })
	return err
}

// boundedValue is bounded for a function with a result, which is the
// zero value when fn is abandoned.
func boundedValue[T any](ctx context.Context, fn func(ctx context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	res := make(chan result, 1)
	go func() {
		v, err := fn(ctx)
		res <- result{v, err}
	}()
	select {
	case r := <-res:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("abandoned: %w", ctx.Err())
	}
}
