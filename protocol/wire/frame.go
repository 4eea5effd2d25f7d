package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Frame layout constants.
const (
	// Magic0 and Magic1 are the first two bytes of every frame: "NS".
	Magic0, Magic1 = 0x4E, 0x53
	// ProtocolVersion is the protocol version written in every frame header and
	// the only one this package accepts.
	ProtocolVersion = 1
	// HeaderSize is the size of the frame header: magic (2), version (1),
	// type (1), flags (1), request id (4), payload length (4).
	HeaderSize = 13
	// TrailerSize is the size of the CRC-32 that ends every frame.
	TrailerSize = 4
	// Overhead is the number of bytes a frame adds to its payload.
	Overhead = HeaderSize + TrailerSize
	// MaxPayload is the largest payload length a frame may declare (64 KiB).
	MaxPayload = 64 << 10
	// MaxFrameSize is the largest frame on the wire: MaxPayload plus Overhead.
	MaxFrameSize = MaxPayload + Overhead
)

// MsgType is the message type byte of a frame header.
type MsgType uint8

// String returns the specification name of t, e.g. "TAKE_TICKET", or
// "0x7f" for an unknown type.
func (t MsgType) String() string {
	if s := schemas[t]; s != nil {
		return s.name
	}
	return fmt.Sprintf("0x%02x", uint8(t))
}

// IsRequest reports whether t is a request a device sends (0x10..0x1F).
func (t MsgType) IsRequest() bool { return t >= 0x10 && t <= 0x1F }

// IsMutating reports whether t is a request that changes state and so carries
// an idempotency key: every request except STATUS, SUBSCRIBE and REPRINT (a
// reprint changes nothing; sent again, it prints again).
func (t MsgType) IsMutating() bool {
	return t.IsRequest() && t != TypeStatus && t != TypeSubscribe && t != TypeReprint
}

// Flags is the flags byte of a frame header. Bits not defined here are
// reserved: senders write them as zero, receivers ignore them.
type Flags uint8

// Flag bits.
const (
	// FlagResponse marks a frame that answers the request with the same
	// request id (TICKET, OK, SNAPSHOT, ERROR, WELCOME, CHALLENGE).
	FlagResponse Flags = 1 << 0
	// FlagRetry marks a request sent again (same request id and idempotency
	// key) because no answer arrived, possibly over a new connection.
	FlagRetry Flags = 1 << 1
)

// Frame is one decoded frame. Payload is the encoded message (see
// Message.Decode); frames from DecodeFrame alias the input buffer.
type Frame struct {
	// Type is the message type.
	Type MsgType
	// Flags are the header flags.
	Flags Flags
	// RequestID correlates a request and its answer; 0 for unsolicited frames.
	RequestID uint32
	// Payload is the tagged message body, at most MaxPayload bytes.
	Payload []byte
}

// AppendFrame appends the encoding of f to dst. The caller keeps f.Payload
// within MaxPayload (EncodeMessage checks it); a longer payload produces a
// frame every decoder refuses.
func AppendFrame(dst []byte, f Frame) []byte {
	start := len(dst)
	dst = appendHeader(dst, f.Type, f.Flags, f.RequestID, uint32(len(f.Payload)))
	dst = append(dst, f.Payload...)
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:]))
}

func appendHeader(dst []byte, t MsgType, fl Flags, id, n uint32) []byte {
	dst = append(dst, Magic0, Magic1, ProtocolVersion, byte(t), byte(fl))
	dst = binary.BigEndian.AppendUint32(dst, id)
	return binary.BigEndian.AppendUint32(dst, n)
}

// checkHeader validates the header bytes present in h (which may be shorter
// than HeaderSize) and returns the declared payload length when h is
// complete. Checks run as early as the bytes allow, so garbage is refused
// before a whole header arrives.
func checkHeader(h []byte, limit int) (int, error) {
	if len(h) > 0 && h[0] != Magic0 || len(h) > 1 && h[1] != Magic1 {
		return 0, ErrBadMagic
	}
	if len(h) > 2 && h[2] != ProtocolVersion {
		return 0, fmt.Errorf("%w: %d", ErrBadVersion, h[2])
	}
	if len(h) < HeaderSize {
		return 0, ErrTruncated
	}
	n := binary.BigEndian.Uint32(h[9:13])
	if uint64(n) > uint64(limit) {
		return 0, fmt.Errorf("%w: payload %d > %d", ErrFrameTooLarge, n, limit)
	}
	return int(n), nil
}

