package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

func newMigrateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the embedded schema migrations to the database",
		Args:  cobra.NoArgs,
	}
	target := addDBFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return target.on(cmd, "migrate", true, func(_ *sqlstore.Store, st config.Store, _ *config.Config) error {
			fmt.Fprintf(cmd.OutOrStdout(), "%s database is up to date\n", st.Driver)
			return nil
		})
	}
	return cmd
}

func newCheckCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "check",
		Short: "Check the invariants of a live database; exit 1 on a violation",
		Long: `check verifies on a live database that no two tickets share a number of a
service day, no ticket is held by two counters and no counter holds two
tickets, event versions are gapless per site, every ticket has exactly one
ISSUED event, every event names a ticket that exists, no number was announced
twice on a service day (counting ISSUED events whose ticket is gone), no
ticket was called twice without a re-entry or transfer between, each
counter holds what its last event says, every ticket of a past service
day ended in a terminal state, and the booking invariants (a slot's booked
count is its active bookings, at most its capacity; no patient twice in a
slot; every checked-in booking has its ticket; booking events count as
events of no ticket, but a check-in's, which names its ticket). With --config, the sites' time zones and
rollover place each event on its service day; without, an event whose ticket
is gone is placed on the day of the ticket issued before it. It prints what
it found and exits 1 when an invariant is broken.

By default it checks the last --days service days of each site (today and
yesterday), so it costs what those days cost however long the history;
--all checks every day the database holds. Stopping it (Ctrl-C) cancels its
query on a PostgreSQL server too.`,
		Args: cobra.NoArgs,
	}
	target := addDBFlags(cmd)
	days := cmd.Flags().Int("days", defaultCheckDays, "check the last N service days of each site (today's included)")
	all := cmd.Flags().Bool("all", false, "check every day the database holds")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if *days < 1 {
			return fmt.Errorf("check: --days must be 1 or more, got %d", *days)
		}
		return target.onCancelling(cmd, "check", func(s *sqlstore.Store, st config.Store, cfg *config.Config) error {
			opts := checkOpts(cfg)
			if !*all {
				opts.Days = *days
			}
			rep, err := s.Check(cmd.Context(), opts)
			if err != nil {
				return fmt.Errorf("check %s database (a nowserving database? `nowserving migrate` creates the schema): %w", st.Driver, err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), strings.TrimRight(rep.String(), "\n"))
			if !rep.OK() {
				return exitError(1)
			}
			return nil
		})
	}
	return cmd
}

// defaultCheckDays is check's window: today and yesterday, whose tickets
// a counter may still hold.
const defaultCheckDays = 2

// checkOpts places events on the service days of cfg's sites; without a
// configuration (cfg nil) check guesses the days from the tickets.
func checkOpts(cfg *config.Config) sqlstore.CheckOpts {
	if cfg == nil {
		return sqlstore.CheckOpts{}
	}
	defs := map[string]queue.Site{}
	for _, s := range sites(cfg) {
		defs[s.ID] = s
	}
	day := func(site string, of func(queue.Site) string) string {
		if s, ok := defs[site]; ok {
			return of(s)
		}
		return ""
	}
	opts := sqlstore.CheckOpts{
		DayOf: func(site string, at time.Time) string {
			return day(site, func(s queue.Site) string { return s.Day(at) })
		},
		HeldSince: func(site string) string {
			return day(site, func(s queue.Site) string { return s.HeldSinceDay(time.Now()) })
		},
	}
	opts.Today = func(site string) string { return opts.DayOf(site, time.Now()) }
	return opts
}
