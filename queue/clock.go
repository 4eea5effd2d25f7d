package queue

import "time"

// clock is where the engine takes the time. Called, it is the domain's
// time, Opts.Clock: what tickets, events, requests and service days are
// stamped with and what the domain's time-outs are measured against,
// injected so that day rollover, wait times and call time-outs are
// testable. Its methods read the machine's own clock for the engine's
// pacing alone: polls, retries, how long an unused cache is kept, how long
// a request may take. An injected clock (frozen in a test, or running a
// simulated day fast) must neither stop nor rush those, and nothing the
// methods give is recorded as domain time.
//
// Nothing else in the package reads the machine's clock (time.Now,
// time.Since, time.Until): TestClockOnly fails if a call comes back.
type clock func() time.Time

// wallClock is Opts.Clock's default: the machine's time.
func wallClock() time.Time { return time.Now() }

// mono is the machine's time now, for pacing.
func (clock) mono() time.Time { return time.Now() }

// since is how long ago t, a time mono gave, was.
func (clock) since(t time.Time) time.Duration { return time.Since(t) }

// until is how long until t, a time from mono.
func (clock) until(t time.Time) time.Duration { return time.Until(t) }
