// Package protocol serves the nowserving device protocol (PROTOCOL.md in this
// directory) over TCP or TLS: kiosks, keypads, displays and consoles connect,
// authenticate with a challenge and an HMAC of their secret, and send
// requests that the Server applies through a queue.Engine.
//
// One Server holds many sessions. Each session has one goroutine reading
// frames through a bufio.Reader with deadlines, and one goroutine writing
// from a bounded send queue; a peer that does not read fast enough is
// dropped (ERROR 0x33) and never stalls anyone else. Subscribed sessions get
// the committed events of their site in version order, filtered by role.
//
// Lifecycle follows net/http: Serve(ln) returns ErrServerClosed after
// Shutdown(ctx), which stops accepting, tells every session the server is
// shutting down, lets in-flight requests finish and closes.
//
// Lock order: Server.mu before session.mu; neither is held while writing to
// a connection or calling the engine.
package protocol
