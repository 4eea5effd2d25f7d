package wire

import "fmt"

// Field size limits a daemon enforces with Validate.
const (
	// MaxIDLen is the longest device id, idempotency key, site, service,
	// ticket number or printer id, in bytes.
	MaxIDLen = 64
)

// Validate checks the fields a message cannot do without and the length
// limits of PROTOCOL.md (the codec itself accepts any well-formed payload).
// A failure is a *FieldError, so it matches ErrMalformed and StatusOf maps it
// to ErrBadPayload.
func Validate(m Message) error {
	v := validator{t: m.Type()}
	switch m := m.(type) {
	case *Hello:
		v.required(1, m.DeviceID)
		v.short(1, m.DeviceID)
		if m.Role < RoleKiosk || m.Role > RoleConsole {
			v.fail(2, fmt.Sprintf("unknown role %d", m.Role))
		}
	case *Challenge:
		v.size(1, m.Nonce, NonceSize)
	case *Auth:
		v.size(1, m.MAC, NonceSize)
	case *TakeTicket:
		v.short(1, m.IdemKey)
		v.required(4, m.Service)
		v.short(4, m.Service)
		v.short(10, m.Site)
	case *CallNext:
		v.short(1, m.IdemKey)
		v.short(4, m.Service)
		v.short(10, m.Site)
	case *CallNumber:
		v.number(m.IdemKey, m.Number, true, m.Site)
	case *Recall:
		v.number(m.IdemKey, m.Number, false, m.Site)
	case *NoShow:
		v.number(m.IdemKey, m.Number, false, m.Site)
	case *Reenter:
		v.number(m.IdemKey, m.Number, true, m.Site)
	case *Start:
		v.number(m.IdemKey, m.Number, false, m.Site)
	case *Complete:
		v.number(m.IdemKey, m.Number, false, m.Site)
	case *Transfer:
		v.number(m.IdemKey, m.Number, false, m.Site)
		v.short(5, m.ToService)
		if m.ToService == "" && m.ToCounter == 0 {
			v.fail(5, "transfer needs a service or a counter")
		}
	case *Cancel:
		v.number(m.IdemKey, m.Number, true, m.Site)
	case *Pause:
		v.short(1, m.IdemKey)
		v.short(10, m.Site)
	case *Resume:
		v.short(1, m.IdemKey)
		v.short(10, m.Site)
	case *Status:
		v.short(3, m.Number)
		v.short(4, m.Service)
		v.short(10, m.Site)
	case *Subscribe:
		for _, s := range m.Services {
			v.short(4, s)
		}
		v.short(10, m.Site)
	case *Reprint:
		v.required(3, m.Number)
		v.short(3, m.Number)
		v.short(10, m.Site)
		v.short(12, m.Printer)
	case *ErrorMsg:
		if m.Code == 0 {
			v.fail(1, "error code 0")
		}
	}
	return v.err
}

type validator struct {
	t   MsgType
	err error
}

func (v *validator) fail(tag uint8, why string) {
	if v.err == nil {
		v.err = &FieldError{Type: v.t, Tag: tag, Reason: why}
	}
}

func (v *validator) required(tag uint8, s string) {
	if s == "" {
		v.fail(tag, "required")
	}
}

func (v *validator) short(tag uint8, s string) {
	if len(s) > MaxIDLen {
		v.fail(tag, fmt.Sprintf("%d bytes, at most %d", len(s), MaxIDLen))
	}
}

func (v *validator) size(tag uint8, b []byte, n int) {
	if len(b) != n {
		v.fail(tag, fmt.Sprintf("%d bytes, want %d", len(b), n))
	}
}

// number checks the fields every ticket action shares.
func (v *validator) number(key, number string, needNumber bool, site string) {
	v.short(1, key)
	if needNumber {
		v.required(3, number)
	}
	v.short(3, number)
	v.short(10, site)
}