// DecodeFrame decodes the frame at the start of src and returns it with the
// number of bytes it used. When src holds only the beginning of a valid frame
// it returns an error wrapping ErrTruncated and n == 0: append more input and
// call again. Any other error means the stream cannot be trusted any more
// (see IsFatal). The returned payload aliases src.
func DecodeFrame(src []byte) (f Frame, n int, err error) {
	plen, err := checkHeader(src[:min(len(src), HeaderSize)], MaxPayload)
	if err != nil {
		return Frame{}, 0, err
	}
	total := HeaderSize + plen + TrailerSize
	if len(src) < total {
		return Frame{}, 0, ErrTruncated
	}
	body := src[:HeaderSize+plen]
	if got, want := binary.BigEndian.Uint32(src[HeaderSize+plen:total]), crc32.ChecksumIEEE(body); got != want {
		return Frame{}, 0, fmt.Errorf("%w: got %08x, want %08x", ErrBadChecksum, got, want)
	}
	f = Frame{
		Type:      MsgType(src[3]),
		Flags:     Flags(src[4]),
		RequestID: binary.BigEndian.Uint32(src[5:9]),
		Payload:   body[HeaderSize:],
	}
	return f, total, nil
}

// ReadFrame reads one frame from r. It refuses a declared payload longer than
// max (or MaxPayload when max <= 0 or larger) before allocating the payload,
// and refuses bad magic or version as soon as those bytes arrive, without
// waiting for a whole header. At a clean frame boundary with no more input it
// returns io.EOF; input that ends inside a frame gives an error wrapping
// ErrTruncated. Errors from r (deadlines, resets) are returned wrapped. The
// only allocation is the payload.
func ReadFrame(r *bufio.Reader, max int) (Frame, error) {
	if max <= 0 || max > MaxPayload {
		max = MaxPayload
	}
	// Peek a growing prefix of the header: one garbage byte is enough to
	// refuse the stream. bufio.Reader buffers hold at least 16 bytes, more
	// than HeaderSize.
	var h []byte
	for _, n := range [...]int{1, 2, 3, HeaderSize} {
		var err error
		h, err = r.Peek(n)
		if err != nil {
			if len(h) == 0 && errors.Is(err, io.EOF) {
				return Frame{}, io.EOF
			}
			return Frame{}, readErr(err)
		}
		if _, err := checkHeader(h, max); err != nil && !errors.Is(err, ErrTruncated) {
			return Frame{}, fmt.Errorf("wire: read frame: %w", err)
		}
	}
	plen, err := checkHeader(h, max)
	if err != nil {
		return Frame{}, fmt.Errorf("wire: read frame: %w", err)
	}
	f := Frame{
		Type:      MsgType(h[3]),
		Flags:     Flags(h[4]),
		RequestID: binary.BigEndian.Uint32(h[5:9]),
	}
	crc := crc32.ChecksumIEEE(h)
	if _, err := r.Discard(HeaderSize); err != nil {
		return Frame{}, readErr(err)
	}
	buf := make([]byte, plen+TrailerSize)
	if _, err := io.ReadFull(r, buf); err != nil {
		return Frame{}, readErr(err)
	}
	crc = crc32.Update(crc, crc32.IEEETable, buf[:plen])
	if got := binary.BigEndian.Uint32(buf[plen:]); got != crc {
		return Frame{}, fmt.Errorf("wire: read frame: %w: got %08x, want %08x", ErrBadChecksum, got, crc)
	}
	f.Payload = buf[:plen:plen]
	return f, nil
}

func readErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("wire: read frame: %w", ErrTruncated)
	}
	return fmt.Errorf("wire: read frame: %w", err)
}
