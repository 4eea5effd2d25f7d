package led

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nowserving/nowserving/internal/backoff"
	"github.com/nowserving/nowserving/internal/positive"
)

// PortOpts configures one serial line and the boards on it. Zero fields
// take the values of [DefaultPortOpts].
type PortOpts struct {
	// Name is the serial device ("/dev/ttyUSB0"), "tcp://host:port" for a
	// serial device server, or "file:PATH" to append frames to a file.
	Name string
	// Mode is the line mode of a serial device (Baud, DataBits, Parity,
	// StopBits); default 9600 8N1.
	Mode
	// DialTimeout bounds connecting to a device server.
	DialTimeout time.Duration

	// Driver encodes content for every board on this line.
	Driver Driver
	// Gap is the silence between two frames; default the driver's own gap
	// (Gapper) or 20 ms, whichever is larger.
	Gap time.Duration
	// ReplyTimeout bounds the wait for a board's reply (ReplyParser drivers).
	ReplyTimeout time.Duration
	// WriteTimeout bounds one frame write; a write that takes longer closes
	// the line, which is reopened with backoff.
	WriteTimeout time.Duration
	// MinBackoff and MaxBackoff bound the exponential retry delay of a
	// failing board or line.
	MinBackoff, MaxBackoff time.Duration
	// OfflineAfter is how many consecutive failures mark a board offline.
	OfflineAfter int
	// Refresh, when positive, resends each board's content this often, so a
	// board that lost power shows the current number again (and, for boards
	// that reply, so a dead board is noticed).
	Refresh time.Duration
	// CloseTimeout bounds blanking the boards when the port stops.
	CloseTimeout time.Duration
	// OnStatus, if set, is called from the port's goroutine whenever a board
	// goes online or offline. It must return quickly.
	OnStatus func(BoardStatus)
	// Logger receives failures; default discards.
	Logger *slog.Logger
	// Dial opens the line; default [Open]. Tests substitute a recorder.
	Dial func(PortOpts) (Link, error)
}

// DefaultPortOpts returns the defaults: 9600 8N1, 300 ms reply timeout, 2 s
// write timeout, backoff 250 ms to 30 s, offline after 3 failures, 2 s to
// blank the boards on close.
func DefaultPortOpts() PortOpts {
	return PortOpts{
		Mode:         Mode{Baud: 9600, DataBits: 8, Parity: "none", StopBits: 1},
		DialTimeout:  3 * time.Second,
		ReplyTimeout: 300 * time.Millisecond,
		WriteTimeout: 2 * time.Second,
		MinBackoff:   250 * time.Millisecond,
		MaxBackoff:   30 * time.Second,
		OfflineAfter: 3,
		CloseTimeout: 2 * time.Second,
	}
}

func (o PortOpts) withDefaults() PortOpts {
	d := DefaultPortOpts()
	o.Baud = cmp.Or(o.Baud, d.Baud)
	o.DataBits = cmp.Or(o.DataBits, d.DataBits)
	o.DialTimeout = positive.Or(o.DialTimeout, d.DialTimeout)
	o.ReplyTimeout = positive.Or(o.ReplyTimeout, d.ReplyTimeout)
	o.WriteTimeout = positive.Or(o.WriteTimeout, d.WriteTimeout)
	o.MinBackoff = positive.Or(o.MinBackoff, d.MinBackoff)
	o.MaxBackoff = positive.Or(o.MaxBackoff, d.MaxBackoff)
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = o.MinBackoff
	}
	o.OfflineAfter = positive.Or(o.OfflineAfter, d.OfflineAfter)
	o.CloseTimeout = positive.Or(o.CloseTimeout, d.CloseTimeout)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Dial == nil {
		o.Dial = Open
	}
	return o
}

// BoardStatus tells whether a board answers, for metrics and the console.
type BoardStatus struct {
	Port   string
	Addr   int
	Online bool
	Err    error // the last failure, nil when online
}

// Port owns one serial line and the boards on it. Show records what a board
// should display and returns at once; the goroutine started by Run writes
// it, latest content first, retrying failed boards with backoff.
type Port struct {
	opts  PortOpts
	gap   time.Duration
	reply ReplyParser // nil when boards do not answer
	init  Initializer // nil when boards need no setup

	life lifecycle

	mu     sync.Mutex
	boards map[int]*board
	runErr error

	wake chan struct{}

	framesSent, failures, replaced atomic.Uint64
}

