// Package store opens the nowserving store a configuration names: SQLite
// (embedded, the default), PostgreSQL or MySQL/MariaDB. Each lives in its
// own package (queue/store/sqlite, postgres, mysql) over one database/sql
// implementation (queue/store/sqlstore); this package only chooses.
package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/postgres"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// Opts configures a store; see sqlstore.Opts.
type Opts = sqlstore.Opts

// Drivers are the driver names Open accepts.
var Drivers = []string{"sqlite", "postgres", "mysql"}

// Open opens the store of driver ("sqlite", "postgres" or "mysql"; also
// "sqlite3", "postgresql", "pgx", "mariadb") at dsn and, unless
// opts.NoMigrate, applies its migrations. The returned store also offers
// Migrate, Version and Check.
func Open(ctx context.Context, driver, dsn string, opts Opts) (*sqlstore.Store, error) {
	switch strings.ToLower(driver) {
	case "sqlite", "sqlite3":
		s, err := sqlite.Open(ctx, dsn, opts)
		if err != nil {
			return nil, err
		}
		return s.Store, nil
	case "postgres", "postgresql", "pgx":
		s, err := postgres.Open(ctx, dsn, opts)
		if err != nil {
			return nil, err
		}
		return s.Store, nil
	case "mysql", "mariadb":
		s, err := mysql.Open(ctx, dsn, opts)
		if err != nil {
			return nil, err
		}
		return s.Store, nil
	}
	return nil, fmt.Errorf("store: open: %w: unknown driver %q (want %s)", queue.ErrBadRequest, driver, strings.Join(Drivers, ", "))
}

// Guess names the driver of a DSN: postgres:// and postgresql:// URLs and
// key=value strings with host= are PostgreSQL; user@tcp(...)/db, tcp(...)/db and
// mysql:// are MySQL (the mysql:// prefix is removed); anything else is a
// SQLite file. It returns the driver and the DSN to pass to Open.
func Guess(dsn string) (driver, rest string) {
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return "postgres", dsn
	case strings.HasPrefix(dsn, "mysql://"):
		return "mysql", strings.TrimPrefix(dsn, "mysql://")
	case strings.HasPrefix(dsn, "sqlite://"):
		return "sqlite", strings.TrimPrefix(dsn, "sqlite://")
	case strings.Contains(dsn, "@tcp("), strings.Contains(dsn, "@unix("), strings.HasPrefix(dsn, "tcp("):
		return "mysql", dsn
	case strings.Contains(dsn, "host=") && (strings.Contains(dsn, " ") || strings.Contains(dsn, "dbname=")):
		return "postgres", dsn
	}
	return "sqlite", dsn
}
