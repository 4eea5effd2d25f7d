package led

import "errors"

var (
	// ErrAddress is returned for a board address the protocol cannot carry.
	ErrAddress = errors.New("led: address out of range")
	// ErrCharset is returned for text the board's character set cannot show.
	ErrCharset = errors.New("led: text not representable")
	// ErrTooLong is returned for content larger than the frame can carry.
	ErrTooLong = errors.New("led: content too long")
	// ErrReply is returned for a reply that does not match the request.
	ErrReply = errors.New("led: bad reply")
	// ErrChecksum is returned for a reply whose checksum is wrong.
	ErrChecksum = errors.New("led: bad checksum")
	// ErrTimeout is returned when a write or a reply took too long.
	ErrTimeout = errors.New("led: timeout")
	// ErrKeypadFrame is returned for bytes that are not a valid keypad frame.
	ErrKeypadFrame = errors.New("led: bad keypad frame")
)
