// Package sqlstore implements queue.Store and queue.Tx once, over
// database/sql, for the three SQL databases nowserving runs on. A small
// Dialect says what differs between them: placeholders, upserts, row locks,
// how a driver error is classified into a queue error, and the embedded
// migrations. The sqlite, postgres and mysql packages each supply a Dialect
// and the connections; the queries and the transaction logic live here.
//
// Nothing returned by this package wraps a driver type: driver errors are
// classified into queue.ErrAborted, queue.ErrDuplicate or
// queue.ErrUnavailable, or flattened to their text.
package sqlstore

import (
	"context"
	"database/sql"
	"io/fs"
	"strconv"
	"strings"
)

// UpsertStyle is how a dialect writes "insert or update".
type UpsertStyle int

// Upsert styles.
const (
	// OnConflict is INSERT ... ON CONFLICT (keys) DO UPDATE ... RETURNING
	// (PostgreSQL, SQLite).
	OnConflict UpsertStyle = iota
	// OnDuplicateKey is INSERT ... ON DUPLICATE KEY UPDATE with the
	// LAST_INSERT_ID(expr) trick for counters (MySQL, MariaDB).
	OnDuplicateKey
)

// IDSource is where a dialect reserves ticket ids before it inserts them.
type IDSource int

const (
	// IDsOnInsert: nowhere, the ids come only with the insert (MySQL's
	// auto-increment): Tx.TicketIDs is unsupported.
	IDsOnInsert IDSource = iota
	// IDsSequence: the column's sequence (PostgreSQL's identity).
	IDsSequence
	// IDsAfterMax: the ids after the largest one, which stay the
	// transaction's while it holds the only write lock (SQLite) and
	// inserts no other ticket.
	IDsAfterMax
)

// Dialect describes one SQL database.
type Dialect struct {
	// Name prefixes every error: "sqlite", "postgres", "mysql".
	Name string
	// Dollar rewrites ? placeholders to $1, $2, ... (PostgreSQL).
	Dollar bool
	// RowLocks enables SELECT ... FOR UPDATE in read-write transactions.
	RowLocks bool
	// SkipLocked adds SKIP LOCKED to a locking Head.
	SkipLocked bool
	// Upsert selects the upsert and counter-increment statements.
	Upsert UpsertStyle
	// ReturningID inserts tickets with RETURNING id instead of reading
	// LastInsertId.
	ReturningID bool
	// IDs is where Tx.TicketIDs takes ticket ids from before the insert.
	IDs IDSource
	// MergeWrites sends the writes of a transaction whose answer nothing
	// reads (its events, the requests' results, a batch's tickets, the
	// version bump of a site it locked) together, as one statement of
	// data-modifying WITH clauses, before its next statement or its
	// COMMIT: one round trip where each took one (PostgreSQL).
	MergeWrites bool
	// CacheStatements keeps statements prepared per connection (for a
	// driver that parses every statement again otherwise).
	CacheStatements bool
	// SumCast, when set, wraps aggregate sums as CAST(SUM(x) AS SumCast) so
	// they scan as integers ("BIGINT" on PostgreSQL, "SIGNED" on MySQL).
	SumCast string
	// Snapshot is the isolation level Check reads under, so its queries see
	// one consistent state (sql.LevelDefault where one transaction already
	// is a snapshot, as on SQLite).
	Snapshot sql.IsolationLevel
	// WriteIsolation is the isolation level of Update transactions
	// (sql.LevelDefault: the session's).
	WriteIsolation sql.IsolationLevel
	// Classify maps a driver error onto queue.ErrAborted (the database ended
	// the transaction: only ROLLBACK may follow, then a retry of the whole
	// transaction), queue.ErrDuplicate or queue.ErrUnavailable, or returns
	// nil when it is none of them. It is the one place per dialect that
	// decides which errors end a transaction; queue.ErrConflict is left to
	// compare-and-set statements that matched no row.
	Classify func(err error) error
	// Demoted, when set, is asked about the raw driver connection of a
	// transaction about to commit: it returns a check, run only when the
	// COMMIT has waited StuckCommit, of whether that connection's server
	// has stopped being the writable primary (demoted, turned read-only,
	// another host now the writable one). nil, or a nil check: never asked.
	Demoted func(conn any) func(ctx context.Context) bool
	// Migrations holds NNNN_name.sql files at its root, applied in order.
	Migrations fs.FS
	// Words fills the {{word}} holes of the migrations (see Expand): the
	// portable ones leave to the dialect what the dialects spell
	// differently, "id" (an identity primary key column), "int", "int64",
	// "bytes" and "without_rowid" (the table option after a CREATE TABLE's
	// ")"): each dialect gives the words of the portable files it takes.
	Words map[string]string
	// LockMigrations, when set, takes a lock on conn that keeps other
	// processes from migrating the same database at the same time, and
	// returns the function that releases it.
	LockMigrations func(ctx context.Context, conn *sql.Conn) (unlock func(), err error)
	// Reclaim, when set, is the statement that gives a few pages the purge
	// freed back to the file system (SQLite's incremental vacuum); the
	// servers reuse freed pages themselves.
	Reclaim string
	// DropIndex is the statement that drops the named index of tickets; only
	// tests that corrupt a database on purpose use it.
	DropIndex func(name string) string
}

