package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

func init() { commands = append(commands, newBenchCmd) }

// benchCommands are the subcommands of bench; files measuring other parts
// (stores, codecs) append theirs in an init function.
var benchCommands = []func() *cobra.Command{newBenchConnsCmd, newBenchIssueCmd}

func newBenchCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure a running daemon: connections held, ticket throughput and latency",
	}
	for _, add := range benchCommands {
		cmd.AddCommand(add())
	}
	return cmd
}

// benchFlags adds the sim connection flags to a bench subcommand.
func benchFlags(cmd *cobra.Command) *simFlags {
	f := &simFlags{}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "", "daemon protocol address (default: listen.protocol of --config, else "+defaultAddr+")")
	fl.StringVar(&f.config, "config", "", "YAML configuration to read devices from (default "+defaultSimConfig+" if present)")
	fl.StringVar(&f.device, "device", "", "use only this device id")
	fl.StringVar(&f.secret, "secret", "", "its secret (with --device, without --config)")
	fl.StringVar(&f.site, "site", "", "site code (default: the device's site)")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Second, "time-out of a dial or a request attempt")
	f.tlsFlags(fl)
	f.retries = 3
	return f
}

// benchDevices returns the devices of role to spread connections over.
func benchDevices(e *simEnv, roles ...wire.Role) ([]simDevice, error) {
	if e.f.device != "" {
		d, err := e.device("", roles...)
		return []simDevice{d}, err
	}
	for _, r := range roles {
		if ds := e.devices(r); len(ds) > 0 {
			return ds, nil
		}
	}
	return nil, fmt.Errorf("bench: the configuration has no %s device", roles[0])
}

// raiseFileLimit lifts the soft limit on open files to the hard limit and
// returns it.
func raiseFileLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	if r.Cur < r.Max {
		r.Cur = r.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r)
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r)
	}
	return r.Cur
}

// procRSS reads VmRSS of a process from /proc, in bytes.
func procRSS(pid int) (uint64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("bench: read RSS of pid %d: %w", pid, err)
	}
	defer f.Close()
	return parseRSS(f)
}

// parseRSS finds "VmRSS: N kB" in a /proc/PID/status text.
func parseRSS(r io.Reader) (uint64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			var kb uint64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err != nil {
				return 0, fmt.Errorf("bench: parse VmRSS %q: %w", rest, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, errors.New("bench: no VmRSS line")
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func newBenchConnsCmd() *cobra.Command {
	var (
		n, parallel int
		pid         int
		hold        time.Duration
	)
	cmd := &cobra.Command{
		Use:   "conns",
		Short: "Open N authenticated connections, hold them, and report memory",
		Long: `conns opens --n authenticated connections to the daemon (spread over the
display devices of the configuration, else kiosks), holds them for --hold with
heartbeats, and prints how long it took and what it cost this process. The
daemon's memory is not visible over the protocol: give its process id with
--pid and conns reads its VmRSS from /proc/PID/status before and after.`,
		Args: cobra.NoArgs,
		RunE: nil,
	}
	f := benchFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		e, err := f.env(cmd)
		if err != nil {
			return err
		}
		devs, err := benchDevices(e, wire.RoleDisplay, wire.RoleKiosk)
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if lim := raiseFileLimit(); lim != 0 && lim < uint64(n)+64 {
			fmt.Fprintf(out, "warning: this process may open %d files; %d connections need more (ulimit -n)\n", lim, n)
		}
		var rss0 uint64
		if pid > 0 {
			if rss0, err = procRSS(pid); err != nil {
				return err
			}
		}
		runtime.GC()
		var ms0 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		g0 := runtime.NumGoroutine()

		ctx := cmd.Context()
		clients := make([]*client.Client, n)
		var (
			next, failed atomic.Int64
			firstErr     error
			errOnce      sync.Once
			wg           sync.WaitGroup
		)
		start := time.Now()
		for w := 0; w < max(parallel, 1); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1) - 1)
					if i >= n || ctx.Err() != nil {
						return
					}
					d := devs[i%len(devs)]
					o := e.opts(d)
					c, err := client.Dial(ctx, e.addr, o)
					if err != nil {
						failed.Add(1)
						errOnce.Do(func() { firstErr = e.explain(err, d) })
						continue
					}
					clients[i] = c
				}
			}()
		}
		wg.Wait()
		took := time.Since(start)
		defer func() {
			for _, c := range clients {
				if c != nil {
					c.Close()
				}
			}
		}()
		held := n - int(failed.Load())
		fmt.Fprintf(out, "connections: %d of %d authenticated in %s (%.0f/s) over %d device ids\n",
			held, n, took.Round(time.Millisecond), float64(held)/took.Seconds(), len(devs))
		if firstErr != nil {
			fmt.Fprintf(out, "failures: %d, first: %v\n", failed.Load(), firstErr)
		}
		if held == 0 {
			return firstErr
		}
		select {
		case <-time.After(hold):
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
		fmt.Fprintf(out, "still connected after %s: %d\n", hold, alive)
		fmt.Fprintf(out, "client side: %d goroutines, heap in use +%s, from the OS +%s (%.1f KiB per connection)\n",
			runtime.NumGoroutine()-g0, mib(ms1.HeapInuse-min(ms1.HeapInuse, ms0.HeapInuse)), mib(ms1.Sys-min(ms1.Sys, ms0.Sys)),
			float64(ms1.Sys-min(ms1.Sys, ms0.Sys))/1024/float64(held))
		if pid > 0 {
			rss1, err := procRSS(pid)
			if err != nil {
				return err
			}
			d := rss1 - min(rss1, rss0)
			fmt.Fprintf(out, "daemon pid %d: RSS %s -> %s (+%s, %.1f KiB per connection)\n",
				pid, mib(rss0), mib(rss1), mib(d), float64(d)/1024/float64(held))
		} else {
			fmt.Fprintln(out, "daemon side: give --pid PID of `nowserving serve` to read its RSS from /proc/PID/status")
		}
		if alive < held {
			return fmt.Errorf("bench: %d connections dropped while held", held-alive)
		}
		return nil
	}
	fl := cmd.Flags()
	fl.IntVar(&n, "n", 1000, "connections to open")
	fl.IntVar(&parallel, "parallel", 64, "dials in flight at once")
	fl.IntVar(&pid, "pid", 0, "process id of the daemon, to read its RSS")
	fl.DurationVar(&hold, "hold", 5*time.Second, "how long to hold the connections")
	return cmd
}

