package escpos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/nowserving/nowserving/internal/positive"
)

// Status request numbers for DLE EOT n (Epson: "Transmit real-time status").
const (
	StatusPrinter = 1 // DLE EOT 1: printer status
	StatusOffline = 2 // DLE EOT 2: offline cause status
	StatusPaper   = 4 // DLE EOT 4: roll paper sensor status
)

// Bits of the status bytes, from the Epson ESC/POS reference. Every status
// byte has bit 1 and bit 4 set and bits 0 and 7 clear; replies that do not fit
// this pattern (XON/XOFF, automatic status back) are skipped.
const (
	statusFixedMask  = 0x93
	statusFixedValue = 0x12

	bitOffline      = 1 << 3 // DLE EOT 1: offline
	bitCoverOpen    = 1 << 2 // DLE EOT 2: cover is open
	bitPaperEndStop = 1 << 5 // DLE EOT 2: printing stopped by paper end
	bitError        = 1 << 6 // DLE EOT 2: error occurred
	bitsNearEnd     = 3 << 2 // DLE EOT 4 bits 2-3: roll paper near end
	bitsPaperEnd    = 3 << 5 // DLE EOT 4 bits 5-6: roll paper end
)

// IsStatusByte reports whether b has the fixed bits of a DLE EOT reply.
func IsStatusByte(b byte) bool { return b&statusFixedMask == statusFixedValue }

// Status is the decoded state of a printer.
type Status struct {
	Offline      bool    // DLE EOT 1 bit 3
	CoverOpen    bool    // DLE EOT 2 bit 2
	PaperEndStop bool    // DLE EOT 2 bit 5: printing stopped because paper ran out
	Error        bool    // DLE EOT 2 bit 6: an error occurred (cutter, head...)
	PaperNearEnd bool    // DLE EOT 4 bits 2-3
	PaperOut     bool    // DLE EOT 4 bits 5-6
	Raw          [3]byte // replies to DLE EOT 1, 2 and 4; Raw[1] is 0 when the printer was online and DLE EOT 2 not asked
}

// Err returns nil when the printer can print, else ErrPaperOut, ErrCoverOpen
// or ErrOffline, in that order of precedence.
func (s Status) Err() error {
	switch {
	case s.PaperOut || s.PaperEndStop:
		return ErrPaperOut
	case s.CoverOpen:
		return ErrCoverOpen
	case s.Offline:
		return ErrOffline
	}
	return nil
}

// String lists the set conditions, "ok" when there are none.
func (s Status) String() string {
	var out []string
	for _, c := range []struct {
		on   bool
		name string
	}{
		{s.Offline, "offline"}, {s.CoverOpen, "cover open"}, {s.PaperEndStop, "stopped by paper end"},
		{s.Error, "error"}, {s.PaperNearEnd, "paper near end"}, {s.PaperOut, "paper out"},
	} {
		if c.on {
			out = append(out, c.name)
		}
	}
	if len(out) == 0 {
		return "ok"
	}
	return fmt.Sprint(out)
}

// Opts configures a Printer.
type Opts struct {
	Addr          string        // host:port of the printer; ":9100" is added when the port is missing
	DialTimeout   time.Duration // connecting
	WriteTimeout  time.Duration // sending the ticket
	StatusTimeout time.Duration // waiting for each status reply
	Logger        *slog.Logger  // warnings such as paper near end; nil discards
}

// DefaultOpts returns the timeouts used when Opts leaves them zero.
func DefaultOpts() Opts {
	return Opts{
		DialTimeout:   3 * time.Second,
		WriteTimeout:  10 * time.Second,
		StatusTimeout: 2 * time.Second,
		Logger:        slog.New(slog.DiscardHandler),
	}
}

// Printer is a network receipt printer reached over raw TCP (port 9100,
// "JetDirect"). One Printer sends one job at a time; it is safe for
// concurrent use. Each Print or Status opens its own connection, as kiosks
// share printers and the printer accepts one connection at a time.
type Printer struct {
	opts Opts
	sem  chan struct{}
}

// NewPrinter returns a Printer for opts; zero timeouts take DefaultOpts.
func NewPrinter(opts Opts) *Printer {
	def := DefaultOpts()
	opts.DialTimeout = positive.Or(opts.DialTimeout, def.DialTimeout)
	opts.WriteTimeout = positive.Or(opts.WriteTimeout, def.WriteTimeout)
	opts.StatusTimeout = positive.Or(opts.StatusTimeout, def.StatusTimeout)
	if opts.Logger == nil {
		opts.Logger = def.Logger
	}
	if _, _, err := net.SplitHostPort(opts.Addr); err != nil {
		opts.Addr = net.JoinHostPort(opts.Addr, "9100")
	}
	return &Printer{opts: opts, sem: make(chan struct{}, 1)}
}

// Addr returns the printer address in host:port form.
func (p *Printer) Addr() string { return p.opts.Addr }

// Status connects, asks DLE EOT 1 (and DLE EOT 2 when offline) and DLE EOT 4
// and returns the decoded status. The error is about reaching the printer
// (wrapping ErrNoAnswer) or the context; a printer without paper is a
// successful Status whose Err is ErrPaperOut.
func (p *Printer) Status(ctx context.Context) (Status, error) {
	var st Status
	err := p.session(ctx, "status", func(c *conn) error {
		var err error
		st, err = c.status()
		return err
	})
	return st, err
}

