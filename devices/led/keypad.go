package led

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nowserving/nowserving/internal/backoff"
	"github.com/nowserving/nowserving/internal/positive"
)

// Wired keypad protocol ("QSystem style").
//
// QSystem (the apertum.ru open-source queue system) drives wired RS-485
// counter keypads with a 3-character display; its wire format was not
// available when this was written, so nowserving defines its own in the same
// shape — short frames "SOH address … BEL" — and keypad firmware is written
// to this definition. All frames are bytes, the address is one binary byte
// 1–254, and the bus is half duplex with the daemon as the only master:
//
//	poll     master → keypad   01 AA 50 07            ('P')
//	display  master → keypad   01 AA 44 C1 C2 C3 07   ('D', three ASCII characters)
//	reply    keypad → master   01 AA KK 07
//
// A keypad answers every frame addressed to it, within the reply timeout,
// with one reply. KK is the key pressed since the previous reply, or '0'
// when none: '1' call next, '2' start serving, '3' redirect (transfer),
// '4' no-show. The keypad latches one press and reports it once; the master
// polls often enough (every few tens of milliseconds per keypad) that a
// person cannot press twice between polls. Frames of other lengths, other
// command bytes, or without the final 07 are invalid and skipped one byte at
// a time until the next 01. At 9600 8N1 a poll and its reply take ~8 ms.
const (
	kpSOH     = 0x01
	kpBEL     = 0x07
	kpPoll    = 'P'
	kpDisplay = 'D'
)

// Key is a wired keypad key.
type Key byte

// Keys of a wired keypad, as sent in the reply's KK byte.
const (
	KeyNone     Key = '0'
	KeyCallNext Key = '1'
	KeyStart    Key = '2'
	KeyRedirect Key = '3'
	KeyNoShow   Key = '4'
)

// keyNames are the keys' names from KeyNone on: the keys there are.
var keyNames = [...]string{"none", "call_next", "start", "redirect", "no_show"}

// String returns the key's name.
func (k Key) String() string {
	if validKey(k) {
		return keyNames[k-KeyNone]
	}
	return fmt.Sprintf("key(%#02x)", byte(k))
}

func validKey(k Key) bool { return k >= KeyNone && int(k-KeyNone) < len(keyNames) }

// KeyEvent is one key press on the keypad at Addr. Mapping addresses to
// counters is the caller's job.
type KeyEvent struct {
	Addr int
	Key  Key
}

// KeypadFrame is one decoded frame of the keypad bus: a master poll
// (Cmd 'P'), a master display write (Cmd 'D', Text), or a keypad reply
// (Cmd 0, Key).
type KeypadFrame struct {
	Addr int
	Cmd  byte
	Key  Key
	Text string
}

func checkKeypadAddr(addr int) error { return checkAddr("keypad", addr, 1, 254) }

// EncodeKeypadPoll returns the poll frame for the keypad at addr.
func EncodeKeypadPoll(addr int) ([]byte, error) {
	if err := checkKeypadAddr(addr); err != nil {
		return nil, err
	}
	return []byte{kpSOH, byte(addr), kpPoll, kpBEL}, nil
}

// EncodeKeypadDisplay returns the frame writing text to the keypad's
// 3-character display: padded with spaces on the right, cut to 3, and
// anything outside printable ASCII shown as '?'.
func EncodeKeypadDisplay(addr int, text string) ([]byte, error) {
	if err := checkKeypadAddr(addr); err != nil {
		return nil, err
	}
	d := []byte{' ', ' ', ' '}
	i := 0
	for _, r := range text {
		if i == 3 {
			break
		}
		if r < 0x20 || r > 0x7E {
			r = '?'
		}
		d[i] = byte(r)
		i++
	}
	return []byte{kpSOH, byte(addr), kpDisplay, d[0], d[1], d[2], kpBEL}, nil
}

// EncodeKeypadReply returns a keypad's reply frame (for keypad emulators and
// tests).
func EncodeKeypadReply(addr int, k Key) ([]byte, error) {
	if err := checkKeypadAddr(addr); err != nil {
		return nil, err
	}
	if !validKey(k) {
		return nil, fmt.Errorf("led: keypad key %#02x: %w", byte(k), ErrKeypadFrame)
	}
	return []byte{kpSOH, byte(addr), byte(k), kpBEL}, nil
}

