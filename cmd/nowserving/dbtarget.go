package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/config"
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

// guessDriver tells the driver from a DSN's form, and the DSN to use:
// postgres:// and postgresql:// URLs and key=value strings with host= are
// PostgreSQL; user@tcp(...)/db, tcp(...)/db and mysql:// are MySQL (the
// mysql:// prefix is removed); anything else is a SQLite file (sqlite://
// removed).
func guessDriver(dsn string) (config.Driver, string) {
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return config.DriverPostgres, dsn
	case strings.HasPrefix(dsn, "mysql://"):
		return config.DriverMySQL, strings.TrimPrefix(dsn, "mysql://")
	case strings.HasPrefix(dsn, "sqlite://"):
		return config.DriverSQLite, strings.TrimPrefix(dsn, "sqlite://")
	case strings.Contains(dsn, "@tcp("), strings.Contains(dsn, "@unix("), strings.HasPrefix(dsn, "tcp("):
		return config.DriverMySQL, dsn
	case strings.Contains(dsn, "host=") && (strings.Contains(dsn, " ") || strings.Contains(dsn, "dbname=")):
		return config.DriverPostgres, dsn
	}
	return config.DriverSQLite, dsn
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

// on resolves the store, opens it, migrated or not, and runs f on it,
// closing it after; what names the command in errors ("migrate", "check").
func (d dbTarget) on(cmd *cobra.Command, what string, migrate bool, f func(*sqlstore.Store, config.Store, *config.Config) error) error {
	st, cfg, err := d.resolve(cmd)
	if err != nil {
		return err
	}
	return onResolved(cmd, what, migrate, st, cfg, f)
}

// onResolved is on for a command that looked at the resolved settings
// before opening the store (user add checks its counters first).
func onResolved(cmd *cobra.Command, what string, migrate bool, st config.Store, cfg *config.Config, f func(*sqlstore.Store, config.Store, *config.Config) error) error {
	s, err := openStore(cmd.Context(), st, nil, migrate)
	if err != nil {
		return fmt.Errorf("%s %s database: %w", what, st.Driver, err)
	}
	defer s.Close()
	return f(s, st, cfg)
}

// onCancelling is on for a long read a person may stop: the store cancels
// a statement on the server when the command's context ends.
func (d dbTarget) onCancelling(cmd *cobra.Command, what string, f func(*sqlstore.Store, config.Store, *config.Config) error) error {
	st, cfg, err := d.resolve(cmd)
	if err != nil {
		return err
	}
	s, err := openDriver(cmd.Context(), st.Driver, st.DSN, sqlstore.Opts{NoMigrate: true, MaxConns: st.Pool,
		ConnectTimeout: sqlstore.ConnectTimeoutFor(st.Timeout), CancelOnServer: true})
	if err != nil {
		return fmt.Errorf("%s %s database: %w", what, st.Driver, err)
	}
	defer s.Close()
	return f(s, st, cfg)
}
