package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/nowserving/nowserving/devices"
	"github.com/nowserving/nowserving/queue"
)

// Devices is the daemon part driving the hall's hardware through a device
// dispatcher that a configuration reload can replace while the daemon
// runs: Swap stops the running dispatcher (its voice zones finish what
// they queued, its boards are blanked and its lines closed) and starts the
// next, which shows every counter's current ticket from a snapshot. The
// protocol server, the metrics and the console reach the hardware through
// its methods, so they always use the current dispatcher.
type Devices struct {
	log *slog.Logger

	mu      sync.Mutex
	cur     *devices.Dispatcher
	ctx     context.Context // Run's; nil before Run
	running sync.WaitGroup
	stopped bool
	stop    chan struct{}
	failed  chan error
}

// NewDevices returns the part running d first.
func NewDevices(d *devices.Dispatcher, log *slog.Logger) *Devices {
	return &Devices{log: log, cur: d, stop: make(chan struct{}), failed: make(chan error, 1)}
}

// Name names the part.
func (x *Devices) Name() string { return "devices" }

// Current is the dispatcher running now.
func (x *Devices) Current() *devices.Dispatcher {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.cur
}

// Run runs the current dispatcher, and each one Swap starts, until
// Shutdown or ctx ends. A dispatcher that fails (a voice zone that cannot
// run) fails the part.
func (x *Devices) Run(ctx context.Context) error {
	x.mu.Lock()
	x.ctx = ctx
	if !x.stopped {
		x.start(x.cur)
	}
	x.mu.Unlock()
	var err error
	select {
	case <-x.stop:
	case <-ctx.Done():
	case err = <-x.failed:
	}
	x.running.Wait()
	return err
}

// start runs d; x.mu is held.
func (x *Devices) start(d *devices.Dispatcher) {
	x.running.Go(func() {
		if err := d.Run(x.ctx); err != nil && !errors.Is(err, context.Canceled) {
			select {
			case x.failed <- err:
			default:
			}
		}
	})
}

// Swap replaces the running dispatcher by next: the old one is shut down
// within ctx first (it holds the serial lines the new one opens), then
// next runs. Before Run, next simply replaces the first dispatcher; after
// Shutdown, next is not started and Swap returns an error.
func (x *Devices) Swap(ctx context.Context, next *devices.Dispatcher) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.stopped {
		return errors.New("daemon: swap devices: shut down")
	}
	old := x.cur
	x.cur = next
	if x.ctx == nil {
		return nil
	}
	err := old.Shutdown(ctx)
	if err != nil {
		x.log.Warn("devices: old dispatcher did not stop in time", "err", err)
	}
	x.start(next)
	if err != nil {
		return fmt.Errorf("daemon: swap devices: %w", err)
	}
	return nil
}

// Shutdown stops the current dispatcher within ctx.
func (x *Devices) Shutdown(ctx context.Context) error {
	x.mu.Lock()
	cur := x.cur
	if !x.stopped {
		x.stopped = true
		close(x.stop)
	}
	x.mu.Unlock()
	return cur.Shutdown(ctx)
}

// Status is the current dispatcher's device status.
func (x *Devices) Status() devices.Status { return x.Current().Status() }

// RenderTicket renders a ticket with the current dispatcher's layouts.
func (x *Devices) RenderTicket(site string, t queue.Ticket, pos queue.Position, lang string) ([]byte, error) {
	return x.Current().RenderTicket(site, t, pos, lang)
}

// Reprint reprints a ticket on the current dispatcher's printers.
func (x *Devices) Reprint(ctx context.Context, site, number, printerID string) error {
	return x.Current().Reprint(ctx, site, number, printerID)
}

// PrintTicket prints a ticket just issued to device's network printer,
// when it has one.
func (x *Devices) PrintTicket(ctx context.Context, device string, t queue.Ticket, pos queue.Position) error {
	d := x.Current()
	if !d.HasPrinter(device) {
		return nil
	}
	return d.PrintTicket(ctx, device, t, pos)
}
