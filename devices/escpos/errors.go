package escpos

import "errors"

// Sentinel errors. Callers test for them with errors.Is; the errors returned by
// this package wrap them with the action and the printer address.
var (
	// ErrPaperOut means the roll paper end sensor reports no paper
	// (DLE EOT 4 bits 5-6, or DLE EOT 2 bit 5).
	ErrPaperOut = errors.New("escpos: paper out")
	// ErrCoverOpen means the printer cover is open (DLE EOT 2 bit 2).
	ErrCoverOpen = errors.New("escpos: cover open")
	// ErrOffline means the printer reports itself offline (DLE EOT 1 bit 3)
	// for a cause other than paper end or an open cover.
	ErrOffline = errors.New("escpos: printer offline")
	// ErrNoAnswer means the printer could not be reached or did not answer a
	// status query within the status timeout.
	ErrNoAnswer = errors.New("escpos: no answer from printer")
	// ErrBadLayout means a Layout or a Ticket cannot be rendered (unknown
	// paper width, bad template, QR payload too long...).
	ErrBadLayout = errors.New("escpos: bad layout")
	// ErrCommandTooLong means a command in a byte stream declares more
	// parameter bytes than MaxCommandLen.
	ErrCommandTooLong = errors.New("escpos: command too long")
)
