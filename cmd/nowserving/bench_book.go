package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/load"
)

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
