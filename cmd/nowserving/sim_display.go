package main

import (
	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/sim"
)

func newSimDisplayCmd(f *simFlags) *cobra.Command {
	var (
		o    sim.DisplayOpts
		from uint64
	)
	cmd := &cobra.Command{
		Use:   "display",
		Short: "Print the site's events live, one line each, until interrupted",
		Long: `display subscribes to the site's events and prints one line per event, e.g.
"v12 CALLED A023 -> 5". By default it starts with the events after the
current version; --from V replays the events after version V first (the
daemon sends a snapshot instead when it no longer has them all), --snapshot
prints the state of the site first. It follows the daemon through
reconnections and resumes where it stopped.`,
		Args: cobra.NoArgs,
		RunE: f.runE(func(cmd *cobra.Command, e *sim.Env, _ []string) error {
			o := o
			if cmd.Flags().Changed("from") {
				o.From = &from
			}
			return e.Display(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		}),
	}
	fl := cmd.Flags()
	fl.Uint64Var(&from, "from", 0, "replay the events after this version first")
	fl.IntVar(&o.Count, "count", 0, "stop after this many events (0: never)")
	fl.StringSliceVar(&o.Counters, "counter", nil, "only events of these counters")
	fl.StringSliceVar(&o.Services, "service", nil, "only events of these services")
	fl.BoolVar(&o.Snapshot, "snapshot", false, "print the state of the site first")
	fl.BoolVar(&o.Wait, "wait", false, "wait for the daemon to come up instead of failing (a board that boots first)")
	return cmd
}
