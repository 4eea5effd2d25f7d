package main

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/load"
	"github.com/nowserving/nowserving/sim"
)

func newBenchCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "bench",
		Short: "Measure a running daemon: connections held, ticket throughput and latency",
	}
}

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
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		e, err := f.env(cmd)
		if err != nil {
			return err
		}
		return bench(cmd.Context(), e, cmd.OutOrStdout())
	}
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
	benchRun(cmd, func(ctx context.Context, e *sim.Env, w io.Writer) error { return load.Issue(ctx, e, o, w) })
	fl := cmd.Flags()
	fl.IntVar(&o.Kiosks, "kiosks", 64, "concurrent kiosks (connections)")
	fl.DurationVar(&o.Duration, "duration", 10*time.Second, "how long to take tickets")
	fl.StringVar(&o.Service, "service", "", "service code (default: the first with no cap and no hours)")
	return cmd
}

func newBenchBookCmd() *cobra.Command {
	o := load.BookOpts{URL: "http://127.0.0.1:7480", Site: "hospital", Resource: "dr-li", Slots: 20, Patients: 2000,
		Rate: 5000, Duration: 30 * time.Second, OtherService: "A", OtherRate: 20}
	cmd := &cobra.Command{
		Use:   "book",
		Short: "The 07:00 rush: book slots over HTTP open loop at a rate; report statuses, latency and overbooking",
		Long: `book sends --rate booking requests per second for --duration, open loop
(each at its planned time, whether the last was answered or not), to
POST /api/v1/sites/SITE/appointments: a random one of --patients patients for
a random one of the first --slots unbooked slots of --resource (on --date, or
the first day that has that many). Latency is measured from each request's
planned send time. With --other-site it also takes --other-rate tickets per
second there. It fails when a slot is overbooked or an answer other than 201,
409 or 429 came back.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return load.Book(cmd.Context(), o, cmd.OutOrStdout()) },
	}
	fl := cmd.Flags()
	fl.StringVar(&o.URL, "url", o.URL, "the daemon's HTTP address")
	fl.StringVar(&o.Token, "token", "demo-his-token-change-me", "API bearer token")
	fl.StringVar(&o.Site, "site", o.Site, "site of the resource")
	fl.StringVar(&o.Resource, "resource", o.Resource, "resource to book")
	fl.StringVar(&o.Date, "date", "", "day of the slots, YYYY-MM-DD (default: the first with enough)")
	fl.IntVar(&o.Slots, "slots", o.Slots, "slots to book")
	fl.IntVar(&o.Patients, "patients", o.Patients, "distinct patients")
	fl.Float64Var(&o.Rate, "rate", o.Rate, "booking requests per second")
	fl.DurationVar(&o.Duration, "duration", o.Duration, "how long")
	fl.StringVar(&o.OtherSite, "other-site", "", "site to take tickets at meanwhile")
	fl.StringVar(&o.OtherService, "other-service", o.OtherService, "service of those tickets")
	fl.Float64Var(&o.OtherRate, "other-rate", o.OtherRate, "tickets per second there")
	fl.IntVar(&o.MaxInFlight, "max-in-flight", 4096, "requests outstanding at most (more are counted as dropped)")
	return cmd
}
