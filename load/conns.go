package load

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/sim"
)

// benchDevices returns the devices to spread connections over: the one
// the options name, else those of the first of roles that has any.
func benchDevices(e *sim.Env, roles ...wire.Role) ([]sim.Device, error) {
	if e.Named() {
		d, err := e.Device("", roles...)
		return []sim.Device{d}, err
	}
	for _, r := range roles {
		if ds := e.Devices(r); len(ds) > 0 {
			return ds, nil
		}
	}
	return nil, fmt.Errorf("bench: the configuration has no %s device", roles[0])
}

// ConnsOpts shape a connections benchmark.
type ConnsOpts struct {
	N        int           // connections to open
	Parallel int           // dials in flight at once
	PID      int           // process id of the daemon, to read its RSS; 0: none
	Hold     time.Duration // how long to hold the connections
	// Subscribe makes each connection subscribe to its site's events
	// (display devices), so the daemon holds idle subscribers.
	Subscribe bool
}

// Conns opens o.N authenticated connections (spread over the display
// devices, else the kiosks), holds them for o.Hold with heartbeats, and
// writes to out how long it took and what it cost this process and, with
// o.PID, the daemon. It fails when none connected or some dropped.
func Conns(ctx context.Context, e *sim.Env, o ConnsOpts, out io.Writer) error {
	devs, err := benchDevices(e, wire.RoleDisplay, wire.RoleKiosk)
	if err != nil {
		return err
	}
	if lim := raiseFileLimit(); lim != 0 && lim < uint64(o.N)+64 {
		fmt.Fprintf(out, "warning: this process may open %d files; %d connections need more (ulimit -n)\n", lim, o.N)
	}
	var rss0 uint64
	if o.PID > 0 {
		if rss0, err = procRSS(o.PID); err != nil {
			return err
		}
	}
	runtime.GC()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	g0 := runtime.NumGoroutine()

	start := time.Now()
	clients, failed, firstErr := dialAll(ctx, e, devs, o)
	took := time.Since(start)
	defer func() {
		for _, c := range clients {
			if c != nil {
				c.Close()
			}
		}
	}()
	held := o.N - failed
	fmt.Fprintf(out, "connections: %d of %d authenticated in %s (%.0f/s) over %d device ids\n",
		held, o.N, took.Round(time.Millisecond), float64(held)/took.Seconds(), len(devs))
	if firstErr != nil {
		fmt.Fprintf(out, "failures: %d, first: %v\n", failed, firstErr)
	}
	if held == 0 {
		return firstErr
	}
	select {
	case <-time.After(o.Hold):
	case <-ctx.Done():
	}
	alive := 0
	for _, c := range clients {
		if c == nil {
			continue
		}
		if s, _ := c.State(); s == client.StateConnected {
			alive++
		}
	}
	runtime.GC()
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	fmt.Fprintf(out, "still connected after %s: %d\n", o.Hold, alive)
	fmt.Fprintf(out, "client side: %d goroutines, heap in use +%s, from the OS +%s (%.1f KiB per connection)\n",
		runtime.NumGoroutine()-g0, mib(ms1.HeapInuse-min(ms1.HeapInuse, ms0.HeapInuse)), mib(ms1.Sys-min(ms1.Sys, ms0.Sys)),
		float64(ms1.Sys-min(ms1.Sys, ms0.Sys))/1024/float64(held))
	if err := daemonRSS(out, o.PID, rss0, held); err != nil {
		return err
	}
	if alive < held {
		return fmt.Errorf("bench: %d connections dropped while held", held-alive)
	}
	return nil
}

// dialAll opens o.N connections over devs, o.Parallel at a time, each
// subscribing with o.Subscribe; a failed one is nil in clients. It returns
// the count of failures and the first.
func dialAll(ctx context.Context, e *sim.Env, devs []sim.Device, o ConnsOpts) (clients []*client.Client, failed int, firstErr error) {
	n := o.N
	clients = make([]*client.Client, n)
	var (
		next, fails atomic.Int64
		errOnce     sync.Once
		wg          sync.WaitGroup
	)
	for w := 0; w < max(o.Parallel, 1); w++ {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				d := devs[i%len(devs)]
				c, err := client.Dial(ctx, e.AddrOf(d), e.ClientOpts(d))
				if err == nil && o.Subscribe {
					if _, err = c.Subscribe(ctx, client.Filter{}); err != nil {
						c.Close()
					}
				}
				if err != nil {
					fails.Add(1)
					errOnce.Do(func() { firstErr = e.Explain(err, d) })
					continue
				}
				clients[i] = c
			}
		})
	}
	wg.Wait()
	return clients, int(fails.Load()), firstErr
}

// dialN connects n clients spread over devs.
func dialN(ctx context.Context, e *sim.Env, devs []sim.Device, n int) ([]*client.Client, error) {
	clients := make([]*client.Client, 0, n)
	for i := 0; i < n; i++ {
		d := devs[i%len(devs)]
		c, err := e.DialNth(ctx, d, e.ClientOpts(d), i)
		if err != nil {
			return clients, err
		}
		clients = append(clients, c)
	}
	return clients, nil
}

func closeAll(clients []*client.Client) {
	for _, c := range clients {
		c.Close()
	}
}

// daemonRSS writes the growth of the daemon's RSS since rss0 (or how to
// see it, without pid).
func daemonRSS(out io.Writer, pid int, rss0 uint64, held int) error {
	if pid <= 0 {
		fmt.Fprintln(out, "daemon side: give --pid PID of `nowserving serve` to read its RSS from /proc/PID/status")
		return nil
	}
	rss1, err := procRSS(pid)
	if err != nil {
		return err
	}
	d := rss1 - min(rss1, rss0)
	fmt.Fprintf(out, "daemon pid %d: RSS %s -> %s (+%s, %.1f KiB per connection)\n",
		pid, mib(rss0), mib(rss1), mib(d), float64(d)/1024/float64(held))
	return nil
}
