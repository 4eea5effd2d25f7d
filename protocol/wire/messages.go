package wire

import "fmt"

// This file holds every message struct and its field encoding. The tags are the
// specification: they are listed in PROTOCOL.md and must never be renumbered.

// Message types, one per message struct.
const (
	// TypeHello is HELLO.
	TypeHello MsgType = 0x01
	// TypeChallenge is CHALLENGE.
	TypeChallenge MsgType = 0x02
	// TypeAuth is AUTH.
	TypeAuth MsgType = 0x03
	// TypeWelcome is WELCOME.
	TypeWelcome MsgType = 0x04
	// TypeHeartbeat is HEARTBEAT.
	TypeHeartbeat MsgType = 0x05
	// TypeError is ERROR.
	TypeError MsgType = 0x06
	// TypeTakeTicket is TAKE_TICKET.
	TypeTakeTicket MsgType = 0x10
	// TypeCallNext is CALL_NEXT.
	TypeCallNext MsgType = 0x11
	// TypeCallNumber is CALL_NUMBER.
	TypeCallNumber MsgType = 0x12
	// TypeRecall is RECALL.
	TypeRecall MsgType = 0x13
	// TypeNoShow is NO_SHOW.
	TypeNoShow MsgType = 0x14
	// TypeReenter is REENTER.
	TypeReenter MsgType = 0x15
	// TypeStart is START.
	TypeStart MsgType = 0x16
	// TypeComplete is COMPLETE.
	TypeComplete MsgType = 0x17
	// TypeTransfer is TRANSFER.
	TypeTransfer MsgType = 0x18
	// TypeCancel is CANCEL.
	TypeCancel MsgType = 0x19
	// TypePause is PAUSE.
	TypePause MsgType = 0x1A
	// TypeResume is RESUME.
	TypeResume MsgType = 0x1B
	// TypeStatus is STATUS.
	TypeStatus MsgType = 0x1C
	// TypeSubscribe is SUBSCRIBE.
	TypeSubscribe MsgType = 0x1D
	// TypeReprint is REPRINT.
	TypeReprint MsgType = 0x1E
	// TypeOK is OK.
	TypeOK MsgType = 0x20
	// TypeTicket is TICKET.
	TypeTicket MsgType = 0x21
	// TypeSnapshot is SNAPSHOT.
	TypeSnapshot MsgType = 0x22
	// TypeEvent is EVENT.
	TypeEvent MsgType = 0x23
)

var typeNames = map[MsgType]string{
	TypeHello:      "HELLO",
	TypeChallenge:  "CHALLENGE",
	TypeAuth:       "AUTH",
	TypeWelcome:    "WELCOME",
	TypeHeartbeat:  "HEARTBEAT",
	TypeError:      "ERROR",
	TypeTakeTicket: "TAKE_TICKET",
	TypeCallNext:   "CALL_NEXT",
	TypeCallNumber: "CALL_NUMBER",
	TypeRecall:     "RECALL",
	TypeNoShow:     "NO_SHOW",
	TypeReenter:    "REENTER",
	TypeStart:      "START",
	TypeComplete:   "COMPLETE",
	TypeTransfer:   "TRANSFER",
	TypeCancel:     "CANCEL",
	TypePause:      "PAUSE",
	TypeResume:     "RESUME",
	TypeStatus:     "STATUS",
	TypeSubscribe:  "SUBSCRIBE",
	TypeReprint:    "REPRINT",
	TypeOK:         "OK",
	TypeTicket:     "TICKET",
	TypeSnapshot:   "SNAPSHOT",
	TypeEvent:      "EVENT",
}

// New returns a new, empty message of type t, or an error wrapping ErrUnknownType.
func New(t MsgType) (Message, error) {
	switch t {
	case TypeHello:
		return new(Hello), nil
	case TypeChallenge:
		return new(Challenge), nil
	case TypeAuth:
		return new(Auth), nil
	case TypeWelcome:
		return new(Welcome), nil
	case TypeHeartbeat:
		return new(Heartbeat), nil
	case TypeError:
		return new(ErrorMsg), nil
	case TypeTakeTicket:
		return new(TakeTicket), nil
	case TypeCallNext:
		return new(CallNext), nil
	case TypeCallNumber:
		return new(CallNumber), nil
	case TypeRecall:
		return new(Recall), nil
	case TypeNoShow:
		return new(NoShow), nil
	case TypeReenter:
		return new(Reenter), nil
	case TypeStart:
		return new(Start), nil
	case TypeComplete:
		return new(Complete), nil
	case TypeTransfer:
		return new(Transfer), nil
	case TypeCancel:
		return new(Cancel), nil
	case TypePause:
		return new(Pause), nil
	case TypeResume:
		return new(Resume), nil
	case TypeStatus:
		return new(Status), nil
	case TypeSubscribe:
		return new(Subscribe), nil
	case TypeReprint:
		return new(Reprint), nil
	case TypeOK:
		return new(OK), nil
	case TypeTicket:
		return new(Ticket), nil
	case TypeSnapshot:
		return new(Snapshot), nil
	case TypeEvent:
		return new(Event), nil
	}
	return nil, fmt.Errorf("wire: new message 0x%02x: %w", uint8(t), ErrUnknownType)
}

// Hello is the first frame a device sends after connecting. Wire type HELLO (0x01).
type Hello struct {
	// DeviceID (tag 1): device id from the daemon configuration, at most 64 bytes.
	DeviceID string
	// Role (tag 2): role the device claims; must match its configuration.
	Role Role
	// ProtocolVersion (tag 3): highest protocol version the device speaks (1).
	ProtocolVersion uint8
	// BootNonce (tag 4): random value chosen once per device boot (or a boot counter kept in flash).
	BootNonce uint64
	// LastVersion (tag 5): last event version the device has seen; 0: none.
	LastVersion uint64
	// Firmware (tag 6): free-form firmware name and version, for logs.
	Firmware string
}

