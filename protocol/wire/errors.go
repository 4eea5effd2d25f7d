package wire

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Codec errors. Decoders return them wrapped; test with errors.Is.
var (
	// ErrBadMagic: the frame does not start with "NS". Fatal for the stream.
	ErrBadMagic = &codecError{"wire: bad magic", true}
	// ErrBadVersion: the frame header names a protocol version this package
	// does not speak. Fatal for the stream.
	ErrBadVersion = &codecError{"wire: unsupported protocol version", true}
	// ErrBadChecksum: the CRC-32 does not match. Fatal for the stream.
	ErrBadChecksum = &codecError{"wire: bad checksum", true}
	// ErrFrameTooLarge: a declared or encoded length exceeds its maximum.
	// Fatal for the stream when decoding.
	ErrFrameTooLarge = &codecError{"wire: frame too large", true}
	// ErrTruncated: the input ends inside a frame. From DecodeFrame it means
	// "need more bytes"; from ReadFrame the stream ended mid-frame.
	ErrTruncated = &codecError{"wire: truncated frame", true}
	// ErrUnknownType: no message has this type. The frame itself was sound,
	// so the stream can go on.
	ErrUnknownType = &codecError{"wire: unknown message type", false}
	// ErrMalformed: a payload is not a valid sequence of fields for its
	// message. The stream can go on. Use errors.As with *FieldError for detail.
	ErrMalformed = &codecError{"wire: malformed payload", false}
)

// codecError is a codec sentinel. A fatal one means the byte stream has
// lost synchronisation: IsFatal knows them by that flag, without a list
// to keep in step with the sentinels above.
type codecError struct {
	msg   string
	fatal bool
}

func (e *codecError) Error() string { return e.msg }

// Is makes every fatal codec error match errLostSync, wherever it stands
// in a chain of wrapped errors.
func (e *codecError) Is(target error) bool { return e.fatal && target == errLostSync }

// errLostSync is matched by the fatal codec errors (see IsFatal).
var errLostSync = errors.New("wire: stream lost synchronisation")

// FieldError describes a malformed payload: which message, which field tag
// (0 when the fault is before any tag) and why. It matches ErrMalformed
// with errors.Is.
type FieldError struct {
	// Type is the message being decoded.
	Type MsgType
	// Tag is the field tag at fault, 0 if unknown.
	Tag uint8
	// Reason says what is wrong.
	Reason string
}

// Error implements error.
func (e *FieldError) Error() string { return "wire: decode " + e.where() }

// where is the message, field and reason, as Error and StatusOf word them.
func (e *FieldError) where() string {
	return fmt.Sprintf("%s field %d: %s", e.Type, e.Tag, e.Reason)
}

// Unwrap returns ErrMalformed.
func (e *FieldError) Unwrap() error { return ErrMalformed }

// IsFatal reports whether err from DecodeFrame or ReadFrame means the byte
// stream has lost synchronisation (bad magic, version, checksum, oversize or
// truncated frame): the peer is sent an ERROR and the connection closed.
// Errors after a sound frame (unknown type, malformed payload) are answered
// with an ERROR and the connection goes on.
func IsFatal(err error) bool {
	return errors.Is(err, errLostSync)
}

// StatusError is an error the daemon reports to a device in an ERROR frame:
// a stable code, a message and whether retrying can help. Two StatusErrors
// match with errors.Is when their codes are equal, so a message can be
// specialised with WithMsg and still be recognised.
type StatusError struct {
	// Code is the stable wire code (see the error table in PROTOCOL.md).
	Code uint16
	// Msg is a short human-readable English message.
	Msg string
	// Retryable is true when the same request may succeed if sent again
	// after a pause, without anyone acting.
	Retryable bool
}

// Error implements error.
func (e *StatusError) Error() string {
	return fmt.Sprintf("wire: status 0x%02x: %s", e.Code, e.Msg)
}

// Is reports whether target is a *StatusError with the same code.
func (e *StatusError) Is(target error) bool {
	t, ok := target.(*StatusError)
	return ok && t != nil && e != nil && t.Code == e.Code
}

// WithMsg returns a copy of e with message msg (code and retryable kept).
func (e *StatusError) WithMsg(msg string) *StatusError {
	c := *e
	c.Msg = msg
	return &c
}

// MaxMsgLen is the longest ERROR message the daemon sends, in bytes.
const MaxMsgLen = 120

