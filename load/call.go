package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/sim"
)

// CallOpts shape a call-next benchmark.
type CallOpts struct {
	Calls int           // call-next samples, idle and then under load
	Gap   time.Duration // pause between two calls
	// Kiosks take tickets in the background while the loaded calls run:
	// back to back (a flood), or at Rate per second in total (open loop).
	Kiosks  int
	Rate    float64
	Service string // the kiosks' service; "": the first with no cap and no hours
	// LED, when set, is a serial line (a tty, e.g. the far end of a pty
	// pair the daemon's board for the keypad's counter is on): each call's
	// latency from CALL_NEXT sent to the first bytes on it that carry the
	// called number (ASCII: template and alpha boards) is measured too.
	LED string
}

// Call measures a keypad's call-next: o.Calls calls on an idle daemon,
// then o.Calls more while o.Kiosks kiosks take tickets, each followed by
// START (the next call finishes it); it writes the latency percentiles of
// both side by side and, with o.LED, the keypad → LED frame latency. The
// keypad is the first keypad device of the configuration (or the one
// named); its counter must serve the kiosks' service.
func Call(ctx context.Context, e *sim.Env, o CallOpts, out io.Writer) error {
	kp, err := benchDevices(e, wire.RoleKeypad)
	if err != nil {
		return err
	}
	service := o.Service
	if service == "" {
		service = uncappedService(e)
	}
	if err := servesAt(e, kp[0], service); err != nil {
		return err
	}
	if o.Kiosks < 1 {
		// The calls need tickets, and only a kiosk may take one.
		return fmt.Errorf("bench call: --kiosks is %d: give at least 1 (the calls need tickets, and a keypad may not take them)", o.Kiosks)
	}
	kd, err := benchDevices(e, wire.RoleKiosk)
	if err != nil {
		return err
	}
	raiseFileLimit()
	keypad, err := e.Dial(ctx, kp[0], e.ClientOpts(kp[0]))
	if err != nil {
		return err
	}
	defer keypad.Close()
	kiosks, err := dialN(ctx, e, kd, o.Kiosks)
	defer closeAll(kiosks)
	if err != nil {
		return err
	}
	var led *ledLine
	if o.LED != "" {
		if led, err = openLED(o.LED); err != nil {
			return err
		}
		defer led.close()
	}
	c := &caller{e: e, kp: keypad, led: led, gap: o.Gap, service: service, kiosk: kiosks,
		out: out, device: kp[0], stuck: StuckAfter}
	fmt.Fprintf(out, "call: keypad %s, %d calls idle, then %d with %d kiosks taking tickets of %s %s\n",
		kp[0].ID, o.Calls, o.Calls, o.Kiosks, service, bgText(o.Rate))
	idle, err := c.run(ctx, o.Calls)
	if err != nil {
		return err
	}
	bctx, stop := context.WithCancel(ctx)
	bg := &recorder{errs: map[string]int{}}
	var wg sync.WaitGroup
	if len(kiosks) > 0 {
		wg.Go(func() {
			if o.Rate > 0 {
				openLoop(bctx, e, kiosks, service, o.Rate, 24*time.Hour, bg)
			} else {
				closedLoop(bctx, e, kiosks, service, 24*time.Hour, bg)
			}
		})
		time.Sleep(time.Second) // let the background reach its pace
	}
	t0 := time.Now()
	loaded, err := c.run(ctx, o.Calls)
	el := time.Since(t0)
	stop()
	wg.Wait()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "call-next idle:    %s\n", idle.call.text())
	fmt.Fprintf(out, "call-next loaded:  %s\n", loaded.call.text())
	if led != nil {
		fmt.Fprintf(out, "keypad→LED idle:   %s\n", idle.led.text())
		fmt.Fprintf(out, "keypad→LED loaded: %s\n", loaded.led.text())
	}
	fmt.Fprintf(out, "background: %d tickets in %.1fs (%.0f/s) while the loaded calls ran\n",
		len(bg.lat), el.Seconds(), float64(len(bg.lat))/el.Seconds())
	return nil
}

func bgText(rate float64) string {
	if rate > 0 {
		return fmt.Sprintf("at %.0f/s", rate)
	}
	return "back to back"
}

// samples are latencies and the samples that never came.
type samples struct {
	lat    []time.Duration
	missed int
}

func (s *samples) text() string {
	if len(s.lat) == 0 {
		return fmt.Sprintf("no samples (%d missed)", s.missed)
	}
	slices.Sort(s.lat)
	t := fmt.Sprintf("n %d  %s", len(s.lat), latencies(s.lat))
	if s.missed > 0 {
		t += fmt.Sprintf("  (%d missed)", s.missed)
	}
	return t
}

type callRun struct{ call, led samples }

// StuckAfter is how long a call benchmark waits for a call to go through
// at its counter (each try refused as none waiting or the counter busy,
// as when another keypad with the same id, a sim load, takes its tickets)
// before it gives up.
const StuckAfter = 30 * time.Second

// caller is the keypad of a call benchmark.
type caller struct {
	e       *sim.Env
	kp      *client.Client
	led     *ledLine
	gap     time.Duration
	service string
	kiosk   []*client.Client
	out     io.Writer
	device  sim.Device
	stuck   time.Duration
}

