package main

import (
	"fmt"
	"regexp"
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
// removed). A DSN that is none of these and does not look like a file
// either (a query string such as "&search_path=year" that lost its head, a
// URL of another scheme, a bare key=value) is refused rather than created as
// a SQLite file of that name.
func guessDriver(dsn string) (config.Driver, string, error) {
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return config.DriverPostgres, dsn, nil
	case strings.HasPrefix(dsn, "mysql://"):
		return config.DriverMySQL, strings.TrimPrefix(dsn, "mysql://"), nil
	case strings.HasPrefix(dsn, "sqlite://"):
		return config.DriverSQLite, strings.TrimPrefix(dsn, "sqlite://"), nil
	case strings.Contains(dsn, "@tcp("), strings.Contains(dsn, "@unix("), strings.HasPrefix(dsn, "tcp("):
		return config.DriverMySQL, dsn, nil
	case strings.Contains(dsn, "host=") && (strings.Contains(dsn, " ") || strings.Contains(dsn, "dbname=")):
		return config.DriverPostgres, dsn, nil
	case strings.HasPrefix(dsn, "&"), strings.HasPrefix(dsn, "?"), strings.Contains(dsn, "://"), bareKeyValue.MatchString(dsn):
		return "", "", fmt.Errorf("%q is not a database nowserving knows: give postgres://…, user@tcp(host:port)/db "+
			"or a SQLite file path, or name the driver with --driver", dsn)
	}
	return config.DriverSQLite, dsn, nil
}

// bareKeyValue is a DSN that starts as key=value, with no file path before
// it: the tail of a URL's query, not a SQLite file.
var bareKeyValue = regexp.MustCompile(`^[A-Za-z_]+=`)

// resolve returns the store settings and, when a config file was given,
// the configuration.
func (d dbTarget) resolve(cmd *cobra.Command) (config.Store, *config.Config, error) {
	if *d.db != "" && *d.file == "" {
		drv, dsn := config.Driver(*d.driver), *d.db
		if drv == "" {
			var err error
			if drv, dsn, err = guessDriver(dsn); err != nil {
				return config.Store{}, nil, fmt.Errorf("--db: %w", err)
			}
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
			if st.Driver, st.DSN, err = guessDriver(*d.db); err != nil {
				return config.Store{}, nil, fmt.Errorf("--db: %w", err)
			}
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