// Type returns TypeHello.
func (*Hello) Type() MsgType { return TypeHello }

// AppendBinary appends the payload of m to dst.
func (m *Hello) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, m.DeviceID)
	e.uint(2, uint64(m.Role), 1)
	e.uint(3, uint64(m.ProtocolVersion), 1)
	e.uint(4, uint64(m.BootNonce), 8)
	e.uint(5, uint64(m.LastVersion), 8)
	e.str(6, m.Firmware)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Hello) Decode(src []byte) error {
	*m = Hello{}
	d := decoder{b: src, t: TypeHello}
	for d.next() {
		switch d.tag {
		case 1:
			m.DeviceID = d.str()
		case 2:
			m.Role = Role(d.uint(8))
		case 3:
			m.ProtocolVersion = uint8(d.uint(8))
		case 4:
			m.BootNonce = uint64(d.uint(64))
		case 5:
			m.LastVersion = uint64(d.uint(64))
		case 6:
			m.Firmware = d.str()
		}
	}
	return d.err
}

// Challenge is the daemon's answer to HELLO: a fresh random nonce to sign. Wire type CHALLENGE (0x02).
type Challenge struct {
	// Nonce (tag 1): 32 random bytes.
	Nonce []byte
}

// Type returns TypeChallenge.
func (*Challenge) Type() MsgType { return TypeChallenge }

// AppendBinary appends the payload of m to dst.
func (m *Challenge) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.bytes(1, m.Nonce)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Challenge) Decode(src []byte) error {
	*m = Challenge{}
	d := decoder{b: src, t: TypeChallenge}
	for d.next() {
		switch d.tag {
		case 1:
			m.Nonce = d.bytes()
		}
	}
	return d.err
}

// Auth proves the device knows its secret: MAC = HMAC-SHA256(secret, nonce || device id). Wire type AUTH (0x03).
type Auth struct {
	// MAC (tag 1): 32 bytes, see ComputeMAC.
	MAC []byte
}

// Type returns TypeAuth.
func (*Auth) Type() MsgType { return TypeAuth }

// AppendBinary appends the payload of m to dst.
func (m *Auth) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.bytes(1, m.MAC)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Auth) Decode(src []byte) error {
	*m = Auth{}
	d := decoder{b: src, t: TypeAuth}
	for d.next() {
		switch d.tag {
		case 1:
			m.MAC = d.bytes()
		}
	}
	return d.err
}

// Welcome accepts the session and tells the device what it may do. Wire type WELCOME (0x04).
type Welcome struct {
	// ServerTimeMS (tag 1): daemon clock, Unix milliseconds.
	ServerTimeMS int64
	// Site (tag 2): site code the device belongs to.
	Site string
	// ServiceDay (tag 3): current service day of the site, "2006-01-02".
	ServiceDay string
	// Role (tag 4): role granted.
	Role Role
	// Counter (tag 5): counter the device is bound to; 0: none.
	Counter uint32
	// Allowed (tag 6): requests the device may send (bit n: request type 0x10+n).
	Allowed Actions
	// HeartbeatMS (tag 7): heartbeat interval in milliseconds.
	HeartbeatMS uint32
	// Version (tag 8): latest event version of the site.
	Version uint64
	// MaxPayload (tag 9): largest payload the daemon accepts, bytes.
	MaxPayload uint32
	// RateLimit (tag 10): requests per second the device may send on average.
	RateLimit uint16
}

// Type returns TypeWelcome.
func (*Welcome) Type() MsgType { return TypeWelcome }

// AppendBinary appends the payload of m to dst.
func (m *Welcome) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.int(1, m.ServerTimeMS)
	e.str(2, m.Site)
	e.str(3, m.ServiceDay)
	e.uint(4, uint64(m.Role), 1)
	e.uint(5, uint64(m.Counter), 4)
	e.uint(6, uint64(m.Allowed), 4)
	e.uint(7, uint64(m.HeartbeatMS), 4)
	e.uint(8, uint64(m.Version), 8)
	e.uint(9, uint64(m.MaxPayload), 4)
	e.uint(10, uint64(m.RateLimit), 2)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Welcome) Decode(src []byte) error {
	*m = Welcome{}
	d := decoder{b: src, t: TypeWelcome}
	for d.next() {
		switch d.tag {
		case 1:
			m.ServerTimeMS = d.int()
		case 2:
			m.Site = d.str()
		case 3:
			m.ServiceDay = d.str()
		case 4:
			m.Role = Role(d.uint(8))
		case 5:
			m.Counter = uint32(d.uint(32))
		case 6:
			m.Allowed = Actions(d.uint(32))
		case 7:
			m.HeartbeatMS = uint32(d.uint(32))
		case 8:
			m.Version = uint64(d.uint(64))
		case 9:
			m.MaxPayload = uint32(d.uint(32))
		case 10:
			m.RateLimit = uint16(d.uint(16))
		}
	}
	return d.err
}

// Heartbeat is sent by either side when it has sent nothing else for one heartbeat interval. Wire type HEARTBEAT (0x05).
type Heartbeat struct {
	// TimeMS (tag 1): sender clock, Unix milliseconds.
	TimeMS int64
	// Version (tag 2): daemon: latest event version; device: last version seen.
	Version uint64
}

// Type returns TypeHeartbeat.
func (*Heartbeat) Type() MsgType { return TypeHeartbeat }

