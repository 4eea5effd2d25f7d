package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/daemon"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/postgres"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// openStore opens the configured store; migrate says whether to apply the
// embedded migrations on open; outbox routes the events to notify (the
// daemon's store only). Each host gets a connect time-out of a third of
// store.timeout, at most 1 s, unless the DSN sets its own.
func openStore(ctx context.Context, c config.Store, log *slog.Logger, migrate bool, outbox ...sqlstore.OutboxRoute) (*sqlstore.Store, error) {
	return openDriver(ctx, c.Driver, c.DSN, sqlstore.Opts{Logger: log, NoMigrate: !migrate, Outbox: outbox, MaxConns: c.Pool,
		ConnectTimeout: sqlstore.ConnectTimeoutFor(c.Timeout)})
}

// openDriver opens the store of driver (sqlite, postgres or mysql; also
// sqlite3, postgresql, pgx and mariadb, which --driver accepts) at dsn and,
// unless opts.NoMigrate, applies its migrations.
func openDriver(ctx context.Context, driver config.Driver, dsn string, opts sqlstore.Opts) (*sqlstore.Store, error) {
	switch strings.ToLower(string(driver)) {
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
	return nil, fmt.Errorf("store: open: %w: unknown driver %q (want sqlite, postgres or mysql)", queue.ErrBadRequest, driver)
}

// startWait is how long newDaemon waits for the first attempt to open the
// store before it serves anyway (a database that hangs at start): devices
// get ERROR 0x41 and /readyz says why until the store opens.
const startWait = 5 * time.Second

// follow sets how the engine follows other daemons on the store: none on
// SQLite (one daemon); a poll of store.poll / store.poll_idle on servers,
// woken by LISTEN/NOTIFY on PostgreSQL. It returns the notifier to close.
func follow(c config.Store, eo *queue.Opts) *postgres.Notifier {
	if c.Driver == config.DriverSQLite {
		return nil
	}
	eo.Follow, eo.PollInterval, eo.PollIdle = true, c.Poll, c.PollIdle
	if c.Driver != config.DriverPostgres {
		return nil
	}
	n := postgres.NewNotifier(c.DSN)
	eo.Notifier = n
	return n
}

// committers is how many committers the store gets: store.committers on
// a server, one on SQLite (one writer).
func committers(c config.Store) int {
	if c.Driver == config.DriverSQLite {
		return 1
	}
	return c.Committers
}

// awaitStore waits up to startWait for the first attempt to open the
// store, and returns its error when retrying cannot cure it.
func awaitStore(ctx context.Context, conn *daemon.Connector, ps *daemon.PendingStore, driver config.Driver, log *slog.Logger) error {
	wait := time.NewTimer(startWait)
	select {
	case <-conn.First():
	case <-wait.C:
	case <-ctx.Done():
	}
	wait.Stop()
	select {
	case <-conn.Done():
		if conn.Err() != nil {
			return fmt.Errorf("serve: %w", conn.Err())
		}
	default:
		_, why := ps.Store()
		log.Warn("serving while the store connects: devices get ERROR 0x41 until it opens", "driver", string(driver), "err", why)
	}
	return nil
}
