package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/load"
)

func newBenchCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "bench",
		Short: "Measure a running daemon: connections held, ticket throughput and latency",
	}
}

// benchFlags adds the sim connection flags to a bench subcommand.
func benchFlags(cmd *cobra.Command) *simFlags {
	f := &simFlags{}
	fl := cmd.Flags()
	f.connFlags(fl, "use only this device id", "its secret (with --device, without --config)")
	fl.DurationVar(&f.o.Timeout, "timeout", 10*time.Second, "time-out of a dial or a request attempt")
	f.tlsFlags(fl)
	f.o.Retries = 3
	return f
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
	f := benchFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		e, err := f.env(cmd)
		if err != nil {
			return err
		}
		return load.Conns(cmd.Context(), e, o, cmd.OutOrStdout())
	}
	fl := cmd.Flags()
	fl.IntVar(&o.N, "n", 1000, "connections to open")
	fl.IntVar(&o.Parallel, "parallel", 64, "dials in flight at once")
	fl.IntVar(&o.PID, "pid", 0, "process id of the daemon, to read its RSS")
	fl.DurationVar(&o.Hold, "hold", 5*time.Second, "how long to hold the connections")
	return cmd
}

func newBenchIssueCmd() *cobra.Command {
	var o load.IssueOpts
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
		return load.Issue(cmd.Context(), e, o, cmd.OutOrStdout())
	}
	fl := cmd.Flags()
	fl.IntVar(&o.Kiosks, "kiosks", 64, "concurrent kiosks (connections)")
	fl.DurationVar(&o.Duration, "duration", 10*time.Second, "how long to take tickets")
	fl.StringVar(&o.Service, "service", "", "service code (default: the first with no cap and no hours)")
	return cmd
}