// percentile returns the p-th percentile (0..100) of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted)-1) + 0.5)
	return sorted[min(i, len(sorted)-1)]
}

func newBenchIssueCmd() *cobra.Command {
	var (
		kiosks   int
		duration time.Duration
		service  string
	)
	cmd := &cobra.Command{
		Use:   "issue",
		Short: "Take tickets from many kiosks at once; report throughput and latency percentiles",
		Long: `issue connects --kiosks kiosks (spread over the kiosk devices of the
configuration), each taking tickets back to back for --duration, and prints
tickets per second and the p50/p90/p99 latency of TAKE_TICKET over TCP, from
send to answer (which the daemon gives only after the commit). The daemon
rate-limits each device id: use a configuration with many kiosk devices, or
the limit is what you measure. Pick a service with no daily cap and no
opening hours (by default the first such service).`,
		Args: cobra.NoArgs,
	}
	f := benchFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		e, err := f.env(cmd)
		if err != nil {
			return err
		}
		devs, err := benchDevices(e, wire.RoleKiosk, wire.RoleConsole)
		if err != nil {
			return err
		}
		if service == "" && e.cfg != nil {
			for _, st := range e.cfg.Sites {
				for _, sv := range st.Services {
					if sv.DailyCap == 0 && len(sv.Hours) == 0 && service == "" {
						service = sv.Code
					}
				}
			}
		}
		if service == "" {
			return errors.New("bench: issue: give --service")
		}
		out := cmd.OutOrStdout()
		raiseFileLimit()
		ctx := cmd.Context()
		clients := make([]*client.Client, 0, kiosks)
		defer func() {
			for _, c := range clients {
				c.Close()
			}
		}()
		for i := 0; i < kiosks; i++ {
			d := devs[i%len(devs)]
			c, err := e.dial(ctx, d, e.opts(d))
			if err != nil {
				return err
			}
			clients = append(clients, c)
		}
		fmt.Fprintf(out, "issue: %d kiosks over %d device ids, service %s, for %s\n", kiosks, len(devs), service, duration)
		if rl := clients[0].Welcome().RateLimit; rl > 0 {
			fmt.Fprintf(out, "the daemon allows %d requests/s per device: at most about %d tickets/s with %d device ids\n",
				rl, int(rl)*min(len(devs), kiosks), min(len(devs), kiosks))
		}
		rctx, cancel := context.WithTimeout(ctx, duration)
		defer cancel()
		var (
			mu       sync.Mutex
			lat      []time.Duration
			errs     atomic.Int64
			firstErr atomic.Value
			wg       sync.WaitGroup
		)
		start := time.Now()
		for _, c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mine []time.Duration
				for rctx.Err() == nil {
					t0 := time.Now()
					_, err := c.TakeTicket(rctx, service, wire.ClassNormal, client.TicketOpts{})
					if err != nil {
						if rctx.Err() != nil {
							break
						}
						errs.Add(1)
						firstErr.CompareAndSwap(nil, e.explain(err, simDevice{}).Error())
						if errors.Is(err, wire.ErrServiceFull) || errors.Is(err, wire.ErrServiceClosed) || errors.Is(err, wire.ErrUnknownService) {
							cancel()
						}
						continue
					}
					mine = append(mine, time.Since(t0))
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			}()
		}
		wg.Wait()
		el := time.Since(start)
		slices.Sort(lat)
		fmt.Fprintf(out, "tickets: %d in %s = %.0f/s, errors %d\n", len(lat), el.Round(time.Millisecond), float64(len(lat))/el.Seconds(), errs.Load())
		if len(lat) > 0 {
			fmt.Fprintf(out, "latency: p50 %s  p90 %s  p99 %s  max %s\n",
				percentile(lat, 50).Round(10*time.Microsecond), percentile(lat, 90).Round(10*time.Microsecond),
				percentile(lat, 99).Round(10*time.Microsecond), lat[len(lat)-1].Round(10*time.Microsecond))
		}
		var resent uint64
		for _, c := range clients {
			resent += c.Resent()
		}
		if resent > 0 {
			fmt.Fprintf(out, "requests sent again: %d (rate limited, lost or late answers; their wait is in the latency)\n", resent)
		}
		if v := firstErr.Load(); v != nil {
			fmt.Fprintf(out, "first error: %s\n", v)
			if len(lat) == 0 {
				return fmt.Errorf("bench: issue: %s", v)
			}
		}
		return nil
	}
	fl := cmd.Flags()
	fl.IntVar(&kiosks, "kiosks", 64, "concurrent kiosks (connections)")
	fl.DurationVar(&duration, "duration", 10*time.Second, "how long to take tickets")
	fl.StringVar(&service, "service", "", "service code (default: the first with no cap and no hours)")
	return cmd
}
