package wire

// The handshake and the frames both sides send: HELLO, CHALLENGE, AUTH,
// WELCOME, HEARTBEAT, ERROR. How a struct declares its fields: schema.go.

// Hello is the first frame a device sends after connecting. Wire type HELLO (0x01).
type Hello struct {
	// DeviceID: device id from the daemon configuration, at most 64 bytes.
	DeviceID string
	// Role: role the device claims; must match its configuration.
	Role Role
	// ProtocolVersion: highest protocol version the device speaks (1).
	ProtocolVersion uint8
	// BootNonce: random value chosen once per device boot (or a boot counter kept in flash).
	BootNonce uint64
	// LastVersion: last event version the device has seen; 0: none.
	LastVersion uint64
	// Firmware: free-form firmware name and version, for logs.
	Firmware string
}

var _ = declare[Hello](TypeHello, "HELLO", fields{
	1: "DeviceID id required",
	2: "Role required known",
	3: "ProtocolVersion",
	4: "BootNonce",
	5: "LastVersion",
	6: "Firmware",
})

// Challenge is the daemon's answer to HELLO: a fresh random nonce to sign. Wire type CHALLENGE (0x02).
type Challenge struct {
	// Nonce: 32 random bytes.
	Nonce []byte
}

var _ = declare[Challenge](TypeChallenge, "CHALLENGE", fields{
	1: "Nonce nonce",
})

// Auth proves the device knows its secret: MAC = HMAC-SHA256(secret, nonce || device id). Wire type AUTH (0x03).
type Auth struct {
	// MAC: 32 bytes, see ComputeMAC.
	MAC []byte
}

var _ = declare[Auth](TypeAuth, "AUTH", fields{
	1: "MAC nonce",
})

// Welcome accepts the session and tells the device what it may do. Wire type WELCOME (0x04).
type Welcome struct {
	// ServerTimeMS: daemon clock, Unix milliseconds.
	ServerTimeMS int64
	// Site: site code the device belongs to.
	Site string
	// ServiceDay: current service day of the site, "2006-01-02".
	ServiceDay string
	// Role: role granted.
	Role Role
	// Counter: counter the device is bound to; 0: none.
	Counter uint32
	// Allowed: requests the device may send (bit n: request type 0x10+n).
	Allowed Actions
	// HeartbeatMS: heartbeat interval in milliseconds.
	HeartbeatMS uint32
	// Version: latest event version of the site; not sent to a kiosk,
	// which does not subscribe (absent: 0).
	Version uint64
	// MaxPayload: largest payload the daemon accepts, bytes.
	MaxPayload uint32
	// RateLimit: requests per second the device may send on average.
	RateLimit uint16
	// RateBurst: requests the device may send at once before RateLimit applies (the bucket size).
	RateBurst uint16
	// Languages: the site's languages, main one first, e.g. "pt", "en".
	Languages []string
	// Services: the site's services, with their names (repeated).
	Services []ServiceDef
	// Classes: the ticket classes a TAKE_TICKET may ask for at the site (repeated).
	Classes []ClassDef
}

var _ = declare[Welcome](TypeWelcome, "WELCOME", fields{
	1:  "ServerTimeMS",
	2:  "Site",
	3:  "ServiceDay",
	4:  "Role",
	5:  "Counter",
	6:  "Allowed",
	7:  "HeartbeatMS",
	8:  "Version",
	9:  "MaxPayload",
	10: "RateLimit",
	11: "RateBurst",
	12: "Languages",
	13: "Services",
	14: "Classes",
})

// ServiceDef is one service of the site in a WELCOME.
type ServiceDef struct {
	// Code: service code, as TAKE_TICKET names it.
	Code string
	// Names: its name in each of WELCOME's Languages, in the same order (repeated).
	Names []string
}

var _ = declareRecord[ServiceDef](fields{
	1: "Code",
	2: "Names",
})

// ClassDef is one ticket class of the site in a WELCOME.
type ClassDef struct {
	// Value: the Class value TAKE_TICKET, TICKET and EVENT carry for it.
	Value Class
	// Code: the class name in the daemon configuration, e.g. "priority".
	Code string
	// Names: its name in each of WELCOME's Languages, in the same order (repeated).
	Names []string
}

var _ = declareRecord[ClassDef](fields{
	1: "Value",
	2: "Code",
	3: "Names",
})

// Heartbeat is sent by either side when it has sent nothing else for one heartbeat interval. Wire type HEARTBEAT (0x05).
type Heartbeat struct {
	// TimeMS: sender clock, Unix milliseconds.
	TimeMS int64
	// Version: device: last version seen. The daemon sends none (0):
	// versions come with SUBSCRIBE's answer and the EVENTs.
	Version uint64
}

var _ = declare[Heartbeat](TypeHeartbeat, "HEARTBEAT", fields{
	1: "TimeMS",
	2: "Version",
})

// ErrorMsg reports a refused request or a protocol error. Wire type ERROR (0x06).
type ErrorMsg struct {
	// Code: stable error code (see the error table).
	Code uint16
	// Msg: human-readable message, English.
	Msg string
	// Retryable: true: the same request may succeed if sent again after a pause.
	Retryable bool
	// RequestID: request id of the refused request (also in the frame header); 0: none.
	RequestID uint32
	// RetryAfterMS: suggested pause before a retry, milliseconds; 0: client's choice.
	RetryAfterMS uint32
}

var _ = declare[ErrorMsg](TypeError, "ERROR", fields{
	1: "Code required",
	2: "Msg",
	3: "Retryable",
	4: "RequestID",
	5: "RetryAfterMS",
})
