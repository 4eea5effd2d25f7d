// Package part holds what the daemon's long-running parts share: a Run(ctx)
// loop that Shutdown(ctx) ends, as net/http's Serve and Shutdown (see
// parttest for running them in tests). Stop is the stop request Shutdown
// raises and the wait for Run to return. It imports only the standard
// library.
package part

import (
	"context"
	"fmt"
	"time"
)

// Stop is a part's stop request and the record of its loop having
// returned. Make it with NewStop; the loop defers Ended.
type Stop struct {
	ctx    context.Context // cancelled by Request
	cancel context.CancelFunc
	done   chan struct{}
}

// NewStop returns a Stop not yet requested, whose loop has not ended.
func NewStop() *Stop {
	ctx, cancel := context.WithCancel(context.Background())
	return &Stop{ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// Context returns a copy of ctx that is also cancelled by Request, and
// its cancel function, for the loop to run on.
func (s *Stop) Context(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// Requested is closed once Request has been called.
func (s *Stop) Requested() <-chan struct{} { return s.ctx.Done() }

// Next waits for the next tick of a loop that runs every so often: it
// reports false, at once, when the stop is requested or ctx ends first.
func (s *Stop) Next(ctx context.Context, tick <-chan time.Time) bool {
	select {
	case <-s.ctx.Done():
		return false
	case <-ctx.Done():
		return false
	case <-tick:
		return true
	}
}

// Every is the loop of a part that runs a pass every so often: pass at
// once, then at every tick of d, until pass reports false, the stop is
// requested or ctx ends (a pass in flight finishes first); then it records
// the loop as Ended.
func (s *Stop) Every(ctx context.Context, d time.Duration, pass func() bool) {
	defer s.Ended()
	tk := time.NewTicker(d)
	defer tk.Stop()
	for pass() && s.Next(ctx, tk.C) {
	}
}

// Request asks the loop to stop without waiting; it may be called more
// than once.
func (s *Stop) Request() { s.cancel() }

// Ended records that the loop has returned; call it once.
func (s *Stop) Ended() { close(s.done) }

// Done is closed once the loop has returned.
func (s *Stop) Done() <-chan struct{} { return s.done }

// Shutdown requests the stop and waits for the loop to return within ctx;
// when ctx ends first the error wraps ctx's, behind action (e.g.
// "metrics: shutdown").
func (s *Stop) Shutdown(ctx context.Context, action string) error {
	s.Request()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", action, ctx.Err())
	}
}
