// Package queue holds the domain of nowserving: sites, services, counters,
// tickets and their state machine, the ordering policy that decides who is
// called next, the per-site event log, and the Engine that applies every
// operation through a Store in one durable transaction.
//
// The package imports only the standard library. Time is injected through
// Opts.Clock; only the clock type (clock.go) reads the machine's clock,
// for the engine's own pacing (polls, retries, request deadlines), never
// for what it records.
//
// Stores (queue/store/...) implement the small transactional primitives of
// Tx; the Engine holds all the rules once, so every store behaves the same and
// one conformance suite (queue/store/storetest) proves it.
package queue
