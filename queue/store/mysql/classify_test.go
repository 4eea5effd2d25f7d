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
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestClassify: read-only servers and nodes, lost and killed connections
// are store unavailability of the right kind (never an internal error),
// and the ones that leave the connection useless drop it.
func TestClassify(t *testing.T) {
	my := func(n uint16) error { return &gomysql.MySQLError{Number: n, Message: "m"} }
	class := storetest.Class
	storetest.RunClassify(t, mysql.Dialect(), []storetest.Classified{
		class("--read-only", my(1290), queue.ErrReadOnly, true),
		class("read-only mode", my(1836), queue.ErrReadOnly, true),
		class("READ ONLY transaction", my(1792), queue.ErrReadOnly, true),
		class("Galera node not prepared", my(1047), queue.ErrNotAnswering, true),
		class("server shutdown", my(1053), queue.ErrNotAnswering, true),
		class("connection killed", my(1927), queue.ErrNotAnswering, true),
		class("idle session closed by the server", my(4031), queue.ErrNotAnswering, true),
		class("invalid connection", fmt.Errorf("exec: %w", gomysql.ErrInvalidConn), queue.ErrNotAnswering, true),
		class("bad connection", driver.ErrBadConn, queue.ErrNotAnswering, true),
		class("commands out of sync", gomysql.ErrPktSync, queue.ErrNotAnswering, true),
		class("unexpected EOF", io.ErrUnexpectedEOF, queue.ErrNotAnswering, true),
		class("too many connections", my(1040), queue.ErrUnavailable, false),
		class("disk full", my(1021), queue.ErrUnavailable, false),
		class("deadlock or certification conflict", my(1213), queue.ErrAborted, false),
		class("lock wait timeout", my(1205), queue.ErrAborted, false),
		class("duplicate", my(1062), queue.ErrDuplicate, false),
		class("syntax error", my(1064), nil, false),
	}, func(err error) bool {
		var me *gomysql.MySQLError
		return errors.As(err, &me)
	})
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
