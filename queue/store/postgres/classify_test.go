package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/postgres"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestClassify: the errors of a failover are store unavailability of the
// right kind (never an internal error), and the ones that leave the
// connection useless drop it.
func TestClassify(t *testing.T) {
	pg := func(code string) error { return &pgconn.PgError{Severity: "ERROR", Code: code, Message: "m"} }
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	class := storetest.Class
	storetest.RunClassify(t, postgres.Dialect(), []storetest.Classified{
		class("read-only transaction (a standby)", pg("25006"), queue.ErrReadOnly, true),
		class("terminated by administrator", pg("57P01"), queue.ErrNotAnswering, true),
		class("crash shutdown", pg("57P02"), queue.ErrNotAnswering, true),
		class("cannot connect now (recovery mode)", pg("57P03"), queue.ErrNotAnswering, true),
		class("connection failure", pg("08006"), queue.ErrNotAnswering, true),
		class("admin shutdown in a wrapped error", fmt.Errorf("exec: %w", pg("57P01")), queue.ErrNotAnswering, true),
		class("conn closed", fmt.Errorf("begin: %w", pgconn.ErrConnClosed), queue.ErrNotAnswering, true),
		class("EOF", io.EOF, queue.ErrNotAnswering, true),
		class("unexpected EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), queue.ErrNotAnswering, true),
		class("connection reset", reset, queue.ErrNotAnswering, true),
		class("broken pipe", fmt.Errorf("write: %w", syscall.EPIPE), queue.ErrNotAnswering, true),
		class("closed network connection", fmt.Errorf("read: %w", net.ErrClosed), queue.ErrNotAnswering, true),
		class("too many connections", pg("53300"), queue.ErrUnavailable, false),
		class("disk full", pg("53100"), queue.ErrUnavailable, false),
		class("serialization failure", pg("40001"), queue.ErrAborted, false),
		class("deadlock", pg("40P01"), queue.ErrAborted, false),
		class("unique violation", pg("23505"), queue.ErrDuplicate, false),
		class("deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), context.DeadlineExceeded, true),
		class("syntax error", pg("42601"), nil, false),
	}, func(err error) bool {
		var pe *pgconn.PgError
		return errors.As(err, &pe)
	})
}
