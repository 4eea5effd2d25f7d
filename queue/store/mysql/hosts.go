package mysql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/nowserving/nowserving/queue"
)

// SplitHosts takes the node list out of a DSN whose address names several
// nodes, user:password@tcp(h1:3306,h2:3306,h3:3306)/db?params: it returns
// the DSN with the first address alone, which the driver parses, and every
// address in order. A DSN with one address comes back as it is, with that
// one. The list is only for tcp; an address without a port gets 3306.
func SplitHosts(dsn string) (first string, addrs []string, err error) {
	slash := strings.LastIndex(dsn, "/")
	if slash < 0 {
		return dsn, nil, nil // the driver says what is wrong
	}
	at := strings.LastIndex(dsn[:slash], "@") // the password may hold anything but ends at the last @
	netAddr := dsn[at+1 : slash]
	open, close := strings.Index(netAddr, "("), strings.LastIndex(netAddr, ")")
	if open < 0 || close < open {
		return dsn, nil, nil // no address: the driver's default
	}
	list := netAddr[open+1 : close]
	if !strings.Contains(list, ",") {
		return dsn, []string{list}, nil
	}
	if netAddr[:open] != "tcp" {
		return "", nil, fmt.Errorf("mysql: DSN: %w: several addresses need tcp(...), not %s(...)", queue.ErrBadRequest, netAddr[:open])
	}
	for a := range strings.SplitSeq(list, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			return "", nil, fmt.Errorf("mysql: DSN: %w: empty address in tcp(%s)", queue.ErrBadRequest, list)
		}
		if !strings.Contains(a, ":") {
			a += ":3306"
		}
		addrs = append(addrs, a)
	}
	start := at + 1 + open + 1
	return dsn[:start] + addrs[0] + dsn[at+1+close:], addrs, nil
}

// hosts is a driver.Connector over several servers or Galera nodes: each
// new connection tries them in turn, from the one that answered last, and
// keeps the first that is writable (read_only off) and, on Galera, synced
// in the primary component. The pool calls it whenever it needs a
// connection, so once the store has dropped the connections of a node
// that died, turned read-only or left the cluster, the next transaction
// lands on another.
type hosts struct {
	addrs   []string
	conns   []driver.Connector
	galera  bool          // check wsrep state at connect
	timeout time.Duration // bounds one node's dial and checks
	cur     atomic.Int64  // index of the node that answered last
}

// newHosts returns the connector to cfg's server at each of addrs (cfg's
// own address when addrs is empty), each bounded by timeout.
func newHosts(cfg *mysql.Config, addrs []string, galera bool, timeout time.Duration) (*hosts, error) {
	if len(addrs) == 0 {
		addrs = []string{cfg.Addr}
	}
	h := &hosts{addrs: addrs, galera: galera, timeout: timeout}
	for _, a := range addrs {
		c := cfg.Clone()
		c.Addr = a
		conn, err := mysql.NewConnector(c)
		if err != nil {
			return nil, fmt.Errorf("mysql: %s: %w", a, err)
		}
		h.conns = append(h.conns, conn)
	}
	return h, nil
}

// Connect returns a connection to the first usable node, starting with
// the one that answered last (or the one after the last that failed);
// when none is, the error wraps each node's (queue.ErrReadOnly,
// queue.ErrNotAnswering ...).
func (h *hosts) Connect(ctx context.Context) (driver.Conn, error) {
	start := int(h.cur.Load())
	var errs []error
	for k := range len(h.addrs) {
		i := (start + k) % len(h.addrs)
		c, err := h.connect(ctx, i)
		if err == nil {
			h.cur.Store(int64(i))
			return c, nil
		}
		// The next dial starts after this node, even if ctx ends here: a
		// node that hangs longer than the caller's deadline is not tried
		// first again and again.
		h.cur.CompareAndSwap(int64(i), int64((i+1)%len(h.addrs)))
		if ctx.Err() != nil {
			return nil, err
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

// connect dials node i and checks it within h.timeout.
func (h *hosts) connect(ctx context.Context, i int) (driver.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	c, err := h.conns[i].Connect(ctx)
	if err == nil {
		if err = h.check(ctx, c); err != nil {
			_ = c.Close()
		}
	}
	switch {
	case err == nil:
		return c, nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("%s: %w: no answer within %s", h.addrs[i], queue.ErrNotAnswering, h.timeout)
	}
	return nil, fmt.Errorf("%s: %w", h.addrs[i], Dialect().Err(err))
}

// check refuses a node that is read-only, and on Galera one that is not
// Synced in the primary component.
func (h *hosts) check(ctx context.Context, c driver.Conn) error {
	row, err := queryRow(ctx, c, "SELECT @@global.read_only")
	if err != nil {
		return err
	}
	if ro := fmt.Sprint(row[0]); ro != "0" && !strings.EqualFold(ro, "OFF") {
		return fmt.Errorf("%w: read_only is on", queue.ErrReadOnly)
	}
	if !h.galera {
		return nil
	}
	row, err = queryRow(ctx, c, "SELECT (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE_COMMENT'), "+
		"(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_STATUS')")
	if err != nil {
		return err
	}
	state, status := fmt.Sprint(row[0]), fmt.Sprint(row[1])
	if state != "Synced" || status != "Primary" {
		return fmt.Errorf("%w: Galera node is %s in a %s component, not Synced in the Primary one", queue.ErrNotAnswering, state, status)
	}
	return nil
}

// queryRow runs q on a bare driver connection and returns its first row,
// with bytes as strings.
func queryRow(ctx context.Context, c driver.Conn, q string) ([]any, error) {
	qc, ok := c.(driver.QueryerContext)
	if !ok {
		return nil, errors.New("mysql: the driver's connection cannot query")
	}
	rows, err := qc.QueryContext(ctx, q, nil)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(dest); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("mysql: %s: no row", q)
		}
		return nil, err
	}
	row := make([]any, len(dest))
	for i, v := range dest {
		if b, ok := v.([]byte); ok {
			v = string(b)
		}
		row[i] = v
	}
	return row, nil
}

// Driver is the MySQL driver.
func (h *hosts) Driver() driver.Driver { return h.conns[0].Driver() }
