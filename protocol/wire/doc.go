// Package wire encodes and decodes the nowserving device protocol: the frames
// and the tagged messages that kiosks, keypads, displays and consoles exchange
// with the daemon over TCP. The specification, written for firmware authors, is
// protocol/PROTOCOL.md; the canonical frames in testdata/vectors are the same
// bytes as the hex examples there.
//
// Every message is declared once: its struct and, below it, a table from tag
// number to field name and rules (`4: "Service id required"`, see
// schema.go). Encoding, decoding, Validate, the check of PROTOCOL.md's field
// tables, the field coverage of the test vectors and the fuzz seeds all
// follow that declaration.
//
// The package is pure: no network, no goroutines, no clock. Encoding appends to
// a caller-owned buffer (AppendFrame, EncodeMessage, Message.AppendBinary);
// decoding checks every declared length against its bound before allocating and
// fails with a typed error (ErrBadMagic, ErrBadChecksum, ErrFrameTooLarge,
// ErrTruncated, ErrUnknownType, ErrMalformed, ...). What the daemon may tell a
// device is a *StatusError carrying a stable wire code (ErrServiceFull, ...).
package wire