// AppendBinary appends the payload of m to dst.
func (m *Heartbeat) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.int(1, m.TimeMS)
	e.uint(2, uint64(m.Version), 8)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Heartbeat) Decode(src []byte) error {
	*m = Heartbeat{}
	d := decoder{b: src, t: TypeHeartbeat}
	for d.next() {
		switch d.tag {
		case 1:
			m.TimeMS = d.int()
		case 2:
			m.Version = uint64(d.uint(64))
		}
	}
	return d.err
}

// ErrorMsg reports a refused request or a protocol error. Wire type ERROR (0x06).
type ErrorMsg struct {
	// Code (tag 1): stable error code (see the error table).
	Code uint16
	// Msg (tag 2): human-readable message, English.
	Msg string
	// Retryable (tag 3): true: the same request may succeed if sent again after a pause.
	Retryable bool
	// RequestID (tag 4): request id of the refused request (also in the frame header); 0: none.
	RequestID uint32
	// RetryAfterMS (tag 5): suggested pause before a retry, milliseconds; 0: client's choice.
	RetryAfterMS uint32
}

// Type returns TypeError.
func (*ErrorMsg) Type() MsgType { return TypeError }

// AppendBinary appends the payload of m to dst.
func (m *ErrorMsg) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.uint(1, uint64(m.Code), 2)
	e.str(2, m.Msg)
	e.bool(3, m.Retryable)
	e.uint(4, uint64(m.RequestID), 4)
	e.uint(5, uint64(m.RetryAfterMS), 4)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *ErrorMsg) Decode(src []byte) error {
	*m = ErrorMsg{}
	d := decoder{b: src, t: TypeError}
	for d.next() {
		switch d.tag {
		case 1:
			m.Code = uint16(d.uint(16))
		case 2:
			m.Msg = d.str()
		case 3:
			m.Retryable = d.bool()
		case 4:
			m.RequestID = uint32(d.uint(32))
		case 5:
			m.RetryAfterMS = uint32(d.uint(32))
		}
	}
	return d.err
}

// TakeTicket asks for a new ticket (kiosk). Wire type TAKE_TICKET (0x10).
type TakeTicket struct {
	// IdemKey (tag 1): idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Service (tag 4): service code, e.g. "A".
	Service string
	// Class (tag 7): ticket class; 0: normal.
	Class Class
	// WantESCPOS (tag 8): true: the TICKET answer carries the ticket rendered as ESC/POS bytes.
	WantESCPOS bool
	// Language (tag 9): language tag for the printed ticket, e.g. "en", "zh".
	Language string
	// Site (tag 10): site code; empty: the device's site.
	Site string
}

// Type returns TypeTakeTicket.
func (*TakeTicket) Type() MsgType { return TypeTakeTicket }

// AppendBinary appends the payload of m to dst.
func (m *TakeTicket) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, m.IdemKey)
	e.str(4, m.Service)
	e.uint(7, uint64(m.Class), 1)
	e.bool(8, m.WantESCPOS)
	e.str(9, m.Language)
	e.str(10, m.Site)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *TakeTicket) Decode(src []byte) error {
	*m = TakeTicket{}
	d := decoder{b: src, t: TypeTakeTicket}
	for d.next() {
		switch d.tag {
		case 1:
			m.IdemKey = d.str()
		case 4:
			m.Service = d.str()
		case 7:
			m.Class = Class(d.uint(8))
		case 8:
			m.WantESCPOS = d.bool()
		case 9:
			m.Language = d.str()
		case 10:
			m.Site = d.str()
		}
	}
	return d.err
}

// CallNext calls the next waiting ticket to a counter. Wire type CALL_NEXT (0x11).
type CallNext struct {
	// IdemKey (tag 1): idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Counter (tag 2): counter the action is for; 0: the keypad's own counter.
	Counter uint32
	// Service (tag 4): only call from this service; empty: the counter's policy.
	Service string
	// Site (tag 10): site code; empty: the device's site.
	Site string
}

// Type returns TypeCallNext.
func (*CallNext) Type() MsgType { return TypeCallNext }

// AppendBinary appends the payload of m to dst.
func (m *CallNext) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, m.IdemKey)
	e.uint(2, uint64(m.Counter), 4)
	e.str(4, m.Service)
	e.str(10, m.Site)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *CallNext) Decode(src []byte) error {
	*m = CallNext{}
	d := decoder{b: src, t: TypeCallNext}
	for d.next() {
		switch d.tag {
		case 1:
			m.IdemKey = d.str()
		case 2:
			m.Counter = uint32(d.uint(32))
		case 4:
			m.Service = d.str()
		case 10:
			m.Site = d.str()
		}
	}
	return d.err
}

// CallNumber calls a given waiting ticket to a counter. Wire type CALL_NUMBER (0x12).
type CallNumber struct {
	// IdemKey (tag 1): idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Counter (tag 2): counter the action is for; 0: the keypad's own counter.
	Counter uint32
	// Number (tag 3): ticket number text, e.g. "A023".
	Number string
	// Site (tag 10): site code; empty: the device's site.
	Site string
}

// Type returns TypeCallNumber.
func (*CallNumber) Type() MsgType { return TypeCallNumber }

// AppendBinary appends the payload of m to dst.
func (m *CallNumber) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, m.IdemKey)
	e.uint(2, uint64(m.Counter), 4)
	e.str(3, m.Number)
	e.str(10, m.Site)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *CallNumber) Decode(src []byte) error {
	*m = CallNumber{}
	d := decoder{b: src, t: TypeCallNumber}
	for d.next() {
		switch d.tag {
		case 1:
			m.IdemKey = d.str()
		case 2:
			m.Counter = uint32(d.uint(32))
		case 3:
			m.Number = d.str()
		case 10:
			m.Site = d.str()
		}
	}
	return d.err
}