// DecodeKeypadFrame decodes the first frame in buf. It returns the frame and
// the bytes it used; n == 0 with a nil error means more bytes are needed. On
// an error, n > 0 bytes should be skipped before trying again (resync).
func DecodeKeypadFrame(buf []byte) (f KeypadFrame, n int, err error) {
	if len(buf) == 0 {
		return f, 0, nil
	}
	if buf[0] != kpSOH {
		i := slices.Index(buf, kpSOH)
		if i < 0 {
			i = len(buf)
		}
		return f, i, fmt.Errorf("led: %d bytes before SOH: %w", i, ErrKeypadFrame)
	}
	if len(buf) < 3 {
		return f, 0, nil
	}
	size := 4
	switch c := buf[2]; {
	case c == kpPoll:
	case c == kpDisplay:
		size = 7
	case validKey(Key(c)):
	default:
		return f, 1, fmt.Errorf("led: keypad command %#02x: %w", c, ErrKeypadFrame)
	}
	if len(buf) < size {
		return f, 0, nil
	}
	if buf[size-1] != kpBEL {
		return f, 1, fmt.Errorf("led: keypad frame ends with %#02x: %w", buf[size-1], ErrKeypadFrame)
	}
	if buf[1] == 0 || buf[1] == 0xFF {
		return f, 1, fmt.Errorf("led: keypad address %d: %w", buf[1], ErrKeypadFrame)
	}
	f.Addr = int(buf[1])
	switch buf[2] {
	case kpPoll:
		f.Cmd = kpPoll
	case kpDisplay:
		for _, b := range buf[3:6] {
			if b < 0x20 || b > 0x7E {
				return KeypadFrame{}, 1, fmt.Errorf("led: keypad display byte %#02x: %w", b, ErrKeypadFrame)
			}
		}
		f.Cmd = kpDisplay
		f.Text = string(buf[3:6])
	default:
		f.Key = Key(buf[2])
	}
	return f, size, nil
}

// KeypadOpts configures a keypad bus. The embedded PortOpts give the line
// (Name, Baud…, Dial), ReplyTimeout, backoff, OfflineAfter, OnStatus and
// Logger; its Driver is not used.
type KeypadOpts struct {
	PortOpts
	// Addrs are the keypads on the bus.
	Addrs []int
	// PollInterval is the pause between polling rounds (default 20 ms).
	PollInterval time.Duration
	// OnKey, if set, receives key presses from the bus goroutine instead of
	// the Events channel; it must return quickly.
	OnKey func(KeyEvent)
}

// KeypadBus polls wired keypads on one RS-485 line and reports key presses.
type KeypadBus struct {
	opts    KeypadOpts
	events  chan KeyEvent
	dropped atomic.Int64

	life lifecycle

	mu   sync.Mutex
	pads map[int]*keypad
}

type keypad struct {
	display *string // pending display text
	online  bool
	fails   int
	next    time.Time
}

// NewKeypadBus checks opts and returns a bus; call Run to start polling.
func NewKeypadBus(opts KeypadOpts) (*KeypadBus, error) {
	if opts.Name == "" {
		return nil, errors.New("led: keypad bus name required")
	}
	if len(opts.Addrs) == 0 {
		return nil, fmt.Errorf("led: keypad bus %s: no addresses", opts.Name)
	}
	if err := checkMode(opts.Name, opts.Mode); err != nil {
		return nil, err
	}
	opts.PortOpts = opts.PortOpts.withDefaults()
	opts.PollInterval = positive.Or(opts.PollInterval, 20*time.Millisecond)
	b := &KeypadBus{opts: opts, events: make(chan KeyEvent, 64), pads: map[int]*keypad{}}
	for _, a := range opts.Addrs {
		if err := checkKeypadAddr(a); err != nil {
			return nil, err
		}
		if b.pads[a] != nil {
			return nil, fmt.Errorf("led: keypad bus %s: address %d twice", opts.Name, a)
		}
		b.pads[a] = &keypad{}
	}
	return b, nil
}

// Events delivers key presses when OnKey is not set. It is buffered; when
// the reader falls behind, presses are dropped and counted (Dropped) rather
// than stalling the bus.
func (b *KeypadBus) Events() <-chan KeyEvent { return b.events }

// Dropped returns how many key presses were dropped on a full Events channel.
func (b *KeypadBus) Dropped() int64 { return b.dropped.Load() }

// Display asks the keypad at addr to show text (3 characters) on its next
// turn. It never blocks; a newer text replaces one not yet sent.
func (b *KeypadBus) Display(addr int, text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if k := b.pads[addr]; k != nil {
		k.display = &text
	}
}

// Online reports whether the keypad at addr answered its last poll.
func (b *KeypadBus) Online(addr int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.pads[addr]
	return k != nil && k.online
}

// Run polls the keypads until ctx is done or Close is called.
func (b *KeypadBus) Run(ctx context.Context) error {
	ctx, ok := b.life.start(ctx)
	if !ok {
		return fmt.Errorf("led: keypad bus %s: already running", b.opts.Name)
	}
	defer b.life.finish()

	var line busLine
	defer func() {
		if line.c != nil {
			line.c.close()
		}
	}()
	addrs := slices.Sorted(func(yield func(int) bool) {
		for a := range b.pads {
			if !yield(a) {
				return
			}
		}
	})
	o := b.opts.PortOpts
	for ctx.Err() == nil {
		if line.c == nil {
			if err := line.open(o); err != nil {
				o.Logger.Warn("keypad bus open failed", "port", o.Name, "err", err)
				for _, a := range addrs {
					b.fail(a, err)
				}
				backoff.Sleep(ctx, backoff.Exp(line.fails-1, o.MinBackoff, o.MaxBackoff))
				continue
			}
		}
		if err := b.round(ctx, &line, addrs); err != nil {
			line.drop()
			backoff.Sleep(ctx, backoff.Exp(line.fails-1, o.MinBackoff, o.MaxBackoff))
			continue
		}
		backoff.Sleep(ctx, b.opts.PollInterval)
	}
	return nil
}

