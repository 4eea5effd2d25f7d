// Package mysql is the MySQL-compatible store of nowserving (MariaDB 10.6+,
// MySQL 8), through github.com/go-sql-driver/mysql. Sessions run in READ
// COMMITTED; the waiting-ticket index follows the ORDER BY of call-next
// column for column, so FOR UPDATE SKIP LOCKED locks one row and not every
// row scanned; the day counter is
// INSERT ... ON DUPLICATE KEY UPDATE last = LAST_INSERT_ID(last + 1).
// Every time is a BIGINT of unix milliseconds, so the driver's time parsing
// is not used. Migrations run under a named lock (GET_LOCK).
package mysql

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Opts configures the store; see sqlstore.Opts. MaxConns caps the pool
// (default 20).
type Opts = sqlstore.Opts

// Store is the MySQL/MariaDB store.
type Store struct {
	*sqlstore.Store
}

var _ queue.Store = (*Store)(nil)

// LockWaitTimeout is the sessions' innodb_lock_wait_timeout in seconds:
// a transaction waiting longer for a row lock is aborted, and Update
// retries it whole.
const LockWaitTimeout = 10

// Dialect returns the MySQL dialect.
func Dialect() *sqlstore.Dialect {
	return &sqlstore.Dialect{
		Name:           "mysql",
		RowLocks:       true,
		SkipLocked:     true,
		Upsert:         sqlstore.OnDuplicateKey,
		SumCast:        "SIGNED",
		Snapshot:       sql.LevelRepeatableRead,
		Classify:       classify,
		Migrations:     sqlstore.MigrationsDir(migrations),
		LockMigrations: sqlstore.SessionLock("SELECT GET_LOCK("+migrationLock+", 120)", "SELECT RELEASE_LOCK("+migrationLock+")"),
		DropIndex:      func(name string) string { return "DROP INDEX " + name + " ON tickets" },
	}
}

// Open connects to the database named in dsn (the driver's DSN format,
// user:password@tcp(host:port)/dbname?params) and applies the migrations
// unless opts.NoMigrate. The store sets clientFoundRows (a compare-and-set
// that writes the same values still counts its row), interpolateParams
// (one round trip per statement), READ COMMITTED and the lock wait
// timeout.
//
// On a Galera node (wsrep_on is ON) it also sets wsrep_sync_wait=1 unless
// the DSN sets wsrep_sync_wait itself: every read first waits until the
// node has applied what the cluster committed before it. Writes need no
// wait (certification aborts a transaction that read stale rows it
// writes, and every batch writes its site's version row), but a refusal
// decided on a stale read is not certified: without the wait a daemon on
// one node could answer "ticket not found" for a ticket another node has
// just issued, or run again a request another node has just committed
// when a device resends it there.
func Open(ctx context.Context, dsn string, opts Opts) (*Store, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("mysql: open: %w", Dialect().Err(err))
	}
	if cfg.DBName == "" {
		return nil, fmt.Errorf("mysql: open: %w: the DSN names no database", queue.ErrBadRequest)
	}
	cfg.ClientFoundRows = true
	cfg.InterpolateParams = true
	cfg.ParseTime = false
	isolation, galera, err := probe(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql: connect: %w", Dialect().Err(err))
	}
	cfg.Params = withParam(cfg.Params, isolation, "'READ-COMMITTED'")
	if _, set := cfg.Params["wsrep_sync_wait"]; galera && !set {
		cfg.Params["wsrep_sync_wait"] = "1"
	}
	cfg.Params = withParam(cfg.Params, "innodb_lock_wait_timeout", fmt.Sprint(LockWaitTimeout))
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysql: open: %w", Dialect().Err(err))
	}
	db := sql.OpenDB(conn)
	s, err := sqlstore.Connect(ctx, Dialect(), db, opts)
	if err != nil {
		return nil, err
	}
	return &Store{s}, nil
}

func withParam(p map[string]string, k, v string) map[string]string {
	if p == nil {
		p = map[string]string{}
	}
	p[k] = v
	return p
}

// probe names the session variable of the isolation level
// (transaction_isolation on MySQL 8 and MariaDB 11.1+, tx_isolation
// before) and tells whether the server is a Galera node with wsrep on.
func probe(ctx context.Context, cfg *mysql.Config) (isolation string, galera bool, err error) {
	conn, err := mysql.NewConnector(cfg.Clone())
	if err != nil {
		return "", false, err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	var level string
	err = db.QueryRowContext(ctx, "SELECT @@transaction_isolation").Scan(&level)
	var me *mysql.MySQLError
	switch {
	case err == nil:
		isolation = "transaction_isolation"
	case errors.As(err, &me) && me.Number == 1193: // unknown system variable
		isolation = "tx_isolation"
	default:
		return "", false, err
	}
	// MySQL has no wsrep_on: no row. MariaDB without a cluster: OFF.
	var name, on string
	err = db.QueryRowContext(ctx, "SHOW VARIABLES LIKE 'wsrep_on'").Scan(&name, &on)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return isolation, false, nil
	case err != nil:
		return "", false, err
	}
	return isolation, on == "ON", nil
}

// migrationLock is a named lock for the database (GET_LOCK names are
// server-wide, and GET_LOCK answers 1 once it holds it, 0 after its 120 s),
// so daemons starting together migrate one after the other.
const migrationLock = "LEFT(CONCAT('nowserving migrate ', DATABASE()), 64)"

// classify maps server error numbers. It is the one place that decides
// which errors end a transaction on MySQL, MariaDB and Galera:
//
//   - aborted (the transaction is gone; only ROLLBACK may run, then the
//     whole transaction is retried): 1213 deadlock, which InnoDB answers
//     by rolling the whole transaction back, and Galera by a certification
//     conflict, also at COMMIT; 1205 lock wait timeout (only the statement
//     is rolled back unless innodb_rollback_on_timeout, but the request
//     cannot go on without it); 1317 query interrupted (KILL QUERY, a
//     Galera brute-force abort); 1180 and 1181 errors during COMMIT and
//     ROLLBACK; 1047 Galera's "WSREP has not yet prepared node for
//     application use" and 1614/1402 transaction branches rolled back;
//     3101 (MySQL group replication rolled the transaction back);
//   - unavailable: too many connections, shutdown, lost or killed
//     connections, a read-only server and a full disk;
//   - duplicate: 1062.
func classify(err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return codes.Of(me.Number)
	}
	if errors.Is(err, mysql.ErrInvalidConn) {
		return queue.ErrUnavailable
	}
	return nil
}

var codes = sqlstore.Codes[uint16]{
	Aborted:   []uint16{1213, 1205, 1317, 1180, 1181, 1047, 1614, 1402, 3101},
	Duplicate: []uint16{1062},
	Unavailable: []uint16{
		1040, 1053, 1077, 1152, 1158, 1159, 1160, 1161, 1927, 4031, // connections
		1290, 1836, // read-only (--read-only, a read-only Galera node)
		1021, 1114, // disk full, table full
	},
}