// Reply returns the ERROR message reporting e for request reqID. Its Msg is
// what a device may show a person: for a code of the error table it is
// e.Msg when that begins with the table's message (and may go on, after a
// colon, naming the ticket, service, counter or field concerned), else the
// table's message alone, so a message built wrong never carries the
// daemon's internals; and it is cut to MaxMsgLen bytes.
func (e *StatusError) Reply(reqID uint32) *ErrorMsg {
	return &ErrorMsg{Code: e.Code, Msg: publicMsg(e.Code, e.Msg), Retryable: e.Retryable, RequestID: reqID}
}

// publicMsg is msg as Reply sends it for code.
func publicMsg(code uint16, msg string) string {
	for _, se := range StatusErrors() {
		if se.Code != code {
			continue
		}
		if msg != se.Msg && !strings.HasPrefix(msg, se.Msg+": ") {
			return se.Msg
		}
		break
	}
	if len(msg) > MaxMsgLen {
		cut := MaxMsgLen
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut]
	}
	return msg
}

// Err returns the StatusError an ERROR message reports. The code's
// registered meaning is kept even for codes this package does not know.
func (m *ErrorMsg) Err() *StatusError {
	return &StatusError{Code: m.Code, Msg: m.Msg, Retryable: m.Retryable}
}

// Status errors, one per code in the PROTOCOL.md error table. The codes never
// change meaning.
var (
	// ErrBadFrame (0x01): bad magic, checksum, length or truncated frame. The
	// daemon closes the connection after sending it.
	ErrBadFrame = &StatusError{Code: 0x01, Msg: "bad frame"}
	// ErrUnsupportedVersion (0x02): protocol version not supported.
	ErrUnsupportedVersion = &StatusError{Code: 0x02, Msg: "unsupported protocol version"}
	// ErrUnsupportedType (0x03): message type unknown or not valid here.
	ErrUnsupportedType = &StatusError{Code: 0x03, Msg: "unknown message type"}
	// ErrBadPayload (0x04): payload malformed or a required field missing.
	ErrBadPayload = &StatusError{Code: 0x04, Msg: "malformed payload"}
	// ErrAuthFailed (0x10): unknown device, wrong role or wrong MAC.
	ErrAuthFailed = &StatusError{Code: 0x10, Msg: "authentication failed"}
	// ErrNotAuthenticated (0x11): a request before the session was welcomed.
	ErrNotAuthenticated = &StatusError{Code: 0x11, Msg: "not authenticated"}
	// ErrForbidden (0x12): the device's role may not send this request.
	ErrForbidden = &StatusError{Code: 0x12, Msg: "forbidden for role"}
	// ErrWrongCounter (0x13): a keypad acting for a counter it is not bound to.
	ErrWrongCounter = &StatusError{Code: 0x13, Msg: "wrong counter"}
	// ErrUnknownSite (0x14): no such site at this daemon.
	ErrUnknownSite = &StatusError{Code: 0x14, Msg: "unknown site"}
	// ErrUnknownService (0x20): no such service at the site.
	ErrUnknownService = &StatusError{Code: 0x20, Msg: "unknown service"}
	// ErrServiceFull (0x21): the service's daily cap is reached.
	ErrServiceFull = &StatusError{Code: 0x21, Msg: "service full today"}
	// ErrServiceClosed (0x22): outside the service's opening hours.
	ErrServiceClosed = &StatusError{Code: 0x22, Msg: "service closed"}
	// ErrNoTicketWaiting (0x23): nothing to call.
	ErrNoTicketWaiting = &StatusError{Code: 0x23, Msg: "no ticket waiting"}
	// ErrInvalidTransition (0x24): the ticket's state does not allow the action.
	ErrInvalidTransition = &StatusError{Code: 0x24, Msg: "invalid transition"}
	// ErrUnknownTicket (0x25): no such ticket today.
	ErrUnknownTicket = &StatusError{Code: 0x25, Msg: "unknown ticket"}
	// ErrReentryLimit (0x26): the ticket was re-entered too often.
	ErrReentryLimit = &StatusError{Code: 0x26, Msg: "re-entry limit reached"}
	// ErrCounterPaused (0x27): the counter is paused or closed.
	ErrCounterPaused = &StatusError{Code: 0x27, Msg: "counter paused"}
	// ErrUnknownCounter (0x28): no such counter.
	ErrUnknownCounter = &StatusError{Code: 0x28, Msg: "unknown counter"}
	// ErrKeyReused (0x29): an idempotency key already used for a different
	// request.
	ErrKeyReused = &StatusError{Code: 0x29, Msg: "idempotency key reused"}
	// ErrPrinterFailed (0x2A): the ticket did not print; the message says
	// why (paper out, cover open, no answer). Not retryable: someone has to
	// see to the printer, and a REPRINT sent again prints again.
	ErrPrinterFailed = &StatusError{Code: 0x2A, Msg: "printer failed"}
	// ErrUnknownBooking (0x2B): no booking with this code at the site.
	ErrUnknownBooking = &StatusError{Code: 0x2B, Msg: "unknown booking"}
	// ErrCheckInEarly (0x2C): before the booking's check-in window; the
	// message says when to come back.
	ErrCheckInEarly = &StatusError{Code: 0x2C, Msg: "too early to check in"}
	// ErrCheckInLate (0x2D): after the window, where the site refuses late
	// check-ins, or after the slot was missed.
	ErrCheckInLate = &StatusError{Code: 0x2D, Msg: "too late to check in"}
	// ErrBookingNotActive (0x2E): the booking is cancelled, expired,
	// missed, still held, or checked in already.
	ErrBookingNotActive = &StatusError{Code: 0x2E, Msg: "booking not active"}
	// ErrRateLimited (0x30): too many requests; retry after RetryAfterMS.
	ErrRateLimited = &StatusError{Code: 0x30, Msg: "rate limited", Retryable: true}
	// ErrBusy (0x31): the daemon is overloaded or shutting down; reconnect
	// and retry.
	ErrBusy = &StatusError{Code: 0x31, Msg: "server busy", Retryable: true}
	// ErrTooManyConnections (0x32): connection refused at the cap.
	ErrTooManyConnections = &StatusError{Code: 0x32, Msg: "too many connections", Retryable: true}
	// ErrSlowConsumer (0x33): the device did not read fast enough and is
	// dropped; reconnect and resume.
	ErrSlowConsumer = &StatusError{Code: 0x33, Msg: "slow consumer", Retryable: true}
	// ErrTimeout (0x34): no frame for three heartbeat intervals, or the
	// session did not authenticate in time.
	ErrTimeout = &StatusError{Code: 0x34, Msg: "timeout", Retryable: true}
	// ErrInternal (0x40): a fault inside the daemon.
	ErrInternal = &StatusError{Code: 0x40, Msg: "internal error", Retryable: true}
	// ErrStoreUnavailable (0x41): the database cannot be reached.
	ErrStoreUnavailable = &StatusError{Code: 0x41, Msg: "store unavailable", Retryable: true}
)

