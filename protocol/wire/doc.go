// Package wire encodes and decodes the nowserving device protocol: the frames
// and the tagged messages that kiosks, keypads, displays and consoles exchange
// with the daemon over TCP. The specification, written for firmware authors, is
// protocol/PROTOCOL.md; the canonical frames in testdata/vectors are the same
// bytes as the hex examples there.
//
// The package is pure: no network, no goroutines, no clock. Encoding appends to
// a caller-owned buffer (AppendFrame, EncodeMessage, Message.AppendBinary);
// decoding checks every declared length against its bound before allocating and
// fails with a typed error (ErrBadMagic, ErrBadChecksum, ErrFrameTooLarge,
// ErrTruncated, ErrUnknownType, ErrMalformed, ...). What the daemon may tell a
// device is a *StatusError carrying a stable wire code (ErrServiceFull, ...).
package wire
