package sqlstore

import (
	"context"
	"database/sql"
	"math/bits"
	"sync"
	"time"
)

// maxCachedStmts bounds a statement cache: the fixed queries plus the
// variants of Head and Find (by how many classes or statuses they list).
const maxCachedStmts = 256

// prepareTimeout bounds the preparation of the statements one transaction
// wanted.
const prepareTimeout = 2 * time.Second

// stmtCache keeps prepared statements of one pool by query text, for a
// driver that does not cache them itself (modernc.org/sqlite parses every
// statement again otherwise). A statement is prepared on the pool after the
// transaction that first wanted it ends (preparing inside it would wait for
// a second connection, and SQLite's writer pool has one); database/sql then
// prepares it on each connection the first time a transaction there uses
// it.
type stmtCache struct {
	db   *sql.DB
	mu   sync.Mutex
	m    map[string]*sql.Stmt
	want map[string]bool
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}, want: map[string]bool{}}
}

// get returns the statement for q, or nil when it is not prepared yet (the
// caller runs q as text; prepare prepares it later).
func (c *stmtCache) get(q string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[q]; ok {
		return st
	}
	if len(c.m)+len(c.want) < maxCachedStmts {
		c.want[q] = true
	}
	return nil
}

// prepare prepares the statements wanted since the last call. It must run
// outside any transaction of the pool. A statement that fails to prepare
// is left to run as text.
func (c *stmtCache) prepare(ctx context.Context) {
	// Not the caller's cancel (a request that gave up still leaves its
	// statements prepared for the next), but never unbounded: a hung
	// database must not hold the request, nor a shutdown, for ever.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), prepareTimeout)
	defer cancel()
	c.mu.Lock()
	if len(c.want) == 0 {
		c.mu.Unlock()
		return
	}
	var qs []string
	for q := range c.want {
		qs = append(qs, q)
	}
	clear(c.want)
	c.mu.Unlock()
	for _, q := range qs {
		st, err := c.db.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if _, dup := c.m[q]; dup || len(c.m) >= maxCachedStmts {
			_ = st.Close()
		} else {
			c.m[q] = st
		}
		c.mu.Unlock()
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.m {
		_ = st.Close()
		delete(c.m, q)
	}
}

// errRow is a row that fails to scan with err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// stmt returns q prepared for the transaction, or nil to run it as text.
func (t *tx) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if t.cache == nil {
		return nil, nil
	}
	st := t.cache.get(q)
	if st == nil {
		return nil, nil
	}
	return t.tx.StmtContext(ctx, st), nil
}

// exec, query and queryRow run a fixed statement (prepared when the
// dialect caches statements; the multi-row statements of a batch, in
// pieces, are fixed too); execText and queryText run one built for the
// call (savepoints, slots, the outbox), never cached. All of them refuse
// to reach the database once the transaction is dead (see tx.dead).
func (t *tx) exec(ctx context.Context, st Stmt) (sql.Result, error) {
	return run(ctx, t, st, (*sql.Stmt).ExecContext, (*sql.Tx).ExecContext)
}

func (t *tx) query(ctx context.Context, st Stmt) (*sql.Rows, error) {
	return run(ctx, t, st, (*sql.Stmt).QueryContext, (*sql.Tx).QueryContext)
}

// run is exec and query: st through its cached statement when the dialect
// prepared one (prepared), else its text in the transaction (direct).
func run[R any](ctx context.Context, t *tx, st Stmt,
	prepared func(*sql.Stmt, context.Context, ...any) (R, error),
	direct func(*sql.Tx, context.Context, string, ...any) (R, error),
) (R, error) {
	var zero R
	if err := t.alive(); err != nil {
		return zero, err
	}
	if err := t.flush(ctx); err != nil {
		return zero, err
	}
	ps, err := t.stmt(ctx, st.SQL)
	if err != nil {
		return zero, err
	}
	if ps != nil {
		return prepared(ps, ctx, st.Args...)
	}
	return direct(t.tx, ctx, st.SQL, st.Args...)
}

func (t *tx) queryRow(ctx context.Context, st Stmt) scanner {
	if err := t.alive(); err != nil {
		return errRow{err}
	}
	if err := t.flush(ctx); err != nil {
		return errRow{err}
	}
	ps, err := t.stmt(ctx, st.SQL)
	if err != nil {
		return errRow{err}
	}
	if ps != nil {
		return ps.QueryRowContext(ctx, st.Args...)
	}
	return t.tx.QueryRowContext(ctx, st.SQL, st.Args...)
}

func (t *tx) execText(ctx context.Context, st Stmt) (sql.Result, error) {
	if err := t.alive(); err != nil {
		return nil, err
	}
	if err := t.flush(ctx); err != nil {
		return nil, err
	}
	return t.tx.ExecContext(ctx, st.SQL, st.Args...)
}

func (t *tx) queryText(ctx context.Context, st Stmt) (*sql.Rows, error) {
	if err := t.alive(); err != nil {
		return nil, err
	}
	if err := t.flush(ctx); err != nil {
		return nil, err
	}
	return t.tx.QueryContext(ctx, st.SQL, st.Args...)
}

// pieces runs a multi-row statement over rows [0, n) as each(from, to)
// calls. Where the store caches prepared statements (SQLite) the pieces
// are a power of two rows each, largest first: a few texts, prepared once
// and run by every batch, where one text per batch size would be parsed
// again every time (a 64-row insert of events is a long statement). A
// driver that caches statements itself, or a database a statement costs a
// round trip to, gets one piece of n.
func (t *tx) pieces(n int, each func(from, to int) error) error {
	if t.cache == nil {
		return each(0, n)
	}
	for from := 0; from < n; {
		to := from + 1<<(bits.Len(uint(n-from))-1)
		if err := each(from, to); err != nil {
			return err
		}
		from = to
	}
	return nil
}