// PortStats counts what a Port did, for metrics.
type PortStats struct {
	FramesSent uint64 // frames written (and, with replies, acknowledged)
	Failures   uint64 // failed attempts to update a board
	Replaced   uint64 // contents replaced by a newer Show before being written
}

// Stats returns the port's counters.
func (p *Port) Stats() PortStats {
	return PortStats{FramesSent: p.framesSent.Load(), Failures: p.failures.Load(), Replaced: p.replaced.Load()}
}

type board struct {
	want    Content
	gen     uint64 // bumped by every Show
	sent    uint64 // gen last shown successfully
	inited  bool
	online  bool
	fails   int
	next    time.Time // no retry before
	lastOK  time.Time
	lastErr error
}

// NewPort checks opts and returns a Port; call Run to start it.
func NewPort(opts PortOpts) (*Port, error) {
	if opts.Name == "" {
		return nil, errors.New("led: port name required")
	}
	if opts.Driver == nil {
		return nil, fmt.Errorf("led: port %s: driver required", opts.Name)
	}
	opts = opts.withDefaults()
	if err := checkMode(opts.Name, opts.Mode); err != nil {
		return nil, err
	}
	p := &Port{
		opts:   opts,
		gap:    opts.Gap,
		boards: map[int]*board{},
		wake:   make(chan struct{}, 1),
	}
	if g, ok := opts.Driver.(Gapper); ok && p.gap == 0 {
		p.gap = g.FrameGap(opts.Baud)
	}
	if p.gap == 0 {
		p.gap = 20 * time.Millisecond
	}
	p.reply = replyParser(opts.Driver)
	p.init, _ = opts.Driver.(Initializer)
	return p, nil
}

// Name returns the line's name.
func (p *Port) Name() string { return p.opts.Name }

// Show asks the board at addr to display c. It never blocks: the content is
// stored (replacing any content not yet written, so the latest wins) and the
// port's goroutine is woken.
func (p *Port) Show(addr int, c Content) {
	c.Lines = slices.Clone(c.Lines)
	p.mu.Lock()
	b := p.boards[addr]
	if b == nil {
		b = &board{}
		p.boards[addr] = b
	}
	if b.gen != 0 && b.want.Equal(c) {
		p.mu.Unlock()
		return
	}
	if b.gen != b.sent && b.gen != 0 {
		p.replaced.Add(1)
	}
	b.want = c
	b.gen++
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Online reports whether the board at addr took its last frame. A board
// not yet written to is not online.
func (p *Port) Online(addr int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := p.boards[addr]
	return b != nil && b.online
}

// Status returns the status of every board shown on this port, by address.
func (p *Port) Status() []BoardStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]BoardStatus, 0, len(p.boards))
	for _, a := range p.addrsLocked() {
		b := p.boards[a]
		out = append(out, BoardStatus{Port: p.opts.Name, Addr: a, Online: b.online, Err: b.lastErr})
	}
	return out
}

