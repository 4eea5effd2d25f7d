// Package conform is the conformance kit for device makers: it checks a
// device, or a daemon, against the device protocol (protocol/PROTOCOL.md)
// and reports pass or fail per section of that document.
//
// Device plays the daemon for a device under test (a kiosk, a keypad or a
// display): it walks the device through the handshake, answers dropped
// before they arrive, retryable, rate-limiting, refusing and unknown
// errors, an ERROR for another request, a frame with a bad checksum, a
// refused reconnection (0x32, and 0x30 with RetryAfterMS as to an address
// backing off), heartbeats and a silent daemon, and for a display
// event replay, resume and a SNAPSHOT after a gap. Every frame the device
// sends is checked against the frame and payload rules and the message
// declarations of protocol/wire.
//
// Daemon plays a device against a daemon and checks the daemon the same
// way: handshake, wrong frames, required fields, booleans, unknown types
// and tags, heartbeats and their cadence, idempotent retries, SUBSCRIBE
// replay and snapshot, the rate limit, the refusal at the 6th HELLO after
// 5 failed handshakes and the request ids of its errors.
//
// API plays a hospital's system against a daemon's HTTP API
// (web/openapi.yaml) and reports per operation: slots, booking, replay,
// key reuse, a full slot, malformed requests, hold, confirm, cancel,
// check-in and the webhook, whose receiver it serves.
package conform