// Print sends one rendered ticket. It first asks the printer's status and
// refuses to send anything when the paper is out, the cover is open or the
// printer is offline; then it writes the ticket and asks the status again, so
// that paper running out during the ticket is reported too. Errors wrap
// ErrPaperOut, ErrCoverOpen, ErrOffline, ErrNoAnswer or the context's error.
func (p *Printer) Print(ctx context.Context, ticket []byte) error {
	return p.session(ctx, "print", func(c *conn) error {
		before, err := c.status()
		if err != nil {
			return fmt.Errorf("status before ticket: %w", err)
		}
		if err := before.Err(); err != nil {
			return fmt.Errorf("status before ticket (%s): %w", before, err)
		}
		if err := c.write(ticket); err != nil {
			return fmt.Errorf("send ticket: %w", err)
		}
		after, err := c.status()
		if err != nil {
			return fmt.Errorf("status after ticket: %w", err)
		}
		if err := after.Err(); err != nil {
			return fmt.Errorf("status after ticket (%s): %w", after, err)
		}
		if after.PaperNearEnd {
			p.opts.Logger.Warn("printer paper near end", "printer", p.opts.Addr)
		}
		return nil
	})
}

// session runs f on a fresh connection, one session at a time, with ctx
// cancellation mapped onto connection deadlines.
func (p *Printer) session(ctx context.Context, action string, f func(*conn) error) error {
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("escpos: %s %s: %w", action, p.opts.Addr, ctx.Err())
	}
	defer func() { <-p.sem }()

	wrap := func(err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			return fmt.Errorf("escpos: %s %s: %w (%v)", action, p.opts.Addr, ctxErr, err)
		}
		return fmt.Errorf("escpos: %s %s: %w", action, p.opts.Addr, err)
	}
	d := net.Dialer{Timeout: p.opts.DialTimeout}
	nc, err := d.DialContext(ctx, "tcp", p.opts.Addr)
	if err != nil {
		if ctx.Err() != nil {
			return wrap(err)
		}
		return wrap(fmt.Errorf("dial: %w: %w", ErrNoAnswer, err))
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	c := &conn{Conn: nc, ctx: ctx, opts: &p.opts}
	if err := f(c); err != nil {
		return wrap(err)
	}
	return nil
}

// conn is one connection to the printer.
type conn struct {
	net.Conn
	ctx  context.Context
	opts *Opts
	buf  [64]byte
}

// deadline sets a deadline d from now, unless ctx is already done (after
// which context.AfterFunc keeps the deadline in the past).
func (c *conn) deadline(d time.Duration) error {
	if err := c.SetDeadline(time.Now().Add(d)); err != nil {
		return fmt.Errorf("%w: %w", ErrNoAnswer, err)
	}
	return c.ctx.Err()
}

func (c *conn) write(b []byte) error {
	if err := c.deadline(c.opts.WriteTimeout); err != nil {
		return err
	}
	if _, err := c.Write(b); err != nil {
		return c.ioErr(err)
	}
	return nil
}

func (c *conn) ioErr(err error) error {
	if ctxErr := c.ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	return fmt.Errorf("%w: %w", ErrNoAnswer, err)
}

// query sends DLE EOT n and returns the first status byte that comes back,
// skipping bytes that are not status replies.
func (c *conn) query(n byte) (byte, error) {
	if err := c.deadline(c.opts.StatusTimeout); err != nil {
		return 0, err
	}
	if _, err := c.Write([]byte{dle, eot, n}); err != nil {
		return 0, c.ioErr(err)
	}
	for range 256 {
		k, err := c.Read(c.buf[:1])
		if k == 1 && IsStatusByte(c.buf[0]) {
			return c.buf[0], nil
		}
		if err != nil {
			return 0, fmt.Errorf("DLE EOT %d: %w", n, c.ioErr(err))
		}
	}
	return 0, fmt.Errorf("DLE EOT %d: no status byte in 256 reads: %w", n, ErrNoAnswer)
}

// status asks DLE EOT 1, DLE EOT 2 when offline, and DLE EOT 4.
func (c *conn) status() (Status, error) {
	var raw [3]byte
	var err error
	if raw[0], err = c.query(StatusPrinter); err != nil {
		return Status{}, err
	}
	if raw[0]&bitOffline != 0 {
		if raw[1], err = c.query(StatusOffline); err != nil {
			return Status{}, err
		}
	}
	if raw[2], err = c.query(StatusPaper); err != nil {
		return Status{}, err
	}
	return DecodeStatus(raw[0], raw[1], raw[2]), nil
}

// DecodeStatus decodes replies to DLE EOT 1, 2 and 4 as Status does; pass 0
// for a reply that was not asked.
func DecodeStatus(printer, offline, paper byte) Status {
	return Status{
		Offline:      printer&bitOffline != 0,
		CoverOpen:    offline&bitCoverOpen != 0,
		PaperEndStop: offline&bitPaperEndStop != 0,
		Error:        offline&bitError != 0,
		PaperNearEnd: paper&bitsNearEnd != 0,
		PaperOut:     paper&bitsPaperEnd != 0,
		Raw:          [3]byte{printer, offline, paper},
	}
}
