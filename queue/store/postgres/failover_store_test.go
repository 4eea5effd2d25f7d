package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/need"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue/store/postgres"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestFailover: storetest.RunHostFailover on a store on a two-host DSN
// with target_session_attrs=read-write, both hosts PostgreSQL clusters of
// the test's own; a turns read-only as a primary demoted to a standby
// answers (SQLSTATE 25006), b freezes by SIGSTOP of every process of it,
// and the notifier's listener on b finds that out. The shared server's
// settings are never touched.
func TestFailover(t *testing.T) {
	servers := startPostgres(t, "a", "b")
	a, b := servers[0], servers[1]
	storetest.At(t, postgres.Open, b.dsn(b.addr), postgres.Opts{}).Close() // the schema on b too
	const connect = 300 * time.Millisecond
	s := storetest.At(t, postgres.Open, a.dsn(a.addr+","+b.addr), postgres.Opts{MaxConns: 4, ConnectTimeout: connect})
	var listened <-chan error
	storetest.RunHostFailover(t, storetest.HostFailover{
		Store: s.Store, APort: a.port, BPort: b.port, Connect: connect,
		PortQuery: "SELECT inet_server_port()",
		ReadOnlyA: func(t *testing.T, on bool) {
			if on {
				a.exec(t, "ALTER SYSTEM SET default_transaction_read_only = on", "SELECT pg_reload_conf()")
				a.waitReadOnly(t, "on")
				return
			}
			a.exec(t, "ALTER SYSTEM RESET default_transaction_read_only", "SELECT pg_reload_conf()")
			a.waitReadOnly(t, "off")
		},
		FreezeB: func(t *testing.T) { listened = listenOn(t, b); b.freeze(t) },
	})
	// The notifier's listener, quiet on the frozen host, finds it out at
	// its next check and returns, so the daemon listens again elsewhere.
	select {
	case err := <-listened:
		t.Logf("listener on the frozen host: %v", err)
	case <-time.After(5 * time.Second):
		t.Error("the listener still waits on the frozen host 5 s after the freeze")
	}
	b.srv.Signal(t, syscall.SIGCONT) // before Close says goodbye to it
}

// listenOn starts a notifier's Listen on p alone, with a short check of
// quiet connections, and makes sure it survives several checks and still
// receives another notifier's notifications; the channel gets what Listen
// returns.
func listenOn(t *testing.T, p *pgServer) <-chan error {
	t.Helper()
	old := postgres.SetListenCheck(100 * time.Millisecond)
	t.Cleanup(func() { postgres.SetListenCheck(old) })
	dsn := "postgres://postgres@" + p.addr + "/postgres?sslmode=disable"
	listener, sender := postgres.NewNotifier(dsn), postgres.NewNotifier(dsn)
	t.Cleanup(func() { sender.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ready, got := make(chan struct{}), make(chan int64, 1)
	done := make(chan error, 1)
	go func() {
		done <- listener.Listen(ctx, func() { close(ready) }, func(site string, v int64) { got <- v })
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("listen: %v", err)
	}
	time.Sleep(350 * time.Millisecond) // three quiet checks
	if err := sender.Notify(ctx, map[string]int64{"s": 7}); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-got:
		if v != 7 {
			t.Errorf("notified version %d, want 7", v)
		}
	case err := <-done:
		t.Fatalf("listen ended after quiet checks: %v", err)
	case <-time.After(2 * time.Second):
		t.Fatal("no notification 2 s after NOTIFY")
	}
	return done
}

// pgServer is a PostgreSQL cluster of the test's own.
type pgServer struct {
	port int
	addr string
	srv  *storetest.Server
}

// startPostgres starts one PostgreSQL cluster per name under the test's
// temporary directory, each on a free loopback port, and stops them when
// the test ends. It runs initdb once (as user postgres when the test runs
// as root: initdb refuses root) and copies its data directory for each.
func startPostgres(t *testing.T, names ...string) []*pgServer {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(bins) == 0 {
		need.DB(t, "PostgreSQL server binaries not installed (apt-get install postgresql)")
	}
	bin := filepath.Dir(bins[len(bins)-1])
	base := t.TempDir()
	owner, cred := storetest.ServerUser(t, base, "postgres")
	mkdir := func(dir string) {
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			storetest.ChownTree(t, dir, owner)
		}
	}
	template := filepath.Join(base, "template")
	mkdir(template)
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", filepath.Join(template, "data"), "-A", "trust", "-U", "postgres", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	ports := storetest.FreePorts(t, len(names))
	var out []*pgServer
	for i, name := range names {
		dir := filepath.Join(base, name)
		mkdir(dir)
		if b, err := exec.Command("cp", "-a", filepath.Join(template, "data"), dir).CombinedOutput(); err != nil {
			t.Fatalf("copy the data directory: %v\n%s", err, b)
		}
		p := &pgServer{port: ports[i], addr: fmt.Sprintf("127.0.0.1:%d", ports[i])}
		p.srv = storetest.StartServer(t, storetest.ServerOpts{
			Name: "postgres " + name, Bin: filepath.Join(bin, "postgres"), Cred: cred, Stop: syscall.SIGINT, // fast shutdown
			Args: []string{"-D", filepath.Join(dir, "data"), "-p", strconv.Itoa(p.port), "-k", dir,
				"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "shared_buffers=16MB"},
			Output: filepath.Join(dir, "log"),
			Ready: func() error {
				db, err := sql.Open("pgx", p.dsn(p.addr))
				if err != nil {
					return err
				}
				defer db.Close()
				return db.Ping()
			},
		})
		out = append(out, p)
	}
	return out
}

// dsn is the DSN of database postgres at hosts, writable ones only.
func (p *pgServer) dsn(hosts string) string {
	return "postgres://postgres@" + hosts + "/postgres?sslmode=disable&target_session_attrs=read-write"
}

// exec runs statements on the server alone.
func (p *pgServer) exec(t *testing.T, stmts ...string) {
	t.Helper()
	if err := storetest.Exec(t.Context(), "pgx", "postgres://postgres@"+p.addr+"/postgres?sslmode=disable", stmts...); err != nil {
		t.Fatal(err)
	}
}

// waitReadOnly waits until a new session sees default_transaction_read_only
// as want (a reload reaches the backends asynchronously).
func (p *pgServer) waitReadOnly(t *testing.T, want string) {
	t.Helper()
	db, err := sql.Open("pgx", "postgres://postgres@"+p.addr+"/postgres?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxIdleConns(0)
	if !poll.Within(2*time.Second, 20*time.Millisecond, func() bool {
		var got string
		if err := db.QueryRow("SHOW default_transaction_read_only").Scan(&got); err != nil {
			t.Fatal(err)
		}
		return got == want
	}) {
		t.Fatalf("default_transaction_read_only not %s after 2 s", want)
	}
}

// freeze stops every process of the server with SIGSTOP: the postmaster
// and its children. Its sockets stay open and nothing answers; cleanup
// lets them go on.
func (p *pgServer) freeze(t *testing.T) {
	t.Helper()
	p.srv.Signal(t, syscall.SIGSTOP)
}