// StatusErrors lists every status error in code order (for docs and tests).
func StatusErrors() []*StatusError {
	return []*StatusError{
		ErrBadFrame, ErrUnsupportedVersion, ErrUnsupportedType, ErrBadPayload,
		ErrAuthFailed, ErrNotAuthenticated, ErrForbidden, ErrWrongCounter, ErrUnknownSite,
		ErrUnknownService, ErrServiceFull, ErrServiceClosed, ErrNoTicketWaiting,
		ErrInvalidTransition, ErrUnknownTicket, ErrReentryLimit, ErrCounterPaused,
		ErrUnknownCounter, ErrKeyReused, ErrPrinterFailed,
		ErrUnknownBooking, ErrCheckInEarly, ErrCheckInLate, ErrBookingNotActive,
		ErrRateLimited, ErrBusy, ErrTooManyConnections, ErrSlowConsumer, ErrTimeout,
		ErrInternal, ErrStoreUnavailable,
	}
}

// StatusOf maps err onto the StatusError to send to a device: a
// *StatusError in err's chain is returned as is, codec errors map to
// ErrBadFrame, ErrUnsupportedVersion, ErrUnsupportedType or ErrBadPayload
// with a fixed wording per cause (a malformed payload names the message,
// field tag and rule), anything else to ErrInternal (message hidden). nil
// gives nil.
func StatusOf(err error) *StatusError {
	if err == nil {
		return nil
	}
	var se *StatusError
	if errors.As(err, &se) {
		return se
	}
	var fe *FieldError
	switch {
	case errors.Is(err, ErrBadVersion):
		return ErrUnsupportedVersion
	case errors.Is(err, ErrBadMagic):
		return ErrBadFrame.WithMsg("bad frame: bad magic")
	case errors.Is(err, ErrBadChecksum):
		return ErrBadFrame.WithMsg("bad frame: bad checksum")
	case errors.Is(err, ErrFrameTooLarge):
		return ErrBadFrame.WithMsg("bad frame: payload too large")
	case IsFatal(err):
		return ErrBadFrame.WithMsg("bad frame: cut short")
	case errors.Is(err, ErrUnknownType):
		return ErrUnsupportedType
	case errors.As(err, &fe):
		return ErrBadPayload.WithMsg("malformed payload: " + fe.where())
	case errors.Is(err, ErrMalformed):
		return ErrBadPayload
	}
	return ErrInternal
}
