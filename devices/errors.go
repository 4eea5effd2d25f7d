package devices

import (
	"errors"
	"fmt"
)

var (
	// ErrNoPrinter is returned by PrintTicket for a device that has no
	// printer configured, and by Reprint for an unknown printer.
	ErrNoPrinter = errors.New("devices: no printer configured")
	// ErrStarted is returned by a second call of Run.
	ErrStarted = errors.New("devices: dispatcher already started")
)

// PrintError says that a ticket did not print. It wraps the printer's error,
// so errors.Is(err, escpos.ErrPaperOut) (or ErrCoverOpen, ErrOffline,
// ErrNoAnswer) tells the cause.
type PrintError struct {
	Printer string // printer id
	Number  string // ticket number
	Err     error
}

// Error implements error.
func (e *PrintError) Error() string {
	return fmt.Sprintf("devices: print %s on printer %s: %v", e.Number, e.Printer, e.Err)
}

// Unwrap returns the printer's error.
func (e *PrintError) Unwrap() error { return e.Err }

// NoPrinterError says that a reprint has no printer to go to: the kiosk
// that issued the ticket prints on none, or the printer named is not
// configured. Its text is short and plain, for a console's status line; it
// unwraps to ErrNoPrinter.
type NoPrinterError struct {
	Number  string // ticket number
	Kiosk   string // the device that issued it
	Printer string // the printer asked for; empty: the kiosk's
}

// Error implements error.
func (e *NoPrinterError) Error() string {
	if e.Printer == "" {
		return fmt.Sprintf("%s has no printer: add a printer id", orNone(e.Kiosk))
	}
	return fmt.Sprintf("no printer %q configured", e.Printer)
}

// Unwrap returns ErrNoPrinter.
func (e *NoPrinterError) Unwrap() error { return ErrNoPrinter }

// Reason is what a device is told: the error itself, short already.
func (e *NoPrinterError) Reason() string { return e.Error() }

func orNone(s string) string {
	if s == "" {
		return "its kiosk"
	}
	return s
}

// Reason is a short, stable wording of why the ticket did not print, fit to
// show a person: "paper out", "cover open", "printer offline", "no answer
// from printer", else "printer error" (the full error is for the log).
func (e *PrintError) Reason() string {
	if _, words, ok := printFault(e.Err); ok {
		return words
	}
	return "printer error"
}
