package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/load"
	"github.com/nowserving/nowserving/sim"
)

// benchRun adds the sim connection flags to a bench subcommand and makes
// it run bench against the daemon they name, writing its report to the
// command's output.
func benchRun(cmd *cobra.Command, bench func(context.Context, *sim.Env, io.Writer) error) {
	f := &simFlags{}
	fl := cmd.Flags()
	f.connFlags(fl, "use only this device id", "its secret (with --device, without --config)")
	fl.DurationVar(&f.o.Timeout, "timeout", 10*time.Second, "time-out of a dial or a request attempt")
	f.tlsFlags(fl)
	f.o.Retries = 3
	cmd.RunE = f.runE(func(cmd *cobra.Command, e *sim.Env, _ []string) error {
		return bench(cmd.Context(), e, cmd.OutOrStdout())
	})
}

func newBenchConnsCmd() *cobra.Command {
	var o load.ConnsOpts
	cmd := &cobra.Command{
		Use:   "conns",
		Short: "Open N authenticated connections, hold them, and report memory",
		Long: `conns opens --n authenticated connections to the daemon (spread over the
display devices of the configuration, else kiosks), holds them for --hold with
heartbeats, and prints how long it took and what it cost this process. The
daemon's memory is not visible over the protocol: give its process id with
--pid and conns reads its VmRSS from /proc/PID/status before and after.`,
		Args: cobra.NoArgs,
	}
	benchRun(cmd, func(ctx context.Context, e *sim.Env, w io.Writer) error { return load.Conns(ctx, e, o, w) })
	fl := cmd.Flags()
	fl.IntVar(&o.N, "n", 1000, "connections to open")
	fl.IntVar(&o.Parallel, "parallel", 64, "dials in flight at once")
	fl.IntVar(&o.PID, "pid", 0, "process id of the daemon, to read its RSS")
	fl.DurationVar(&o.Hold, "hold", 5*time.Second, "how long to hold the connections")
	fl.BoolVar(&o.Subscribe, "subscribe", false, "make each connection subscribe to its site's events")
	return cmd
}

func newBenchIssueCmd() *cobra.Command {
	var o load.IssueOpts
	cmd := &cobra.Command{
		Use:   "issue",
		Short: "Take tickets from many kiosks at once; report throughput, latency percentiles, errors and daemon CPU",
		Long: `issue connects --kiosks kiosks (spread over the kiosk devices of the
configuration) and takes tickets for --duration: back to back, or with
--rate (e.g. 1000/s) open loop, sent at that rate whatever the answers, each
latency counted from the time the ticket was due (no coordinated omission).
It prints tickets per second, the p50/p90/p99 latency of TAKE_TICKET over
TCP (the daemon answers only after the commit), the errors by wire code,
and with --pid the daemon's CPU time per ticket from /proc/PID/stat; --json
prints the same as one JSON object. The daemon rate-limits each device id
(listen.rate_limit; 0 turns it off): with the limit on, use a configuration
with many kiosk devices, or the limit is what you measure. Pick a service
with no daily cap and no opening hours (by default the first such service).`,
		Args: cobra.NoArgs,
	}
	benchRun(cmd, func(ctx context.Context, e *sim.Env, w io.Writer) error { return load.Issue(ctx, e, o, w) })
	fl := cmd.Flags()
	fl.IntVar(&o.Kiosks, "kiosks", 64, "concurrent kiosks (connections)")
	fl.DurationVar(&o.Duration, "duration", 10*time.Second, "how long to take tickets")
	fl.StringVar(&o.Service, "service", "", "service code (default: the first with no cap and no hours)")
	fl.Var((*rateValue)(&o.Rate), "rate", "open loop: tickets per second in total (e.g. 1000/s); default: back to back")
	fl.IntVar(&o.PID, "pid", 0, "process id of the daemon, to read its CPU time per ticket")
	fl.BoolVar(&o.JSON, "json", false, "print the result as JSON")
	return cmd
}

func newBenchCallCmd() *cobra.Command {
	var o load.CallOpts
	cmd := &cobra.Command{
		Use:   "call",
		Short: "Measure a keypad's call-next (and keypad → LED frame) latency, idle and under kiosk load",
		Long: `call makes --calls call-next requests from a keypad (the first keypad device of
the configuration, or --device) on the idle daemon, then as many again while
--kiosks kiosks take tickets in the background (back to back, or at --rate
open loop), and prints the latency percentiles of both side by side. Each
call is followed by START; the next call finishes it. With --led PATH (a
tty: the far end of the pty pair the daemon's board for that counter is on,
e.g. made with socat), it also measures from CALL_NEXT sent to the first
bytes on that line carrying the called number (template and alpha boards
carry it in ASCII). The keypad's counter must serve --service.`,
		Args: cobra.NoArgs,
	}
	benchRun(cmd, func(ctx context.Context, e *sim.Env, w io.Writer) error { return load.Call(ctx, e, o, w) })
	fl := cmd.Flags()
	fl.IntVar(&o.Calls, "calls", 200, "call-next samples, idle and then under load")
	fl.DurationVar(&o.Gap, "gap", 20*time.Millisecond, "pause between two calls")
	fl.IntVar(&o.Kiosks, "kiosks", 200, "kiosks taking tickets while the loaded calls run")
	fl.Var((*rateValue)(&o.Rate), "rate", "background tickets per second in total (e.g. 200/s); default: back to back")
	fl.StringVar(&o.Service, "service", "", "the kiosks' service (default: the first with no cap and no hours)")
	fl.StringVar(&o.LED, "led", "", "tty carrying the LED frames of the keypad's counter")
	return cmd
}

// rateValue is a --rate flag: "1000/s", "120/m" or a bare number per
// second (load.ParseRate); unset is 0.
type rateValue float64

func (r *rateValue) String() string {
	if *r == 0 {
		return ""
	}
	return fmt.Sprintf("%g/s", float64(*r))
}

func (r *rateValue) Set(s string) error {
	v, err := load.ParseRate(s)
	*r = rateValue(v)
	return err
}

func (r *rateValue) Type() string { return "rate" }
