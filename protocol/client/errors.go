package client

import "errors"

var (
	// ErrClosed is returned by requests on a client after Close.
	ErrClosed = errors.New("client: closed")
	// ErrUnreachable wraps a failure to open a TCP (or TLS) connection to the
	// daemon: nothing listens there, or the network is down.
	ErrUnreachable = errors.New("client: daemon unreachable")
	// ErrTimeout is the last error of a request whose attempts all went
	// unanswered within Opts.Timeout.
	ErrTimeout = errors.New("client: no answer in time")
	// ErrPeerSilent closes a connection on which nothing arrived for three
	// heartbeat intervals.
	ErrPeerSilent = errors.New("client: daemon silent for three heartbeat intervals")
	// ErrUnexpected is an answer of a type the request does not expect, or a
	// handshake that does not follow the protocol.
	ErrUnexpected = errors.New("client: unexpected answer")
	// ErrHandshake wraps a session that ended before WELCOME for another
	// reason than a refusal (a *wire.StatusError): the daemon closed the
	// connection or answered out of protocol, e.g. a TLS port dialed
	// without TLS.
	ErrHandshake = errors.New("client: handshake failed")
	// ErrSubscribed is returned by Subscribe while another subscription of
	// the same client is active (one per connection).
	ErrSubscribed = errors.New("client: already subscribed")
	// ErrSlowConsumer ends a connection whose subscriber does not take its
	// updates: the client reconnects and resumes from the last update taken.
	ErrSlowConsumer = errors.New("client: subscriber too slow, resuming")

	// errLost wraps the loss of the connection a request waited on.
	errLost = errors.New("connection lost")
)
