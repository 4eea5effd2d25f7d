package mysql_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/nowserving/nowserving/internal/testkit/need"
	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestFailover: storetest.RunHostFailover on a store given two
// independent MariaDB servers in one DSN; a turns read-only by SET GLOBAL
// read_only (1290), b freezes by SIGSTOP. The servers are the test's own,
// on free loopback ports: the shared server's settings are never touched.
func TestFailover(t *testing.T) {
	servers := startMariaDB(t, "a", "b")
	a, b := servers[0], servers[1]
	// Both servers need the schema: migrate b alone first.
	storetest.At(t, mysql.Open, b.dsn(b.addr), mysql.Opts{}).Close()
	const connect = 300 * time.Millisecond
	s := storetest.At(t, mysql.Open, a.dsn(a.addr+","+b.addr), mysql.Opts{MaxConns: 4, ConnectTimeout: connect})
	storetest.RunHostFailover(t, storetest.HostFailover{
		Store: s.Store, APort: a.port, BPort: b.port, Connect: connect, FreezeB: b.freeze,
		PortQuery: "SELECT @@port",
		ReadOnlyA: func(t *testing.T, on bool) { a.root(t, fmt.Sprintf("SET GLOBAL read_only = %t", on)) },
	})
}

// mariaDB is a mariadbd of the test's own.
type mariaDB struct {
	dir  string
	port int
	addr string
	srv  *storetest.Server
}

// startMariaDB starts a MariaDB server per name under the test's
// temporary directory, each on a free loopback port, with a database test
// and a user ns that may use it (and, unlike root, is held to read_only),
// and stops them when the test ends. It runs mariadb-install-db once and
// copies the data directory for the others.
func startMariaDB(t *testing.T, names ...string) []*mariaDB {
	t.Helper()
	mariadbd := "/usr/sbin/mariadbd"
	if p, err := exec.LookPath("mariadbd"); err == nil {
		mariadbd = p
	} else if _, err := os.Stat(mariadbd); err != nil {
		need.DB(t, "mariadbd not installed (apt-get install mariadb-server)")
	}
	install := need.Program(t, "mariadb-server", "mariadb-install-db")
	base := t.TempDir()
	runAs, _ := storetest.ServerUser(t, base, "mysql") // mariadbd refuses to run as root
	ports := storetest.FreePorts(t, len(names))
	var out []*mariaDB
	var cnfs []string
	for i, name := range names {
		dir := filepath.Join(base, name)
		m := &mariaDB{dir: dir, port: ports[i]}
		m.addr = fmt.Sprintf("127.0.0.1:%d", m.port)
		cnf := filepath.Join(dir, "my.cnf")
		conf := fmt.Sprintf("[mysqld]\ndatadir=%s\nsocket=%s\npid-file=%s\nlog-error=%s\nport=%d\n"+
			"bind-address=127.0.0.1\nskip-name-resolve\ninnodb_buffer_pool_size=16M\ninnodb_log_file_size=8M\n"+
			"innodb_flush_log_at_trx_commit=2\nperformance_schema=OFF\nskip-log-bin\n",
			filepath.Join(dir, "data"), filepath.Join(dir, "sock"), filepath.Join(dir, "pid"), filepath.Join(dir, "error.log"), m.port)
		if runAs != "" {
			conf += "user=" + runAs + "\n"
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cnf, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
				t.Fatal(err)
			}
			if runAs != "" {
				storetest.ChownTree(t, dir, runAs)
			}
			if b, err := exec.Command(install, "--defaults-file="+cnf, "--auth-root-authentication-method=normal",
				"--skip-test-db").CombinedOutput(); err != nil {
				t.Fatalf("mariadb-install-db: %v\n%s", err, b)
			}
		} else if b, err := exec.Command("cp", "-a", filepath.Join(out[0].dir, "data"), dir).CombinedOutput(); err != nil {
			t.Fatalf("copy the data directory: %v\n%s", err, b)
		} else if runAs != "" {
			storetest.ChownTree(t, dir, runAs)
		}
		out, cnfs = append(out, m), append(cnfs, cnf)
	}
	for i, m := range out {
		m.srv = storetest.StartServer(t, storetest.ServerOpts{
			Name: "mariadbd " + names[i], Bin: mariadbd, Args: []string{"--defaults-file=" + cnfs[i]},
			Output: filepath.Join(m.dir, "stdout.log"), Log: filepath.Join(m.dir, "error.log"), Stop: syscall.SIGTERM,
			Ready: func() error {
				return m.exec("CREATE DATABASE IF NOT EXISTS test", "DROP USER IF EXISTS ''@'localhost'",
					"CREATE USER IF NOT EXISTS ns@'%'", "GRANT ALL ON test.* TO ns@'%'")
			},
		})
	}
	return out
}

// dsn is the DSN of user ns on database test at addrs.
func (m *mariaDB) dsn(addrs string) string { return "ns@tcp(" + addrs + ")/test" }

// exec runs statements as root.
func (m *mariaDB) exec(stmts ...string) error {
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.Timeout = "root", "tcp", m.addr, time.Second
	return storetest.Exec(context.Background(), "mysql", cfg.FormatDSN(), stmts...)
}

// root runs statements as root or fails the test.
func (m *mariaDB) root(t *testing.T, stmts ...string) {
	t.Helper()
	if err := m.exec(stmts...); err != nil {
		t.Fatal(err)
	}
}

// freeze stops the server's process (SIGSTOP): it keeps its sockets and
// answers nothing. Cleanup lets it go on before stopping it.
func (m *mariaDB) freeze(t *testing.T) {
	t.Helper()
	m.srv.Signal(t, syscall.SIGSTOP)
}