func (p *Port) addrsLocked() []int {
	addrs := make([]int, 0, len(p.boards))
	for a := range p.boards {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	return addrs
}

// Run owns the line until ctx is done or Close is called, then blanks every
// board (within CloseTimeout) and closes the line. It returns nil after a
// clean stop, or the error of blanking. Run may be called once.
func (p *Port) Run(ctx context.Context) error {
	ctx, ok := p.life.start(ctx)
	if !ok {
		return fmt.Errorf("led: port %s: already running", p.opts.Name)
	}
	defer p.life.finish()

	var (
		c         *conn
		stuck     chan struct{} // writer of a closed conn still blocked
		openNext  time.Time
		lineFails int
		last      = -1 << 31
	)
	closeConn := func() {
		if c != nil {
			_ = c.close()
			stuck = c.done
			c = nil
		}
	}
	for {
		if ctx.Err() != nil {
			err := p.blank(c)
			closeConn()
			p.mu.Lock()
			p.runErr = err
			p.mu.Unlock()
			return err
		}
		now := time.Now()
		if c == nil && !now.Before(openNext) {
			var err error
			c, err = p.open(stuck)
			if err != nil {
				lineFails++
				openNext = now.Add(p.backoff(lineFails))
				p.opts.Logger.Warn("led port open failed", "port", p.opts.Name, "err", err,
					"retry_in_s", p.backoff(lineFails).Seconds())
				p.failAll(err, openNext)
			} else {
				// A reopened line may lead to boards that lost power:
				// set them up again and resend what they should show.
				stuck = nil
				p.mu.Lock()
				for _, b := range p.boards {
					b.sent, b.inited = 0, false
				}
				p.mu.Unlock()
			}
		}
		addr, due := p.pick(last, now, c != nil)
		if c != nil && addr != nil {
			last = *addr
			if ioErr := p.send(ctx, c, *addr); ioErr != nil {
				closeConn()
				lineFails++
				openNext = time.Now().Add(p.backoff(lineFails))
			} else {
				lineFails = 0
			}
			continue
		}
		if c == nil && (due.IsZero() || openNext.After(due)) {
			due = openNext
		}
		p.sleep(ctx, due)
	}
}

// open dials the line, refusing while the writer of the previous line is
// still stuck in a write (so a jammed line holds at most one goroutine).
func (p *Port) open(stuck chan struct{}) (*conn, error) {
	if stuck != nil {
		select {
		case <-stuck:
		default:
			return nil, fmt.Errorf("led: open %s: previous write still blocked: %w", p.opts.Name, ErrTimeout)
		}
	}
	l, err := p.opts.Dial(p.opts)
	if err != nil {
		return nil, err
	}
	return newConn(l), nil
}

// pick chooses the next board to write: one whose content changed (or is
// due for refresh) and whose backoff has passed, round robin after last.
// Otherwise it returns the earliest time something becomes due.
func (p *Port) pick(last int, now time.Time, connected bool) (*int, time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var due time.Time
	var first, after *int
	for _, a := range p.addrsLocked() {
		b := p.boards[a]
		when := b.next
		switch {
		case b.sent != b.gen:
		case p.opts.Refresh > 0 && !b.lastOK.IsZero():
			if r := b.lastOK.Add(p.opts.Refresh); r.After(when) {
				when = r
			}
		default:
			continue
		}
		if when.After(now) || !connected {
			if due.IsZero() || when.Before(due) {
				due = when
			}
			continue
		}
		a := a
		if first == nil {
			first = &a
		}
		if after == nil && a > last {
			after = &a
		}
	}
	if after != nil {
		return after, time.Time{}
	}
	return first, due
}

func (p *Port) sleep(ctx context.Context, until time.Time) {
	var tc <-chan time.Time
	if !until.IsZero() {
		t := time.NewTimer(time.Until(until))
		defer t.Stop()
		tc = t.C
	}
	select {
	case <-ctx.Done():
	case <-p.wake:
	case <-tc:
	}
}

func (p *Port) backoff(fails int) time.Duration {
	return backoff.Exp(fails-1, p.opts.MinBackoff, p.opts.MaxBackoff)
}

// send writes the board's current content; it returns an error only when
// the line itself failed and must be reopened.
func (p *Port) send(ctx context.Context, c *conn, addr int) error {
	p.mu.Lock()
	b := p.boards[addr]
	want, gen, inited := b.want, b.gen, b.inited
	p.mu.Unlock()

	frames, err := p.opts.Driver.Encode(addr, want)
	if err == nil && !inited && p.init != nil {
		var pre [][]byte
		pre, err = p.init.Init(addr)
		frames = append(pre, frames...)
	}
	if err != nil {
		// Content this board cannot show: retrying will not help.
		p.opts.Logger.Error("led encode failed", "port", p.opts.Name, "addr", addr, "err", err)
		p.mu.Lock()
		b.sent, b.lastErr = gen, err
		p.mu.Unlock()
		return nil
	}
	var ioErr, failErr error
	buf := make([]byte, 256)
	for _, f := range frames {
		// Drain stale input; this also notices a line that hung up
		// (EOF from a device server, EIO from an unplugged adapter).
		if err := c.drain(buf); err != nil {
			ioErr = fmt.Errorf("led: read %s: %w", p.opts.Name, err)
			break
		}
		if err := c.write(f, p.opts.WriteTimeout); err != nil {
			ioErr = fmt.Errorf("led: write frame to %s: %w", p.opts.Name, err)
			break
		}
		if p.reply != nil {
			_, err := c.await(ctx, p.opts.ReplyTimeout, func(got []byte) (bool, error) { return p.reply.ParseReply(f, got) })
			if err != nil {
				failErr = fmt.Errorf("led: reply from %s board %d: %w", p.opts.Name, addr, err)
				if !errors.Is(err, ErrTimeout) && !errors.Is(err, ErrReply) && !errors.Is(err, ErrChecksum) && !isException(err) {
					ioErr = failErr
				}
				break
			}
		}
		p.framesSent.Add(1)
		p.sleep(ctx, time.Now().Add(p.gap))
	}
	if ctx.Err() != nil && ioErr == nil {
		return nil // stopping: the board is blanked next, not failed
	}
	if ioErr != nil && failErr == nil {
		failErr = ioErr
	}
	now := time.Now()
	p.mu.Lock()
	var st *BoardStatus
	if failErr == nil {
		b.sent, b.inited, b.fails, b.lastOK, b.lastErr, b.next = gen, true, 0, now, nil, time.Time{}
		if !b.online {
			b.online = true
			st = &BoardStatus{Port: p.opts.Name, Addr: addr, Online: true}
		}
	} else {
		st = p.failLocked(addr, b, failErr, now.Add(p.backoff(b.fails+1)))
	}
	p.mu.Unlock()
	if failErr != nil {
		p.failures.Add(1)
		p.opts.Logger.Warn("led board write failed", "port", p.opts.Name, "addr", addr, "err", failErr)
	}
	p.report(st)
	return ioErr
}

func isException(err error) bool {
	var e *ModbusException
	return errors.As(err, &e)
}

// failLocked records a failure; it returns a status change to report.
func (p *Port) failLocked(addr int, b *board, err error, next time.Time) *BoardStatus {
	b.fails++
	b.lastErr = err
	b.next = next
	b.sent = 0 // resend current content when it answers again
	if b.gen == 0 {
		b.gen = 1
	}
	if b.fails >= p.opts.OfflineAfter && (b.online || b.fails == p.opts.OfflineAfter) {
		b.online = false
		return &BoardStatus{Port: p.opts.Name, Addr: addr, Online: false, Err: err}
	}
	return nil
}

// failAll records a line failure against every board.
func (p *Port) failAll(err error, next time.Time) {
	p.mu.Lock()
	var sts []*BoardStatus
	for _, a := range p.addrsLocked() {
		if st := p.failLocked(a, p.boards[a], err, next); st != nil {
			sts = append(sts, st)
		}
	}
	p.mu.Unlock()
	for _, st := range sts {
		p.report(st)
	}
}

func (p *Port) report(st *BoardStatus) {
	if st != nil && p.opts.OnStatus != nil {
		p.opts.OnStatus(*st)
	}
}

// blank writes empty content to every board that is not known to be
// offline, within CloseTimeout.
func (p *Port) blank(c *conn) error {
	deadline := time.Now().Add(p.opts.CloseTimeout)
	p.mu.Lock()
	var addrs []int
	for _, a := range p.addrsLocked() {
		if p.boards[a].fails < p.opts.OfflineAfter {
			addrs = append(addrs, a)
		}
	}
	p.mu.Unlock()
	if len(addrs) == 0 {
		return nil
	}
	if c == nil {
		var err error
		if c, err = p.open(nil); err != nil {
			return fmt.Errorf("led: blank boards on %s: %w", p.opts.Name, err)
		}
		defer c.close()
	}
	var errs []error
	buf := make([]byte, 256)
	for _, a := range addrs {
		frames, err := p.opts.Driver.Encode(a, Content{})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range frames {
			left := time.Until(deadline)
			if left <= 0 {
				return fmt.Errorf("led: blank boards on %s: %w", p.opts.Name, ErrTimeout)
			}
			_ = c.drain(buf)
			if err := c.write(f, min(left, p.opts.WriteTimeout)); err != nil {
				return fmt.Errorf("led: blank boards on %s: %w", p.opts.Name, err)
			}
			if p.reply != nil {
				left = max(time.Until(deadline), 0)
				_, err := c.await(context.Background(), min(left, p.opts.ReplyTimeout), func(got []byte) (bool, error) { return p.reply.ParseReply(f, got) })
				if err != nil {
					errs = append(errs, fmt.Errorf("led: blank board %d on %s: %w", a, p.opts.Name, err))
				}
			}
			time.Sleep(min(p.gap, max(time.Until(deadline), 0)))
		}
	}
	return errors.Join(errs...)
}

// Close stops Run (blanking the boards, within CloseTimeout) and waits for
// it to return. Close on a port that was never run returns nil.
func (p *Port) Close() error {
	if !p.life.stop() {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.runErr
}