// busLine is the bus's serial line: the open connection, the one dropped
// while a write was still blocked in it, and the failures in a row.
type busLine struct {
	c     *conn
	stuck chan struct{}
	fails int
}

// open dials the line unless the last connection's write is still stuck.
func (l *busLine) open(o PortOpts) error {
	if l.stuck != nil {
		select {
		case <-l.stuck:
			l.stuck = nil
		default:
			l.fails++
			return fmt.Errorf("led: open %s: previous write still blocked: %w", o.Name, ErrTimeout)
		}
	}
	link, err := o.Dial(o)
	if err != nil {
		l.fails++
		return err
	}
	l.c = newConn(link)
	return nil
}

// drop closes a line that failed.
func (l *busLine) drop() {
	l.c.close()
	l.stuck = l.c.done
	l.c = nil
	l.fails++
}

// round polls every keypad that is due once; it returns an error only when
// the line failed, and a good exchange clears the line's failures.
func (b *KeypadBus) round(ctx context.Context, line *busLine, addrs []int) error {
	now := time.Now()
	for _, a := range addrs {
		if ctx.Err() != nil {
			return nil
		}
		b.mu.Lock()
		k := b.pads[a]
		skip := k.next.After(now)
		text := k.display
		b.mu.Unlock()
		if skip {
			continue
		}
		if err := b.exchange(ctx, line.c, a, text); err != nil {
			return err
		}
		line.fails = 0
	}
	return nil
}

// exchange sends one poll or display frame to addr and handles the reply;
// it returns an error only when the line failed.
func (b *KeypadBus) exchange(ctx context.Context, c *conn, addr int, text *string) error {
	var frame []byte
	if text != nil {
		frame, _ = EncodeKeypadDisplay(addr, *text)
	} else {
		frame, _ = EncodeKeypadPoll(addr)
	}
	buf := make([]byte, 64)
	if err := c.drain(buf); err != nil {
		return err
	}
	if err := c.write(frame, b.opts.WriteTimeout); err != nil {
		b.fail(addr, err)
		return fmt.Errorf("led: write keypad frame to %s: %w", b.opts.Name, err)
	}
	var reply KeypadFrame
	_, err := c.await(ctx, b.opts.ReplyTimeout, func(got []byte) (bool, error) {
		for len(got) > 0 {
			f, n, err := DecodeKeypadFrame(got)
			if n == 0 && err == nil {
				return false, nil
			}
			got = got[n:]
			if err != nil || f.Cmd != 0 {
				continue // noise, or our own frame echoed by the adapter
			}
			if f.Addr != addr {
				return true, fmt.Errorf("led: keypad reply from %d to %d: %w", f.Addr, addr, ErrReply)
			}
			reply = f
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		b.fail(addr, err)
		if errors.Is(err, ErrTimeout) || errors.Is(err, ErrReply) {
			return nil
		}
		return err
	}
	b.mu.Lock()
	k := b.pads[addr]
	if text != nil && k.display == text {
		k.display = nil
	}
	k.fails, k.next = 0, time.Time{}
	changed := !k.online
	k.online = true
	b.mu.Unlock()
	if changed && b.opts.OnStatus != nil {
		b.opts.OnStatus(BoardStatus{Port: b.opts.Name, Addr: addr, Online: true})
	}
	if reply.Key != KeyNone {
		ev := KeyEvent{Addr: addr, Key: reply.Key}
		if b.opts.OnKey != nil {
			b.opts.OnKey(ev)
		} else {
			select {
			case b.events <- ev:
			default:
				b.dropped.Add(1)
				b.opts.Logger.Warn("keypad event dropped", "port", b.opts.Name, "addr", addr, "key", reply.Key.String())
			}
		}
	}
	return nil
}

func (b *KeypadBus) fail(addr int, err error) {
	b.mu.Lock()
	k := b.pads[addr]
	k.fails++
	k.next = time.Now().Add(b.backoff(k.fails))
	changed := k.online && k.fails >= b.opts.OfflineAfter || !k.online && k.fails == b.opts.OfflineAfter
	if k.fails >= b.opts.OfflineAfter {
		k.online = false
	}
	b.mu.Unlock()
	if changed && b.opts.OnStatus != nil {
		b.opts.OnStatus(BoardStatus{Port: b.opts.Name, Addr: addr, Online: false, Err: err})
	}
}

// backoff: the first failures retry on the next round; after that the
// keypad is polled less often, up to MaxBackoff.
func (b *KeypadBus) backoff(fails int) time.Duration {
	if fails < b.opts.OfflineAfter {
		return 0
	}
	return backoff.Exp(fails-b.opts.OfflineAfter, b.opts.MinBackoff, b.opts.MaxBackoff)
}

// Close stops Run and waits for it.
func (b *KeypadBus) Close() error {
	b.life.stop()
	return nil
}