// Rebind rewrites ? placeholders for the dialect. The queries of this
// package never hold a ? inside a string literal.
func (d *Dialect) Rebind(q string) string {
	if !d.Dollar {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// param is the placeholder of the nth (1-based) parameter of a statement.
func (d *Dialect) param(n int) string {
	if d.Dollar {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// upsert returns the statement inserting cols (keys first) into table, or
// updating the non-key columns when the keys exist.
func (d *Dialect) upsert(table string, keys, cols []string) string {
	all := append(append([]string{}, keys...), cols...)
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (" + strings.Join(all, ", ") + ") VALUES (")
	b.WriteString(strings.TrimSuffix(strings.Repeat("?, ", len(all)), ", "))
	b.WriteString(")")
	set := make([]string, len(cols))
	switch d.Upsert {
	case OnDuplicateKey:
		for i, c := range cols {
			set[i] = c + " = VALUES(" + c + ")"
		}
		b.WriteString(" ON DUPLICATE KEY UPDATE " + strings.Join(set, ", "))
	default:
		for i, c := range cols {
			set[i] = c + " = excluded." + c
		}
		b.WriteString(" ON CONFLICT (" + strings.Join(keys, ", ") + ") DO UPDATE SET " + strings.Join(set, ", "))
	}
	return d.Rebind(b.String())
}

// insertIfMissing returns the statement inserting cols into table unless
// a row with the same key exists. MySQL's form is a plain INSERT, whose
// duplicate-key error (which ends the statement, not the transaction) the
// caller passes through missingOK: the no-op ON DUPLICATE KEY UPDATE it
// replaces once left two Galera nodes with different rows (node 1 could
// not apply node 2's insert of a counter row it already held, and left the
// cluster), and INSERT IGNORE hides every other error as a warning.
func (d *Dialect) insertIfMissing(table string, cols []string) string {
	q := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES (" +
		strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	if d.Upsert == OnDuplicateKey {
		return q
	}
	return d.Rebind(q + " ON CONFLICT DO NOTHING")
}

// increment returns the statement that adds n (its last parameter, given
// twice) to column col of the row of table with the given keys, inserting
// it with n when it is missing. With
// OnConflict the statement returns the new value; with OnDuplicateKey the
// value is LAST_INSERT_ID().
func (d *Dialect) increment(table string, keys []string, col string) string {
	ph := strings.Repeat("?, ", len(keys))
	cols := strings.Join(keys, ", ") + ", " + col
	switch d.Upsert {
	case OnDuplicateKey:
		return "INSERT INTO " + table + " (" + cols + ") VALUES (" + ph + "LAST_INSERT_ID(?))" +
			" ON DUPLICATE KEY UPDATE " + col + " = LAST_INSERT_ID(" + col + " + ?)"
	default:
		return d.Rebind("INSERT INTO " + table + " (" + cols + ") VALUES (" + ph + "?)" +
			" ON CONFLICT (" + strings.Join(keys, ", ") + ") DO UPDATE SET " + col + " = " + table + "." + col + " + ?" +
			" RETURNING " + col)
	}
}

// sum returns SUM(expr), cast to an integer where the dialect needs it.
func (d *Dialect) sum(expr string) string {
	if d.SumCast == "" {
		return "COALESCE(SUM(" + expr + "), 0)"
	}
	return "CAST(COALESCE(SUM(" + expr + "), 0) AS " + d.SumCast + ")"
}
