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
	"cmp"
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"time"

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
		Migrations:     sqlstore.WithPortable(sqlstore.MigrationsDir(migrations)),
		Words:          map[string]string{"id": "BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY", "int": "INT", "int64": "BIGINT", "bytes": "LONGBLOB"},
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
//
// The address may list several servers or Galera nodes,
// user:password@tcp(h1:3306,h2:3306,h3:3306)/db (see SplitHosts). Each new
// connection tries them in turn from the one that answered last, and keeps
// the first whose read_only is off and, on Galera, whose
// wsrep_local_state_comment is Synced in the Primary component. A
// connection that meets a read-only server, a node outside the cluster or
// a lost server is closed with the pool's idle ones (see sqlstore.Drops),
// so the next transaction moves to another node. Unless the DSN sets
// timeout=, each node gets opts.ConnectTimeout (sqlstore.DefaultConnectTimeout
// when zero) to connect and answer those checks, so a hung node is
// skipped within the store deadline.
func Open(ctx context.Context, dsn string, opts Opts) (*Store, error) {
	first, addrs, err := SplitHosts(dsn)
	if err != nil {
		return nil, err
	}
	cfg, err := mysql.ParseDSN(first)
	if err != nil {
		return nil, fmt.Errorf("mysql: open: %w", Dialect().Err(err))
	}
	if cfg.DBName == "" {
		return nil, fmt.Errorf("mysql: open: %w: the DSN names no database", queue.ErrBadRequest)
	}
	cfg.ClientFoundRows = true
	cfg.InterpolateParams = true
	cfg.ParseTime = false
	connect := cmp.Or(cfg.Timeout, opts.ConnectTimeout, sqlstore.DefaultConnectTimeout)
	cfg.Timeout = connect
	isolation, galera, err := probe(ctx, cfg, addrs, connect)
	if err != nil {
		return nil, fmt.Errorf("mysql: connect: %w", Dialect().Err(err))
	}
	cfg.Params = withParam(cfg.Params, isolation, "'READ-COMMITTED'")
	if _, set := cfg.Params["wsrep_sync_wait"]; galera && !set {
		cfg.Params["wsrep_sync_wait"] = "1"
	}
	cfg.Params = withParam(cfg.Params, "innodb_lock_wait_timeout", fmt.Sprint(LockWaitTimeout))
	conn, err := newHosts(cfg, addrs, galera, connect)
	if err != nil {
		return nil, fmt.Errorf("mysql: open: %w", Dialect().Err(err))
	}
	s, err := sqlstore.Connect(ctx, Dialect(), sql.OpenDB(conn), opts)
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
// before) and tells whether the server is a Galera node with wsrep on,
// asking the first writable one of addrs.
func probe(ctx context.Context, cfg *mysql.Config, addrs []string, connect time.Duration) (isolation string, galera bool, err error) {
	conn, err := newHosts(cfg, addrs, false, connect)
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
//     ROLLBACK; 1614/1402 transaction branches rolled back; 3101 (MySQL
//     group replication rolled the transaction back);
//   - read-only (queue.ErrReadOnly; the store drops the connection): 1290
//     (--read-only, super_read_only), 1836 (read-only mode) and 1792 (a
//     READ ONLY transaction, as a server in read_only mode may answer);
//   - not answering (queue.ErrNotAnswering; the store drops the
//     connection): shutdown, lost or killed connections, an idle session
//     the server closed, a connection the driver found broken or out of
//     sync, and 1047, Galera's "WSREP has not yet prepared node for
//     application use" (a node outside the primary component, or not
//     synced: another node can serve);
//   - unavailable: too many connections, a full disk or table;
//   - duplicate: 1062.
func classify(err error) error {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return codes.Of(me.Number)
	}
	if errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, mysql.ErrPktSync) || errors.Is(err, mysql.ErrPktSyncMul) {
		return queue.ErrNotAnswering
	}
	return nil
}

var codes = sqlstore.Codes[uint16]{
	Aborted:      []uint16{1213, 1205, 1317, 1180, 1181, 1614, 1402, 3101},
	Duplicate:    []uint16{1062},
	ReadOnly:     []uint16{1290, 1836, 1792},
	NotAnswering: []uint16{1053, 1077, 1152, 1158, 1159, 1160, 1161, 1927, 4031, 1047},
	Unavailable:  []uint16{1040, 1021, 1114}, // too many connections, disk full, table full
}
