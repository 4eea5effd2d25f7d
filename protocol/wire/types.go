package wire

import (
	"fmt"
	"reflect"
)

// Message types, one per message struct; each is declared with its struct
// (declare) and given its methods in methods.go.
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
	// TypeCheckIn is CHECK_IN.
	TypeCheckIn MsgType = 0x1F
	// TypeOK is OK.
	TypeOK MsgType = 0x20
	// TypeTicket is TICKET.
	TypeTicket MsgType = 0x21
	// TypeSnapshot is SNAPSHOT.
	TypeSnapshot MsgType = 0x22
	// TypeEvent is EVENT.
	TypeEvent MsgType = 0x23
)

// schemas holds the declaration of every message, by type byte. The
// declarations (declare, next to each struct) are collected while the
// package's variables are initialised, so they are built here, in init.
var schemas [256]*schema

func init() {
	var err error
	if schemas, err = buildAll(decls); err != nil {
		panic(err)
	}
}

// New returns a new, empty message of type t, or an error wrapping ErrUnknownType.
func New(t MsgType) (Message, error) {
	if s := schemas[t]; s != nil {
		return reflect.New(s.typ).Interface().(Message), nil
	}
	return nil, fmt.Errorf("wire: new message 0x%02x: %w", uint8(t), ErrUnknownType)
}

// Types returns every message type in ascending order.
func Types() []MsgType {
	var ts []MsgType
	for t, s := range schemas {
		if s != nil {
			ts = append(ts, MsgType(t))
		}
	}
	return ts
}
