// Package protocol serves the nowserving device protocol (PROTOCOL.md in this
// directory) over TCP or TLS: kiosks, keypads, displays and consoles connect,
// authenticate with a challenge and an HMAC of their secret, and send
// requests that the Server applies through a queue.Engine.
//
// One Server holds many sessions, and an idle one costs no goroutine and no
// buffer: it is parked in an epoll set (Linux; elsewhere a goroutine waits
// for each), a goroutine with a pooled bufio.Reader reads and handles its
// frames only while bytes arrive, and a flusher writes its bounded send
// queue only while frames are queued. One wheel sends the heartbeats and
// drops silent peers; one hub per site fans its committed events out, in
// version order and filtered by role, to the subscribed sessions. A peer
// that does not read fast enough is dropped (ERROR 0x33) once its socket
// buffer and queue are full, and never stalls anyone else.
//
// Lifecycle follows net/http: Serve(ln) returns ErrServerClosed after
// Shutdown(ctx), which stops accepting, tells every session the server is
// shutting down, lets in-flight requests finish and closes.
//
// Lock order: Server.mu and hub.mu before session.mu before poller.mu;
// sendQueue.mu is taken last. None is held while writing to a connection or
// calling the engine.
package protocol
