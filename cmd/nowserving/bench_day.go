package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/load"
	"github.com/nowserving/nowserving/sim"
)

func newBenchDayCmd() *cobra.Command {
	o := load.DefaultDayOpts()
	cmd := &cobra.Command{
		Use:   "day",
		Short: "A compressed busy day: tickets issued, called, served, transferred and no-show at every counter, with consoles attached",
		Long: `day plays a busy day on the running daemon as fast as it goes: --kiosks
kiosks take --tickets tickets back to back over the services the calling
counters serve (no daily cap, no opening hours), and the keypads of up to
--counters counters call each ticket and serve it, mark it no-show
(--no-show) or transfer it to another service the counter serves
(--transfer; it is then called again). A console follows the site from the
start, and a second one joins when half the tickets are issued, as a console
started mid-day does: one SNAPSHOT with the day's last events, then the tail.
It prints a progress line every --every and a summary: the counts and rates,
and for each console how long it took to have the day's figures and last
events, how many events it read, how many times it lost its connection, and
whether its figures equal the daemon's at the end. With --metrics (the
daemon's /metrics URL) it also reports the sessions the daemon closed as slow
consumers during the day; with --display (its HTTP address) it follows the
hall display's stream all day, as an open TV page does, and checks at the
end that it shows the daemon's waiting counts and the log's last call.
With --checkpoints N the day pauses N times, evenly spaced: kiosks and
counters wait while the consoles and the display catch up and are compared
with the daemon, and a checkpoint line says whether they equal it.
testdata/busyday.yaml is the demo hospital with 10
counters and no caps, made for it.`,
		Args: cobra.NoArgs,
	}
	checkpoints := 0
	benchRun(cmd, func(ctx context.Context, e *sim.Env, w io.Writer) error {
		o.Checkpoints = load.EvenCheckpoints(o.Tickets, checkpoints)
		_, err := load.Day(ctx, e, o, w)
		return err
	})
	fl := cmd.Flags()
	fl.IntVar(&o.Tickets, "tickets", o.Tickets, "tickets to issue in all")
	fl.IntVar(&o.Kiosks, "kiosks", o.Kiosks, "kiosk connections taking them")
	fl.IntVar(&o.Keypads, "counters", o.Keypads, "counters calling (one keypad device each)")
	fl.Float64Var(&o.Transfer, "transfer", o.Transfer, "share of called tickets transferred")
	fl.Float64Var(&o.NoShow, "no-show", o.NoShow, "share of called tickets marked no-show")
	fl.DurationVar(&o.Every, "every", o.Every, "progress interval")
	fl.IntVar(&checkpoints, "checkpoints", 0, "pause the day this many times, evenly spaced, to compare the consoles and the display with the daemon")
	fl.StringVar(&o.Metrics, "metrics", "", "the daemon's /metrics URL, to count the slow consumers it dropped")
	fl.StringVar(&o.Hall, "display", "", "the daemon's HTTP address (http://host:port): follow the hall display's stream all day and check it at the end")
	return cmd
}
