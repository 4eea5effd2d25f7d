package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"
)

// ServerOpts describe a database server of a test's own for StartServer.
type ServerOpts struct {
	Name string   // in messages, e.g. "mariadbd a"
	Bin  string   // the server binary
	Args []string // its arguments
	// Output is the file its standard output and error go to; Log, the
	// log printed when the test fails (default: Output).
	Output, Log string
	// Cred is the user it runs as (nil: this process's); see ServerUser.
	Cred *syscall.Credential
	// Stop is its shutdown signal: SIGTERM for mariadbd, SIGINT (a fast
	// shutdown) for postgres.
	Stop syscall.Signal
	// Ready returns nil once the server answers (and has what the test
	// needs of it).
	Ready func() error
}

// Server is a database server a test runs (a MariaDB or PostgreSQL of its
// own, on a free loopback port), started by StartServer.
type Server struct {
	proc serverProc
}

// StartServer starts the server o describes in a process group of its own
// and waits up to 30 s until o.Ready returns nil, failing the test (with
// the server's log) if it exits or is not ready by then. When the test
// ends it wakes the server if frozen, asks it to stop and kills it after
// 20 s, and prints the log if the test failed.
func StartServer(t testing.TB, o ServerOpts) *Server {
	t.Helper()
	if o.Log == "" {
		o.Log = o.Output
	}
	s := &Server{proc: serverProc{name: o.Name}}
	printLog := func() {
		b, _ := os.ReadFile(o.Log)
		t.Logf("%s log:\n%s", o.Name, b)
	}
	s.proc.start(t, o.Bin, o.Args, o.Output, o.Cred)
	t.Cleanup(func() {
		s.proc.stop(t, o.Stop, 20*time.Second)
		if t.Failed() {
			printLog()
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := o.Ready()
		if err == nil {
			return s
		}
		select {
		case exit := <-s.proc.done:
			s.proc.done <- exit
			t.Fatalf("%s exited: %v", o.Name, exit)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready: %v", o.Name, err)
		}
	}
}

// Signal sends sig to the server and every process it forked: SIGSTOP
// freezes it (it keeps its sockets and answers nothing), SIGCONT lets it
// go on.
func (s *Server) Signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := s.proc.signal(sig); err != nil {
		t.Fatalf("%s: signal %v: %v", s.proc.name, sig, err)
	}
}

// Exec runs stmts in order, as the user dsn names, on the server of a
// test's own that dsn (of database/sql driver "pgx" or "mysql") reaches,
// outside any store; it stops at the first that fails and returns its
// error, naming the statement.
func Exec(ctx context.Context, driver, dsn string, stmts ...string) error {
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return fmt.Errorf("storetest: open %s: %w", driver, err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}