// Recall announces a called ticket again. Wire type RECALL (0x13).
type Recall struct {
	// IdemKey (tag 1): idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Counter (tag 2): counter the action is for; 0: the keypad's own counter.
	Counter uint32
	// Number (tag 3): ticket number text; empty: the ticket the counter is handling.
	Number string
	// Site (tag 10): site code; empty: the device's site.
	Site string
}

// Type returns TypeRecall.
func (*Recall) Type() MsgType { return TypeRecall }

// AppendBinary appends the payload of m to dst.
func (m *Recall) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, m.IdemKey)
	e.uint(2, uint64(m.Counter), 4)
	e.str(3, m.Number)
	e.str(10, m.Site)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Recall) Decode(src []byte) error {
	*m = Recall{}
	d := decoder{b: src, t: TypeRecall}
	for d.next() {
		switch d.tag {
		case 1:
			m.IdemKey = d.str()
		case 2:
			m.Counter = uint32(d.uint(32))
		case 3:
			m.Number = d.str()
		case 10:
			m.Site = d.str()
		}
	}
	return d.err
}

// NoShow marks a called ticket as not shown up. Wire type NO_SHOW (0x14).
type NoShow struct {
	// IdemKey (tag 1): idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Counter (tag 2): counter the action is for; 0: the keypad's own counter.
	Counter uint32
	// Number (tag 3): ticket number text; empty: the ticket the counter is handling.
	Number string
	// Site (tag 10): site code; empty: the device's site.
	Site string
}

// Type returns TypeNoShow.
func (*NoShow) Type() MsgType { return TypeNoShow }

// AppendBinary appends the payload of m to dst.
func (m *NoShow) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, m.IdemKey)
	e.uint(2, uint64(m.Counter), 4)
	e.str(3, m.Number)
	e.str(10, m.Site)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *NoShow) Decode(src []byte) error {
	*m = NoShow{}
	d := decoder{b: src, t: TypeNoShow}
	for d.next() {
		switch d.tag {
		case 1:
			m.IdemKey = d.str()
		case 2:
			m.Counter = uint32(d.uint(32))
		case 3:
			m.Number = d.str()
		case 10:
			m.Site = d.str()
		}
	}
	return d.err
}

// Reenter puts a no-show ticket back into its queue. Wire type REENTER (0x15).
type Reenter struct {
	// IdemKey (tag 1): idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Counter (tag 2): counter the action is for; 0: the keypad's own counter.
	Counter uint32
	// Number (tag 3): ticket number text.
	Number string
	// Site (tag 10): site code; empty: the device's site.
	Site string
}

// Type returns TypeReenter.
func (*Reenter) Type() MsgType { return TypeReenter }

// AppendBinary appends the payload of m to dst.
func (m *Reenter) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, m.IdemKey)
	e.uint(2, uint64(m.Counter), 4)
	e.str(3, m.Number)
	e.str(10, m.Site)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Reenter) Decode(src []byte) error {
	*m = Reenter{}
	d := decoder{b: src, t: TypeReenter}
	for d.next() {
		switch d.tag {
		case 1:
			m.IdemKey = d.str()
		case 2:
			m.Counter = uint32(d.uint(32))
		case 3:
			m.Number = d.str()
		case 10:
			m.Site = d.str()
		}
	}
	return d.err
}

// Start starts serving a called ticket. Wire type START (0x16).
type Start struct {
	// IdemKey (tag 1): idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Counter (tag 2): counter the action is for; 0: the keypad's own counter.
	Counter uint32
	// Number (tag 3): ticket number text; empty: the ticket the counter is handling.
	Number string
	// Site (tag 10): site code; empty: the device's site.
	Site string
}

// Type returns TypeStart.
func (*Start) Type() MsgType { return TypeStart }

// AppendBinary appends the payload of m to dst.
func (m *Start) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, m.IdemKey)
	e.uint(2, uint64(m.Counter), 4)
	e.str(3, m.Number)
	e.str(10, m.Site)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Start) Decode(src []byte) error {
	*m = Start{}
	d := decoder{b: src, t: TypeStart}
	for d.next() {
		switch d.tag {
		case 1:
			m.IdemKey = d.str()
		case 2:
			m.Counter = uint32(d.uint(32))
		case 3:
			m.Number = d.str()
		case 10:
			m.Site = d.str()
		}
	}
	return d.err
}

// Complete finishes serving a ticket. Wire type COMPLETE (0x17).
type Complete struct {
	// IdemKey (tag 1): idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Counter (tag 2): counter the action is for; 0: the keypad's own counter.
	Counter uint32
	// Number (tag 3): ticket number text; empty: the ticket the counter is handling.
	Number string
	// Site (tag 10): site code; empty: the device's site.
	Site string
}

// Type returns TypeComplete.
func (*Complete) Type() MsgType { return TypeComplete }

// AppendBinary appends the payload of m to dst.
func (m *Complete) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, m.IdemKey)
	e.uint(2, uint64(m.Counter), 4)
	e.str(3, m.Number)
	e.str(10, m.Site)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Complete) Decode(src []byte) error {
	*m = Complete{}
	d := decoder{b: src, t: TypeComplete}
	for d.next() {
		switch d.tag {
		case 1:
			m.IdemKey = d.str()
		case 2:
			m.Counter = uint32(d.uint(32))
		case 3:
			m.Number = d.str()
		case 10:
			m.Site = d.str()
		}
	}
	return d.err
}

// Transfer sends a called or serving ticket to another service or counter. Wire type TRANSFER (0x18).
type Transfer struct {
	// IdemKey (tag 1): idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Counter (tag 2): counter the action is for; 0: the keypad's own counter.
	Counter uint32
	// Number (tag 3): ticket number text; empty: the ticket the counter is handling.
	Number string
	// ToService (tag 5): target service code; empty: same service.
	ToService string
	// ToCounter (tag 6): target counter; 0: any counter of the service.
	ToCounter uint32
	// Site (tag 10): site code; empty: the device's site.
	Site string
}

