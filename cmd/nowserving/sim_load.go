package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/load"
	"github.com/nowserving/nowserving/protocol/client"
)

func newSimLoadCmd(f *simFlags) *cobra.Command {
	var (
		o              load.Opts
		rate, services string
	)
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Make a demo site busy: kiosks take tickets, keypads call, start and finish them",
		Long: `load plays many kiosks and keypads at once to make a site look busy (for the
console demo): kiosks take tickets of random services at --rate in total,
keypads call the next ticket, now and then mark a no-show, otherwise start
and finish after about --service-time. It prints progress every --every and
a summary at the end (after --duration, or Ctrl-C).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := f.env(cmd)
			if err != nil {
				return err
			}
			o := o
			if o.Rate, err = load.ParseRate(rate); err != nil {
				return err
			}
			o.Services = client.SplitList(services)
			return load.Run(cmd.Context(), e, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&o.Kiosks, "kiosks", 20, "kiosks taking tickets (connections; they share the configured kiosk devices)")
	fl.IntVar(&o.Keypads, "keypads", 5, "keypads calling (at most one per configured keypad device)")
	fl.StringVar(&rate, "rate", "5/s", "tickets per second in total, e.g. 5/s or 120/m")
	fl.DurationVar(&o.Duration, "duration", 60*time.Second, "how long to run (0: until Ctrl-C)")
	fl.DurationVar(&o.Every, "every", 5*time.Second, "progress interval")
	fl.StringVar(&services, "services", "", "comma-separated service codes (default: every service of the site)")
	fl.DurationVar(&o.ServiceTime, "service-time", 3*time.Second, "average time from start to done at a counter")
	fl.DurationVar(&o.CallGap, "call-gap", time.Second, "average pause of a keypad between calling and starting")
	fl.Float64Var(&o.NoShow, "noshow", 0.1, "share of called tickets marked no-show")
	return cmd
}
