package mysql_test

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// TestClassify: read-only servers and nodes, lost and killed connections
// are store unavailability of the right kind (never an internal error),
// and the ones that leave the connection useless drop it.
func TestClassify(t *testing.T) {
	my := func(n uint16) error { return &gomysql.MySQLError{Number: n, Message: "m"} }
	for _, c := range []struct {
		name  string
		err   error
		want  error
		drops bool
	}{
		{"--read-only", my(1290), queue.ErrReadOnly, true},
		{"read-only mode", my(1836), queue.ErrReadOnly, true},
		{"READ ONLY transaction", my(1792), queue.ErrReadOnly, true},
		{"Galera node not prepared", my(1047), queue.ErrNotAnswering, true},
		{"server shutdown", my(1053), queue.ErrNotAnswering, true},
		{"connection killed", my(1927), queue.ErrNotAnswering, true},
		{"idle session closed by the server", my(4031), queue.ErrNotAnswering, true},
		{"invalid connection", fmt.Errorf("exec: %w", gomysql.ErrInvalidConn), queue.ErrNotAnswering, true},
		{"bad connection", driver.ErrBadConn, queue.ErrNotAnswering, true},
		{"commands out of sync", gomysql.ErrPktSync, queue.ErrNotAnswering, true},
		{"unexpected EOF", io.ErrUnexpectedEOF, queue.ErrNotAnswering, true},
		{"too many connections", my(1040), queue.ErrUnavailable, false},
		{"disk full", my(1021), queue.ErrUnavailable, false},
		{"deadlock or certification conflict", my(1213), queue.ErrAborted, false},
		{"lock wait timeout", my(1205), queue.ErrAborted, false},
		{"duplicate", my(1062), queue.ErrDuplicate, false},
		{"syntax error", my(1064), nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := mysql.Dialect().Err(c.err)
			if c.want != nil && !errors.Is(got, c.want) {
				t.Errorf("Err(%v) = %v, want it to match %v", c.err, got, c.want)
			}
			if c.want == nil && (errors.Is(got, queue.ErrUnavailable) || errors.Is(got, queue.ErrAborted)) {
				t.Errorf("Err(%v) = %v, want no store sentinel", c.err, got)
			}
			if d := sqlstore.Drops(got); d != c.drops {
				t.Errorf("Drops(%v) = %v, want %v", got, d, c.drops)
			}
			var me *gomysql.MySQLError
			if errors.As(got, &me) {
				t.Errorf("Err(%v) still wraps a *mysql.MySQLError", c.err)
			}
		})
	}
}

// TestSplitHosts: a node list in tcp(...) is taken out of the DSN, the
// driver gets the first address, and a port defaults to 3306.
func TestSplitHosts(t *testing.T) {
	for _, c := range []struct {
		dsn, first string
		addrs      []string
		bad        bool
	}{
		{"root@tcp(h1:3306,h2:3307,h3)/db?x=1", "root@tcp(h1:3306)/db?x=1", []string{"h1:3306", "h2:3307", "h3:3306"}, false},
		{"u:p@ss(w)@tcp(a:1, b:2)/db", "u:p@ss(w)@tcp(a:1)/db", []string{"a:1", "b:2"}, false},
		{"root@tcp(127.0.0.1:3306)/test", "root@tcp(127.0.0.1:3306)/test", []string{"127.0.0.1:3306"}, false},
		{"root@/test", "root@/test", nil, false},
		{"root@tcp(a:1,,b:2)/db", "", nil, true},
		{"root@unix(/a.sock,/b.sock)/db", "", nil, true},
	} {
		first, addrs, err := mysql.SplitHosts(c.dsn)
		if c.bad {
			if !errors.Is(err, queue.ErrBadRequest) {
				t.Errorf("SplitHosts(%q) error = %v, want a bad request", c.dsn, err)
			}
			continue
		}
		if err != nil || first != c.first || fmt.Sprint(addrs) != fmt.Sprint(c.addrs) {
			t.Errorf("SplitHosts(%q) = %q, %q, %v; want %q, %q", c.dsn, first, addrs, err, c.first, c.addrs)
		}
	}
}