// Type returns TypeTransfer.
func (*Transfer) Type() MsgType { return TypeTransfer }

// AppendBinary appends the payload of m to dst.
func (m *Transfer) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, m.IdemKey)
	e.uint(2, uint64(m.Counter), 4)
	e.str(3, m.Number)
	e.str(5, m.ToService)
	e.uint(6, uint64(m.ToCounter), 4)
	e.str(10, m.Site)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Transfer) Decode(src []byte) error {
	*m = Transfer{}
	d := decoder{b: src, t: TypeTransfer}
	for d.next() {
		switch d.tag {
		case 1:
			m.IdemKey = d.str()
		case 2:
			m.Counter = uint32(d.uint(32))
		case 3:
			m.Number = d.str()
		case 5:
			m.ToService = d.str()
		case 6:
			m.ToCounter = uint32(d.uint(32))
		case 10:
			m.Site = d.str()
		}
	}
	return d.err
}

// Cancel cancels a waiting or called ticket. Wire type CANCEL (0x19).
type Cancel struct {
	// IdemKey (tag 1): idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Counter (tag 2): counter the action is for; 0: the keypad's own counter.
	Counter uint32
	// Number (tag 3): ticket number text.
	Number string
	// Site (tag 10): site code; empty: the device's site.
	Site string
}

// Type returns TypeCancel.
func (*Cancel) Type() MsgType { return TypeCancel }

// AppendBinary appends the payload of m to dst.
func (m *Cancel) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, m.IdemKey)
	e.uint(2, uint64(m.Counter), 4)
	e.str(3, m.Number)
	e.str(10, m.Site)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Cancel) Decode(src []byte) error {
	*m = Cancel{}
	d := decoder{b: src, t: TypeCancel}
	for d.next() {
		switch d.tag {
		case 1:
			m.IdemKey = d.str()
		case 2:
			m.Counter = uint32(d.uint(32))
		case 3:
			m.Number = d.str()
		case 10:
			m.Site = d.str()
		}
	}
	return d.err
}

// Pause pauses a counter: it is not called to. Wire type PAUSE (0x1A).
type Pause struct {
	// IdemKey (tag 1): idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Counter (tag 2): counter the action is for; 0: the keypad's own counter.
	Counter uint32
	// Reason (tag 12): free text for the console, e.g. "break".
	Reason string
	// Site (tag 10): site code; empty: the device's site.
	Site string
}

// Type returns TypePause.
func (*Pause) Type() MsgType { return TypePause }

// AppendBinary appends the payload of m to dst.
func (m *Pause) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, m.IdemKey)
	e.uint(2, uint64(m.Counter), 4)
	e.str(12, m.Reason)
	e.str(10, m.Site)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Pause) Decode(src []byte) error {
	*m = Pause{}
	d := decoder{b: src, t: TypePause}
	for d.next() {
		switch d.tag {
		case 1:
			m.IdemKey = d.str()
		case 2:
			m.Counter = uint32(d.uint(32))
		case 12:
			m.Reason = d.str()
		case 10:
			m.Site = d.str()
		}
	}
	return d.err
}

// Resume reopens a paused counter. Wire type RESUME (0x1B).
type Resume struct {
	// IdemKey (tag 1): idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Counter (tag 2): counter the action is for; 0: the keypad's own counter.
	Counter uint32
	// Site (tag 10): site code; empty: the device's site.
	Site string
}

// Type returns TypeResume.
func (*Resume) Type() MsgType { return TypeResume }

// AppendBinary appends the payload of m to dst.
func (m *Resume) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.str(1, m.IdemKey)
	e.uint(2, uint64(m.Counter), 4)
	e.str(10, m.Site)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Resume) Decode(src []byte) error {
	*m = Resume{}
	d := decoder{b: src, t: TypeResume}
	for d.next() {
		switch d.tag {
		case 1:
			m.IdemKey = d.str()
		case 2:
			m.Counter = uint32(d.uint(32))
		case 10:
			m.Site = d.str()
		}
	}
	return d.err
}

// Status asks for the state of a ticket (answer TICKET) or of a site, service or counter (answer SNAPSHOT). Wire type STATUS (0x1C).
type Status struct {
	// Counter (tag 2): only this counter.
	Counter uint32
	// Number (tag 3): ticket number text: answer is TICKET.
	Number string
	// Service (tag 4): only this service.
	Service string
	// Site (tag 10): site code; empty: the device's site.
	Site string
}

// Type returns TypeStatus.
func (*Status) Type() MsgType { return TypeStatus }

// AppendBinary appends the payload of m to dst.
func (m *Status) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.uint(2, uint64(m.Counter), 4)
	e.str(3, m.Number)
	e.str(4, m.Service)
	e.str(10, m.Site)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Status) Decode(src []byte) error {
	*m = Status{}
	d := decoder{b: src, t: TypeStatus}
	for d.next() {
		switch d.tag {
		case 2:
			m.Counter = uint32(d.uint(32))
		case 3:
			m.Number = d.str()
		case 4:
			m.Service = d.str()
		case 10:
			m.Site = d.str()
		}
	}
	return d.err
}

// Subscribe asks for the site's events, starting after a version. Wire type SUBSCRIBE (0x1D).
type Subscribe struct {
	// Counters (tag 2): only events of these counters (repeated); none: all.
	Counters []uint32
	// Services (tag 4): only events of these services (repeated); none: all.
	Services []string
	// Site (tag 10): site code; empty: the device's site.
	Site string
	// FromVersion (tag 11): last version seen; events with a greater version follow. 0: SNAPSHOT first.
	FromVersion uint64
	// Snapshot (tag 13): true: always send a SNAPSHOT before the events.
	Snapshot bool
}

