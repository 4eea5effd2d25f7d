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
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// TestClassify: the errors of a failover are store unavailability of the
// right kind (never an internal error), and the ones that leave the
// connection useless drop it.
func TestClassify(t *testing.T) {
	pg := func(code string) error { return &pgconn.PgError{Severity: "ERROR", Code: code, Message: "m"} }
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	for _, c := range []struct {
		name  string
		err   error
		want  error // the sentinel errors.Is must find; nil: none of the store's
		drops bool
	}{
		{"read-only transaction (a standby)", pg("25006"), queue.ErrReadOnly, true},
		{"terminated by administrator", pg("57P01"), queue.ErrNotAnswering, true},
		{"crash shutdown", pg("57P02"), queue.ErrNotAnswering, true},
		{"cannot connect now (recovery mode)", pg("57P03"), queue.ErrNotAnswering, true},
		{"connection failure", pg("08006"), queue.ErrNotAnswering, true},
		{"admin shutdown in a wrapped error", fmt.Errorf("exec: %w", pg("57P01")), queue.ErrNotAnswering, true},
		{"conn closed", fmt.Errorf("begin: %w", pgconn.ErrConnClosed), queue.ErrNotAnswering, true},
		{"EOF", io.EOF, queue.ErrNotAnswering, true},
		{"unexpected EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), queue.ErrNotAnswering, true},
		{"connection reset", reset, queue.ErrNotAnswering, true},
		{"broken pipe", fmt.Errorf("write: %w", syscall.EPIPE), queue.ErrNotAnswering, true},
		{"closed network connection", fmt.Errorf("read: %w", net.ErrClosed), queue.ErrNotAnswering, true},
		{"too many connections", pg("53300"), queue.ErrUnavailable, false},
		{"disk full", pg("53100"), queue.ErrUnavailable, false},
		{"serialization failure", pg("40001"), queue.ErrAborted, false},
		{"deadlock", pg("40P01"), queue.ErrAborted, false},
		{"unique violation", pg("23505"), queue.ErrDuplicate, false},
		{"deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), context.DeadlineExceeded, true},
		{"syntax error", pg("42601"), nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := postgres.Dialect().Err(c.err)
			if c.want != nil && !errors.Is(got, c.want) {
				t.Errorf("Err(%v) = %v, want it to match %v", c.err, got, c.want)
			}
			if c.want == nil && (errors.Is(got, queue.ErrUnavailable) || errors.Is(got, queue.ErrAborted)) {
				t.Errorf("Err(%v) = %v, want no store sentinel", c.err, got)
			}
			if d := sqlstore.Drops(got); d != c.drops {
				t.Errorf("Drops(%v) = %v, want %v", got, d, c.drops)
			}
			var pe *pgconn.PgError
			if errors.As(got, &pe) {
				t.Errorf("Err(%v) still wraps a *pgconn.PgError", c.err)
			}
		})
	}
}