// servesAt refuses a benchmark whose keypad's counter does not serve
// service, when the configuration tells: its calls would never find the
// kiosks' tickets.
func servesAt(e *sim.Env, kp sim.Device, service string) error {
	if e.Config == nil || service == "" {
		return nil
	}
	st, ok := e.Config.Site(kp.Site)
	if !ok {
		return nil
	}
	for _, c := range st.Counters {
		if c.ID != kp.Counter {
			continue
		}
		var codes []string
		for _, x := range c.Services {
			if x.Service == service {
				return nil
			}
			codes = append(codes, x.Service)
		}
		return fmt.Errorf("bench: call: keypad %s is at counter %s, which does not serve %s (it serves %v): give --service one of those, or --device a keypad of a counter that serves %s",
			kp.ID, kp.Counter, service, codes, service)
	}
	return nil
}

// stalled reports a counter where no call has gone through since since:
// after a few refused tries it says once what it waits for; after c.stuck
// it gives up.
func (c *caller) stalled(since time.Time, tries int, last error) error {
	if tries == 5 && c.out != nil {
		fmt.Fprintf(c.out, "bench: waiting for a call to go through at counter %s (%v); giving up after %s. Is another %s (a sim load?) calling there?\n",
			c.device.Counter, last, c.stuck, c.device.ID)
	}
	if time.Since(since) < c.stuck {
		return nil
	}
	return fmt.Errorf("bench: call next at counter %s: no call went through in %s, %d tries refused (last: %v): another keypad %s (a sim load?) may be calling there; stop it or give --device another keypad",
		c.device.Counter, c.stuck, tries, last, c.device.ID)
}

// run makes n calls, each with a ticket waiting (taken by a kiosk first
// when none is) and followed by START.
func (c *caller) run(ctx context.Context, n int) (callRun, error) {
	var r callRun
	since, tries := time.Now(), 0
	for i := 0; i < n && ctx.Err() == nil; i++ {
		if c.led != nil {
			c.led.reset()
		}
		t0 := time.Now()
		tk, err := c.kp.CallNext(ctx, 0)
		d := time.Since(t0)
		if errors.Is(err, wire.ErrNoTicketWaiting) || errors.Is(err, wire.ErrInvalidTransition) {
			tries++
			if err := c.stalled(since, tries, err); err != nil {
				return r, err
			}
			if err := c.unstick(ctx, err); err != nil {
				return r, err
			}
			i--
			continue
		}
		if err != nil {
			return r, fmt.Errorf("bench: call next: %w", c.e.Explain(err, sim.Device{}))
		}
		since, tries = time.Now(), 0
		r.call.lat = append(r.call.lat, d)
		if c.led != nil {
			if at, ok := c.led.wait(tk.Number, 2*time.Second); ok {
				r.led.lat = append(r.led.lat, at.Sub(t0))
			} else {
				r.led.missed++
			}
		}
		if _, err := c.kp.Start(ctx, 0, ""); err != nil {
			return r, fmt.Errorf("bench: start %s: %w", tk.Number, c.e.Explain(err, sim.Device{}))
		}
		time.Sleep(c.gap)
	}
	return r, ctx.Err()
}

// unstick gets a call possible again: the counter's called ticket
// started (a call refused as an invalid transition: the counter still
// calls one), or a ticket to call.
func (c *caller) unstick(ctx context.Context, err error) error {
	if errors.Is(err, wire.ErrInvalidTransition) {
		if _, err := c.kp.Start(ctx, 0, ""); err != nil {
			return fmt.Errorf("bench: start the ticket the counter calls: %w", c.e.Explain(err, sim.Device{}))
		}
		return nil
	}
	k := c.kp
	if len(c.kiosk) > 0 {
		k = c.kiosk[0]
	}
	if _, err := k.TakeTicket(ctx, c.service, wire.ClassNormal, client.TicketOpts{}); err != nil {
		return fmt.Errorf("bench: take a ticket to call: %w", c.e.Explain(err, sim.Device{}))
	}
	return nil
}

// ledLine reads an LED line and remembers what arrived since the last
// reset, with the time of each read.
type ledLine struct {
	f       *os.File
	mu      sync.Mutex
	buf     []byte
	arrived []time.Time // arrival time of each byte of buf's reads, by end offset
	ends    []int
	changed chan struct{}
}

// openLED opens the LED line at path (a tty in raw mode, such as the end
// of a socat pty pair).
func openLED(path string) (*ledLine, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("bench: open LED line: %w", err)
	}
	return newLEDLine(f), nil
}

// newLEDLine reads f until it is closed.
func newLEDLine(f *os.File) *ledLine {
	l := &ledLine{f: f, changed: make(chan struct{})}
	go l.read()
	return l
}

func (l *ledLine) read() {
	b := make([]byte, 4096)
	for {
		n, err := l.f.Read(b)
		now := time.Now()
		if n > 0 {
			l.mu.Lock()
			l.buf = append(l.buf, b[:n]...)
			l.ends = append(l.ends, len(l.buf))
			l.arrived = append(l.arrived, now)
			close(l.changed)
			l.changed = make(chan struct{})
			l.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func (l *ledLine) reset() {
	l.mu.Lock()
	l.buf, l.ends, l.arrived = l.buf[:0], l.ends[:0], l.arrived[:0]
	l.mu.Unlock()
}

// wait returns the arrival time of the read that completed text on the
// line since the last reset, waiting at most d.
func (l *ledLine) wait(text string, d time.Duration) (time.Time, bool) {
	deadline := time.After(d)
	for {
		l.mu.Lock()
		if i := bytes.Index(l.buf, []byte(text)); i >= 0 {
			end := i + len(text)
			for k, e := range l.ends {
				if e >= end {
					at := l.arrived[k]
					l.mu.Unlock()
					return at, true
				}
			}
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			return time.Time{}, false
		}
	}
}

func (l *ledLine) close() { l.f.Close() }