// Type returns TypeSubscribe.
func (*Subscribe) Type() MsgType { return TypeSubscribe }

// AppendBinary appends the payload of m to dst.
func (m *Subscribe) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	for _, x := range m.Counters {
		e.uintAlways(2, uint64(x), 4)
	}
	for _, s := range m.Services {
		e.strAlways(4, s)
	}
	e.str(10, m.Site)
	e.uint(11, uint64(m.FromVersion), 8)
	e.bool(13, m.Snapshot)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Subscribe) Decode(src []byte) error {
	*m = Subscribe{}
	d := decoder{b: src, t: TypeSubscribe}
	for d.next() {
		switch d.tag {
		case 2:
			m.Counters = append(m.Counters, uint32(d.uint(32)))
		case 4:
			m.Services = append(m.Services, d.str())
		case 10:
			m.Site = d.str()
		case 11:
			m.FromVersion = uint64(d.uint(64))
		case 13:
			m.Snapshot = d.bool()
		}
	}
	return d.err
}

// Reprint prints a ticket of today again on a network printer (console only). It changes no state, so it carries no idempotency key: a retried REPRINT prints again. Wire type REPRINT (0x1E).
type Reprint struct {
	// Number (tag 3): ticket number text.
	Number string
	// Site (tag 10): site code; empty: the device's site.
	Site string
	// Printer (tag 12): printer id from the daemon configuration; empty: the printer of the kiosk that issued the ticket.
	Printer string
}

// Type returns TypeReprint.
func (*Reprint) Type() MsgType { return TypeReprint }

// AppendBinary appends the payload of m to dst.
func (m *Reprint) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.str(3, m.Number)
	e.str(10, m.Site)
	e.str(12, m.Printer)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Reprint) Decode(src []byte) error {
	*m = Reprint{}
	d := decoder{b: src, t: TypeReprint}
	for d.next() {
		switch d.tag {
		case 3:
			m.Number = d.str()
		case 10:
			m.Site = d.str()
		case 12:
			m.Printer = d.str()
		}
	}
	return d.err
}

// OK is the generic success answer. Wire type OK (0x20).
type OK struct {
	// Version (tag 1): event version the request produced; 0: none.
	Version uint64
	// LCD (tag 2): short lines for a keypad display (repeated).
	LCD []string
}

// Type returns TypeOK.
func (*OK) Type() MsgType { return TypeOK }

// AppendBinary appends the payload of m to dst.
func (m *OK) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.uint(1, uint64(m.Version), 8)
	for _, s := range m.LCD {
		e.strAlways(2, s)
	}
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *OK) Decode(src []byte) error {
	*m = OK{}
	d := decoder{b: src, t: TypeOK}
	for d.next() {
		switch d.tag {
		case 1:
			m.Version = uint64(d.uint(64))
		case 2:
			m.LCD = append(m.LCD, d.str())
		}
	}
	return d.err
}

// Ticket describes one ticket: the answer to TAKE_TICKET, calls and STATUS. Wire type TICKET (0x21).
type Ticket struct {
	// ID (tag 1): ticket id, unique in the daemon.
	ID uint64
	// Site (tag 2): site code.
	Site string
	// Service (tag 3): service code.
	Service string
	// Number (tag 4): number text, e.g. "A023".
	Number string
	// Class (tag 5): class.
	Class Class
	// Status (tag 6): status.
	Status TicketStatus
	// Counter (tag 7): counter handling it, or the counter a waiting ticket was transferred to; 0: none.
	Counter uint32
	// CallCount (tag 8): times called.
	CallCount uint16
	// IssuedMS (tag 9): issue time, Unix milliseconds.
	IssuedMS int64
	// CalledMS (tag 10): last call time, Unix milliseconds; 0: not called.
	CalledMS int64
	// PeopleAhead (tag 11): waiting tickets called before this one.
	PeopleAhead uint32
	// WaitSeconds (tag 12): estimated wait, seconds.
	WaitSeconds uint32
	// ESCPOS (tag 13): ticket rendered for the printer (only when asked).
	ESCPOS []byte
	// LCD (tag 14): short lines for a keypad display (repeated), e.g. "A023 -> 5".
	LCD []string
	// ServiceDay (tag 15): service day, "2006-01-02".
	ServiceDay string
	// Version (tag 16): event version of the change; 0: none.
	Version uint64
}

// Type returns TypeTicket.
func (*Ticket) Type() MsgType { return TypeTicket }

// AppendBinary appends the payload of m to dst.
func (m *Ticket) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.uint(1, uint64(m.ID), 8)
	e.str(2, m.Site)
	e.str(3, m.Service)
	e.str(4, m.Number)
	e.uint(5, uint64(m.Class), 1)
	e.uint(6, uint64(m.Status), 1)
	e.uint(7, uint64(m.Counter), 4)
	e.uint(8, uint64(m.CallCount), 2)
	e.int(9, m.IssuedMS)
	e.int(10, m.CalledMS)
	e.uint(11, uint64(m.PeopleAhead), 4)
	e.uint(12, uint64(m.WaitSeconds), 4)
	e.bytes(13, m.ESCPOS)
	for _, s := range m.LCD {
		e.strAlways(14, s)
	}
	e.str(15, m.ServiceDay)
	e.uint(16, uint64(m.Version), 8)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Ticket) Decode(src []byte) error {
	*m = Ticket{}
	d := decoder{b: src, t: TypeTicket}
	for d.next() {
		switch d.tag {
		case 1:
			m.ID = uint64(d.uint(64))
		case 2:
			m.Site = d.str()
		case 3:
			m.Service = d.str()
		case 4:
			m.Number = d.str()
		case 5:
			m.Class = Class(d.uint(8))
		case 6:
			m.Status = TicketStatus(d.uint(8))
		case 7:
			m.Counter = uint32(d.uint(32))
		case 8:
			m.CallCount = uint16(d.uint(16))
		case 9:
			m.IssuedMS = d.int()
		case 10:
			m.CalledMS = d.int()
		case 11:
			m.PeopleAhead = uint32(d.uint(32))
		case 12:
			m.WaitSeconds = uint32(d.uint(32))
		case 13:
			m.ESCPOS = d.bytes()
		case 14:
			m.LCD = append(m.LCD, d.str())
		case 15:
			m.ServiceDay = d.str()
		case 16:
			m.Version = uint64(d.uint(64))
		}
	}
	return d.err
}

