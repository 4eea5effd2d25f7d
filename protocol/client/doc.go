// Package client is the Go client of the nowserving device protocol
// (protocol/PROTOCOL.md). It is what the device simulators, the benchmarks
// and the operator console use to talk to the daemon.
//
// Dial connects and authenticates (HELLO, CHALLENGE, AUTH with
// HMAC-SHA256 of the device secret, WELCOME). One reader goroutine per
// connection matches answers to request ids and feeds the event
// subscription; heartbeats are sent when the line is quiet and a silent
// daemon is dropped after three intervals.
//
// Requests have a time-out per attempt and are retried automatically: after
// a time-out, a dropped connection (the client redials with back-off and
// authenticates again) or a retryable ERROR, the same frame is sent again
// with the same request id and the RETRY flag. The client keeps its boot
// nonce across reconnects, so the daemon derives the same idempotency key
// and a kiosk whose connection dropped after TAKE_TICKET gets the ticket it
// was first given, not a second one. REPRINT is the exception: it is not
// idempotent (each one prints), so Reprint and DoOnce send it once and
// leave a retry to the person who asked.
//
// A Subscription survives reconnects: it sends SUBSCRIBE again with the last
// version it delivered, drops events it has already seen, and passes on the
// SNAPSHOT the daemon sends when the gap is too large.
//
// Errors the daemon reports come back wrapping a *wire.StatusError (use
// errors.As or errors.Is with the wire.Err* values).
package client
