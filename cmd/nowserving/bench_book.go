package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/load"
)

func newBenchBookCmd() *cobra.Command {
	o := load.BookOpts{URL: "http://127.0.0.1:7480", Site: "hospital", Resource: "dr-li", Slots: 20, Patients: 2000,
		Rate: 5000, Duration: 30 * time.Second, OtherService: "A", OtherRate: 20}
	sc := scaleCmd{ScaleOpts: load.ScaleOpts{Days: 14, Warmers: 16, ReadRates: []float64{1000, 2000, 4000, 6000, 8000}, Step: 10 * time.Second,
		BookRate: 1000, RushDoctors: 20, RushReads: 2000}, driver: "sqlite", dsn: "nowserving-scale.db", http: "127.0.0.1:7482", protocol: "127.0.0.1:7402",
		appointments: "127.0.0.1:7483"}
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
409 or 429 came back. The slot lists and bookings go to --appointments-url
when the daemon serves the appointments API on a listener of its own
(listen.appointments), the tickets to --url.

With --resources N it runs at scale instead (--days, 40 slots a resource a
day: --resources 2000 --days 14 is 1.12 M slots). --write-config FILE first
writes the daemon's configuration for it (site scale, nine in ten resources
doctors of one place, the rest rooms of ten, and site branch; the
appointments API on a listener of its own, --config-appointments) and exits;
start the daemon on it, then run again with --pid of the daemon: it reads
every list once and prints the daemon's RSS, climbs the read ladder
(--read-rates, each for --step) to the highest rate with p99 under 50 ms,
books distinct slots at --book-rate (bookings/s and daemon CPU per booking),
then runs the rush (--rate for --duration) on one slot each of
--rush-doctors doctors with --rush-reads lists read a second and --other-rate
tickets at --other-site, and fails when a slot is overbooked.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if sc.Resources > 0 {
				return runScale(cmd, &o, &sc)
			}
			return load.Book(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	scaleFlags(cmd, &sc)
	fl.StringVar(&o.URL, "url", o.URL, "the daemon's HTTP address")
	fl.StringVar(&o.AppointmentsURL, "appointments-url", "", "the appointments API's own listener (listen.appointments), for the slot lists and bookings (default --url)")
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

// scaleCmd is bench book's scale mode: load.ScaleOpts, and what
// --write-config puts in the daemon's configuration.
type scaleCmd struct {
	load.ScaleOpts
	config, driver, dsn, http, protocol, appointments string
}

func scaleFlags(cmd *cobra.Command, sc *scaleCmd) {
	fl := cmd.Flags()
	fl.IntVar(&sc.Resources, "resources", 0, "scale mode: resources of the site (40 slots each a day)")
	fl.IntVar(&sc.Days, "days", sc.Days, "scale mode: days of slots ahead")
	fl.IntVar(&sc.PID, "pid", 0, "scale mode: the daemon's process id, for its RSS and CPU time")
	fl.IntVar(&sc.Warmers, "warmers", sc.Warmers, "scale mode: lists read at once while warming")
	fl.Float64SliceVar(&sc.ReadRates, "read-rates", sc.ReadRates, "scale mode: the read ladder's rates, lists/s")
	fl.DurationVar(&sc.Step, "step", sc.Step, "scale mode: how long each ladder step and the distinct bookings run")
	fl.Float64Var(&sc.BookRate, "book-rate", sc.BookRate, "scale mode: distinct-slot bookings offered per second (0: none)")
	fl.IntVar(&sc.RushDoctors, "rush-doctors", sc.RushDoctors, "scale mode: doctors whose first free slot of the last day the rush books")
	fl.Float64Var(&sc.RushReads, "rush-reads", sc.RushReads, "scale mode: lists read per second during the rush")
	fl.StringVar(&sc.config, "write-config", "", "scale mode: write the daemon's configuration to this file and exit")
	fl.StringVar(&sc.driver, "config-store-driver", sc.driver, "scale mode: the store driver --write-config puts in")
	fl.StringVar(&sc.dsn, "config-store-dsn", sc.dsn, "scale mode: the store DSN --write-config puts in")
	fl.StringVar(&sc.http, "config-http", sc.http, "scale mode: the HTTP address --write-config puts in")
	fl.StringVar(&sc.protocol, "config-protocol", sc.protocol, "scale mode: the protocol address --write-config puts in")
	fl.StringVar(&sc.appointments, "config-appointments", sc.appointments,
		"scale mode: the appointments API's own listener --write-config puts in, and where the lists and bookings go (\"\": none, on --config-http)")
}

// runScale writes the scale configuration (--write-config) or runs the
// scale mode against the daemon; --site and --other-site default to the
// configuration's scale and branch.
func runScale(cmd *cobra.Command, o *load.BookOpts, sc *scaleCmd) error {
	if !cmd.Flags().Changed("site") {
		o.Site = "scale"
	}
	if !cmd.Flags().Changed("other-site") {
		o.OtherSite = "branch"
	}
	if !cmd.Flags().Changed("token") {
		o.Token = scaleToken
	}
	if !cmd.Flags().Changed("url") {
		o.URL = "http://" + sc.http
	}
	if !cmd.Flags().Changed("appointments-url") && sc.appointments != "" {
		o.AppointmentsURL = "http://" + sc.appointments
	}
	if sc.config != "" {
		f, err := os.Create(sc.config)
		if err != nil {
			return fmt.Errorf("bench: book: %w", err)
		}
		setup := load.ScaleSetup{Site: o.Site, Other: o.OtherSite, Resources: sc.Resources, Days: sc.Days, Driver: sc.driver, DSN: sc.dsn,
			HTTP: sc.http, Appointments: sc.appointments, Protocol: sc.protocol, Token: o.Token}
		if err := load.ScaleConfig(f, setup); err != nil {
			f.Close()
			return fmt.Errorf("bench: book: write %s: %w", sc.config, err)
		}
		return f.Close()
	}
	sc.Book = *o
	return load.Scale(cmd.Context(), sc.ScaleOpts, cmd.OutOrStdout())
}

// scaleToken is the API token of the scale configuration (published: a
// bench's).
const scaleToken = "scale-bench-token-0123"