// Snapshot is the state of a site: its services and counters. Wire type SNAPSHOT (0x22).
type Snapshot struct {
	// Version (tag 1): event version the snapshot reflects.
	Version uint64
	// Site (tag 2): site code.
	Site string
	// ServiceDay (tag 3): service day, "2006-01-02".
	ServiceDay string
	// TimeMS (tag 4): daemon clock, Unix milliseconds.
	TimeMS int64
	// Services (tag 5): one record per service (repeated).
	Services []ServiceInfo
	// Counters (tag 6): one record per counter (repeated).
	Counters []CounterInfo
	// Devices (tag 7): health of the site's devices (repeated).
	Devices []DeviceInfo
}

// Type returns TypeSnapshot.
func (*Snapshot) Type() MsgType { return TypeSnapshot }

// AppendBinary appends the payload of m to dst.
func (m *Snapshot) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.uint(1, uint64(m.Version), 8)
	e.str(2, m.Site)
	e.str(3, m.ServiceDay)
	e.int(4, m.TimeMS)
	for i := range m.Services {
		start := e.begin(5)
		m.Services[i].appendFields(&e)
		e.end(start)
	}
	for i := range m.Counters {
		start := e.begin(6)
		m.Counters[i].appendFields(&e)
		e.end(start)
	}
	for i := range m.Devices {
		start := e.begin(7)
		m.Devices[i].appendFields(&e)
		e.end(start)
	}
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Snapshot) Decode(src []byte) error {
	*m = Snapshot{}
	d := decoder{b: src, t: TypeSnapshot}
	for d.next() {
		switch d.tag {
		case 1:
			m.Version = uint64(d.uint(64))
		case 2:
			m.Site = d.str()
		case 3:
			m.ServiceDay = d.str()
		case 4:
			m.TimeMS = d.int()
		case 5:
			var r ServiceInfo
			d.record(r.decodeFields)
			m.Services = append(m.Services, r)
		case 6:
			var r CounterInfo
			d.record(r.decodeFields)
			m.Counters = append(m.Counters, r)
		case 7:
			var r DeviceInfo
			d.record(r.decodeFields)
			m.Devices = append(m.Devices, r)
		}
	}
	return d.err
}

// Event is one committed state change, pushed to subscribers in version order. Wire type EVENT (0x23).
type Event struct {
	// Version (tag 1): per-site version, +1 per event.
	Version uint64
	// Site (tag 2): site code.
	Site string
	// Kind (tag 3): what happened.
	Kind EventKind
	// Number (tag 4): ticket number text; empty for counter events.
	Number string
	// Service (tag 5): service code.
	Service string
	// Counter (tag 6): counter; 0: none.
	Counter uint32
	// Actor (tag 7): device id or operator.
	Actor string
	// TimeMS (tag 8): time, Unix milliseconds.
	TimeMS int64
	// Status (tag 9): ticket status after the event.
	Status TicketStatus
	// TicketID (tag 10): ticket id.
	TicketID uint64
	// CallCount (tag 11): times called.
	CallCount uint16
	// ServiceDay (tag 12): service day, "2006-01-02".
	ServiceDay string
}

// Type returns TypeEvent.
func (*Event) Type() MsgType { return TypeEvent }

// AppendBinary appends the payload of m to dst.
func (m *Event) AppendBinary(dst []byte) ([]byte, error) {
	e := encoder{b: dst}
	e.uint(1, uint64(m.Version), 8)
	e.str(2, m.Site)
	e.uint(3, uint64(m.Kind), 1)
	e.str(4, m.Number)
	e.str(5, m.Service)
	e.uint(6, uint64(m.Counter), 4)
	e.str(7, m.Actor)
	e.int(8, m.TimeMS)
	e.uint(9, uint64(m.Status), 1)
	e.uint(10, uint64(m.TicketID), 8)
	e.uint(11, uint64(m.CallCount), 2)
	e.str(12, m.ServiceDay)
	return e.b, e.err
}

// Decode replaces m with the message in payload src. Unknown tags are skipped.
func (m *Event) Decode(src []byte) error {
	*m = Event{}
	d := decoder{b: src, t: TypeEvent}
	for d.next() {
		switch d.tag {
		case 1:
			m.Version = uint64(d.uint(64))
		case 2:
			m.Site = d.str()
		case 3:
			m.Kind = EventKind(d.uint(8))
		case 4:
			m.Number = d.str()
		case 5:
			m.Service = d.str()
		case 6:
			m.Counter = uint32(d.uint(32))
		case 7:
			m.Actor = d.str()
		case 8:
			m.TimeMS = d.int()
		case 9:
			m.Status = TicketStatus(d.uint(8))
		case 10:
			m.TicketID = uint64(d.uint(64))
		case 11:
			m.CallCount = uint16(d.uint(16))
		case 12:
			m.ServiceDay = d.str()
		}
	}
	return d.err
}

