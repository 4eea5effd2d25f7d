package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// dbTarget resolves the store of an admin command: --db DSN (with the driver
// guessed from its form, or --driver), else the configuration.
type dbTarget struct {
	file, db, driver *string
}

func addDBFlags(cmd *cobra.Command) dbTarget {
	return dbTarget{
		file:   configFlags(cmd, "store"),
		db:     cmd.Flags().String("db", "", "database DSN: a SQLite file, postgres://..., or user@tcp(host:port)/db (overrides the config's store)"),
		driver: cmd.Flags().String("driver", "", "driver for --db: sqlite, postgres or mysql (default: guessed from the DSN)"),
	}
}

// guessDriver tells the driver from a DSN's form, and the DSN to use.
func guessDriver(dsn string) (config.Driver, string) {
	d, rest := store.Guess(dsn)
	return config.Driver(d), rest
}

// resolve returns the store settings and, when a config file was given,
// the configuration.
func (d dbTarget) resolve(cmd *cobra.Command) (config.Store, *config.Config, error) {
	if *d.db != "" && *d.file == "" {
		drv, dsn := config.Driver(*d.driver), *d.db
		if drv == "" {
			drv, dsn = guessDriver(dsn)
		}
		return config.Store{Driver: drv, DSN: dsn}, nil, nil
	}
	if *d.file == "" {
		return storeOnly(cmd)
	}
	cfg, err := loadConfig(cmd, *d.file)
	if err != nil {
		return config.Store{}, nil, err
	}
	st := cfg.Store
	if *d.db != "" {
		st.DSN = *d.db
		st.Driver = config.Driver(*d.driver)
		if st.Driver == "" {
			st.Driver, st.DSN = guessDriver(*d.db)
		}
	}
	return st, cfg, nil
}

// open resolves the store and opens it, migrated or not; what names it
// in errors ("migrate", "check").
func (d dbTarget) open(cmd *cobra.Command, what string, migrate bool) (*sqlstore.Store, config.Store, *config.Config, error) {
	st, cfg, err := d.resolve(cmd)
	if err != nil {
		return nil, st, nil, err
	}
	s, err := openStore(cmd.Context(), st, nil, migrate)
	if err != nil {
		return nil, st, nil, fmt.Errorf("%s %s database: %w", what, st.Driver, err)
	}
	return s, st, cfg, nil
}

func newMigrateCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the embedded schema migrations to the database",
		Args:  cobra.NoArgs,
	}
	target := addDBFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		s, st, _, err := target.open(cmd, "migrate", true)
		if err != nil {
			return err
		}
		defer s.Close()
		fmt.Fprintf(cmd.OutOrStdout(), "%s database is up to date\n", st.Driver)
		return nil
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
it found and exits 1 when an invariant is broken.`,
		Args: cobra.NoArgs,
	}
	target := addDBFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		s, st, cfg, err := target.open(cmd, "check", false)
		if err != nil {
			return err
		}
		defer s.Close()
		opts := sqlstore.CheckOpts{}
		if cfg != nil {
			defs := map[string]queue.Site{}
			for _, s := range sites(cfg) {
				defs[s.ID] = s
			}
			opts.DayOf = func(site string, at time.Time) string {
				if s, ok := defs[site]; ok {
					return s.Day(at)
				}
				return ""
			}
			opts.Today = func(site string) string { return opts.DayOf(site, time.Now()) }
			opts.HeldSince = func(site string) string {
				if s, ok := defs[site]; ok {
					return s.HeldSinceDay(time.Now())
				}
				return ""
			}
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
	}
	return cmd
}
