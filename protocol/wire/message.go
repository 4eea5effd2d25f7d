package wire

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Message is one protocol message: a struct whose fields are the tagged
// fields of a frame payload.
type Message interface {
	// Type returns the frame type that carries this message.
	Type() MsgType
	// AppendBinary appends the payload encoding to dst.
	AppendBinary(dst []byte) ([]byte, error)
	// Decode replaces the message with the payload in src, skipping unknown
	// tags, and checks it with Validate. It never keeps a reference to src.
	Decode(src []byte) error
}

// EncodeMessage appends to dst a complete frame carrying m, with the given
// flags and request id. It fails with ErrFrameTooLarge when the payload
// exceeds MaxPayload; dst is then returned unchanged.
func EncodeMessage(dst []byte, reqID uint32, flags Flags, m Message) ([]byte, error) {
	start := len(dst)
	dst = appendHeader(dst, m.Type(), flags, reqID, 0)
	dst, err := m.AppendBinary(dst)
	if err != nil {
		return dst[:start], fmt.Errorf("wire: encode %s: %w", m.Type(), err)
	}
	n := len(dst) - start - HeaderSize
	if n > MaxPayload {
		return dst[:start], fmt.Errorf("wire: encode %s: payload %d > %d: %w", m.Type(), n, MaxPayload, ErrFrameTooLarge)
	}
	binary.BigEndian.PutUint32(dst[start+9:], uint32(n))
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:])), nil
}

// DecodeMessage decodes the payload of f into a new message of f's type. It
// fails with ErrUnknownType or ErrMalformed (see FieldError); neither means
// the stream is out of step.
func DecodeMessage(f Frame) (Message, error) {
	m, err := New(f.Type)
	if err != nil {
		return nil, err
	}
	if err := m.Decode(f.Payload); err != nil {
		return nil, err
	}
	return m, nil
}