// ServiceInfo is one service in a SNAPSHOT.
type ServiceInfo struct {
	// Code (tag 1): service code.
	Code string
	// Name (tag 2): display name.
	Name string
	// Waiting (tag 3): tickets waiting.
	Waiting uint32
	// Served (tag 4): tickets done today.
	Served uint32
	// Issued (tag 5): tickets issued today.
	Issued uint32
	// LastCalled (tag 6): number last called.
	LastCalled string
	// Open (tag 7): true: kiosks may take tickets now.
	Open bool
	// NoShows (tag 8): tickets marked no-show today.
	NoShows uint32
	// Cancelled (tag 9): tickets cancelled today.
	Cancelled uint32
	// LongestWaitS (tag 10): seconds the longest-waiting ticket has waited now.
	LongestWaitS uint32
	// AvgWaitS (tag 11): average seconds from issue to call today.
	AvgWaitS uint32
	// AvgServiceS (tag 12): average seconds from start to done today.
	AvgServiceS uint32
	// Full (tag 13): true: the daily cap is reached.
	Full bool
	// WaitTargetS (tag 14): the service's wait target in seconds; 0: none.
	WaitTargetS uint32
}

func (m *ServiceInfo) appendFields(e *encoder) {
	e.str(1, m.Code)
	e.str(2, m.Name)
	e.uint(3, uint64(m.Waiting), 4)
	e.uint(4, uint64(m.Served), 4)
	e.uint(5, uint64(m.Issued), 4)
	e.str(6, m.LastCalled)
	e.bool(7, m.Open)
	e.uint(8, uint64(m.NoShows), 4)
	e.uint(9, uint64(m.Cancelled), 4)
	e.uint(10, uint64(m.LongestWaitS), 4)
	e.uint(11, uint64(m.AvgWaitS), 4)
	e.uint(12, uint64(m.AvgServiceS), 4)
	e.bool(13, m.Full)
	e.uint(14, uint64(m.WaitTargetS), 4)
}

func (m *ServiceInfo) decodeFields(d *decoder) {
	for d.next() {
		switch d.tag {
		case 1:
			m.Code = d.str()
		case 2:
			m.Name = d.str()
		case 3:
			m.Waiting = uint32(d.uint(32))
		case 4:
			m.Served = uint32(d.uint(32))
		case 5:
			m.Issued = uint32(d.uint(32))
		case 6:
			m.LastCalled = d.str()
		case 7:
			m.Open = d.bool()
		case 8:
			m.NoShows = uint32(d.uint(32))
		case 9:
			m.Cancelled = uint32(d.uint(32))
		case 10:
			m.LongestWaitS = uint32(d.uint(32))
		case 11:
			m.AvgWaitS = uint32(d.uint(32))
		case 12:
			m.AvgServiceS = uint32(d.uint(32))
		case 13:
			m.Full = d.bool()
		case 14:
			m.WaitTargetS = uint32(d.uint(32))
		}
	}
}

// CounterInfo is one counter in a SNAPSHOT.
type CounterInfo struct {
	// ID (tag 1): counter id.
	ID uint32
	// Name (tag 2): display name.
	Name string
	// State (tag 3): open, paused or closed.
	State CounterState
	// Number (tag 4): ticket it is handling; empty: none.
	Number string
	// Status (tag 5): status of that ticket.
	Status TicketStatus
	// Service (tag 6): service of that ticket.
	Service string
	// SinceMS (tag 7): when the state or the ticket last changed, Unix milliseconds; 0: never.
	SinceMS int64
	// Served (tag 8): tickets this counter finished today.
	Served uint32
}

func (m *CounterInfo) appendFields(e *encoder) {
	e.uint(1, uint64(m.ID), 4)
	e.str(2, m.Name)
	e.uint(3, uint64(m.State), 1)
	e.str(4, m.Number)
	e.uint(5, uint64(m.Status), 1)
	e.str(6, m.Service)
	e.int(7, m.SinceMS)
	e.uint(8, uint64(m.Served), 4)
}

func (m *CounterInfo) decodeFields(d *decoder) {
	for d.next() {
		switch d.tag {
		case 1:
			m.ID = uint32(d.uint(32))
		case 2:
			m.Name = d.str()
		case 3:
			m.State = CounterState(d.uint(8))
		case 4:
			m.Number = d.str()
		case 5:
			m.Status = TicketStatus(d.uint(8))
		case 6:
			m.Service = d.str()
		case 7:
			m.SinceMS = d.int()
		case 8:
			m.Served = uint32(d.uint(32))
		}
	}
}

// DeviceInfo is the health of one device in a SNAPSHOT.
type DeviceInfo struct {
	// ID (tag 1): device id, printer id, or "PORT#ADDR" for an LED board or wired keypad.
	ID string
	// Kind (tag 2): "led", "printer", "keypad" (wired), "device" (a protocol keypad, kiosk or display), "voice".
	Kind string
	// Counter (tag 3): counter it belongs to; 0: none (hall board, printer, zone).
	Counter uint32
	// Online (tag 4): true: it answered or is connected.
	Online bool
	// Detail (tag 5): what is wrong, e.g. "paper_out", "not connected"; empty when fine.
	Detail string
}

func (m *DeviceInfo) appendFields(e *encoder) {
	e.str(1, m.ID)
	e.str(2, m.Kind)
	e.uint(3, uint64(m.Counter), 4)
	e.bool(4, m.Online)
	e.str(5, m.Detail)
}

func (m *DeviceInfo) decodeFields(d *decoder) {
	for d.next() {
		switch d.tag {
		case 1:
			m.ID = d.str()
		case 2:
			m.Kind = d.str()
		case 3:
			m.Counter = uint32(d.uint(32))
		case 4:
			m.Online = d.bool()
		case 5:
			m.Detail = d.str()
		}
	}
}
