package storetest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/nowserving/nowserving/internal/testkit/need"
)

// GaleraProvider is the wsrep provider of Debian's galera-4 package.
const GaleraProvider = "/usr/lib/galera/libgalera_smm.so"

// Galera is a MariaDB Galera cluster on loopback, started by StartGalera
// or StartGaleraOpts for one test and stopped when it ends.
type Galera struct {
	// Nodes are the nodes' addresses (host:port of their SQL ports).
	Nodes []string
	nodes []*galeraNode
}

// GaleraOpts shapes a cluster.
type GaleraOpts struct {
	// Nodes is the number of nodes; 0 means 2.
	Nodes int
	// SuspectTimeout is how long the nodes go without hearing from one
	// before they suspect it is gone (evs.suspect_timeout; evs.inactive
	// and install timeouts are twice it): how long the cluster stops
	// committing when a node dies. 0 means 30 s, so that a node starved
	// of CPU on a loaded test machine is not dropped from a cluster of
	// two, leaving both nodes non-primary (1047). Galera's own default is
	// 5 s.
	SuspectTimeout time.Duration
}

// galeraNode is one mariadbd of the cluster.
type galeraNode struct {
	serverProc
	dir string
	cnf string
	sql int // client port
}

// StartGalera starts a two-node cluster; see StartGaleraOpts.
func StartGalera(t testing.TB) *Galera { return StartGaleraOpts(t, GaleraOpts{}) }

// StartGaleraOpts starts a Galera cluster under t's temporary directory:
// node 1's data directory initialised by mariadb-install-db and copied for
// the others (each of which a state transfer replaces), node 1 bootstrapping
// the cluster (--wsrep-new-cluster), the others joining it one by one by
// rsync state transfer, each with its own SQL, group, IST and SST ports.
// It returns once every node reports wsrep_ready=ON in a cluster of all
// of them, and stops them when the test ends, printing their error logs
// if the test failed. It fails the test when mariadbd, mariadb-install-db,
// rsync or the galera-4 provider is missing, or skips it with
// NOWSERVING_SKIP_DB=1.
func StartGaleraOpts(t testing.TB, o GaleraOpts) *Galera {
	t.Helper()
	if o.Nodes == 0 {
		o.Nodes = 2
	}
	if o.SuspectTimeout == 0 {
		o.SuspectTimeout = 30 * time.Second
	}
	mariadbd := galeraTools(t)
	began := time.Now()
	dir := t.TempDir()
	// mariadbd refuses to run as root, and the SST script runs as the
	// server's user: it must reach and own the data directories. mariadbd
	// switches to it itself (user= in its options).
	runAs, _ := ServerUser(t, dir, "mysql")
	ports := FreePorts(t, 4*o.Nodes)
	var peers []string
	for i := range o.Nodes {
		peers = append(peers, fmt.Sprintf("127.0.0.1:%d", ports[4*i+1]))
	}
	gcomm := "gcomm://" + strings.Join(peers, ",")
	g := &Galera{}
	for i := range o.Nodes {
		p := ports[4*i : 4*i+4]
		n := &galeraNode{serverProc: serverProc{name: fmt.Sprintf("node%d", i+1)}, dir: filepath.Join(dir, fmt.Sprintf("n%d", i+1)), sql: p[0]}
		n.cnf = filepath.Join(n.dir, "my.cnf")
		if err := os.MkdirAll(filepath.Join(n.dir, "data"), 0o755); err != nil {
			t.Fatalf("galera: %v", err)
		}
		if err := os.WriteFile(n.cnf, []byte(galeraConfig(n, runAs, gcomm, p, o.SuspectTimeout)), 0o644); err != nil {
			t.Fatalf("galera: %v", err)
		}
		if i == 0 {
			galeraInstall(t, n, runAs)
		} else {
			galeraCopy(t, g.nodes[0], n, runAs)
		}
		g.nodes = append(g.nodes, n)
		g.Nodes = append(g.Nodes, fmt.Sprintf("127.0.0.1:%d", n.sql))
	}
	steps := []string{fmt.Sprintf("data directories at %.1fs", time.Since(began).Seconds())}
	t.Cleanup(func() {
		for i := len(g.nodes) - 1; i >= 0; i-- {
			g.nodes[i].stop(t, syscall.SIGTERM, 30*time.Second)
		}
		if t.Failed() {
			for _, n := range g.nodes {
				n.printLog(t)
			}
		}
	})
	// Node 1 forms the cluster; each other node joins it once the ones
	// before are synced.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second*time.Duration(o.Nodes)/2)
	defer cancel()
	for i, n := range g.nodes {
		args := []string{"--defaults-file=" + n.cnf}
		if i == 0 {
			args = append(args, "--wsrep-new-cluster")
		}
		n.start(t, mariadbd, args, filepath.Join(n.dir, "stdout.log"), nil)
		if err := n.waitReady(ctx, i+1); err != nil {
			t.Fatalf("galera: %s: %v", n.name, err)
		}
		steps = append(steps, fmt.Sprintf("%s synced at %.1fs", n.name, time.Since(began).Seconds()))
	}
	for _, n := range g.nodes {
		if err := n.waitReady(ctx, o.Nodes); err != nil {
			t.Fatalf("galera: %s: %v", n.name, err)
		}
	}
	t.Logf("galera: a cluster of %d nodes ready in %.1fs (%s)", o.Nodes, time.Since(began).Seconds(), strings.Join(steps, ", "))
	return g
}

// galeraInstall initialises n's data directory with mariadb-install-db.
func galeraInstall(t testing.TB, n *galeraNode, runAs string) {
	t.Helper()
	if runAs != "" {
		ChownTree(t, n.dir, runAs)
	}
	install := exec.Command("mariadb-install-db", "--defaults-file="+n.cnf,
		"--auth-root-authentication-method=normal", "--skip-test-db")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("galera: mariadb-install-db for %s: %v\n%s", n.name, err, out)
	}
}

// galeraCopy gives n a copy of from's data directory, fresh from
// mariadb-install-db and not yet started: what mariadb-install-db would
// write again (it starts a server to bootstrap the system tables and
// syncs their files: 1.8-2.5 s of wall time on a quiet machine, against
// 0.5 s for the copy), as startMariaDB in the mysql store's tests does for
// its servers.
func galeraCopy(t testing.TB, from, n *galeraNode, runAs string) {
	t.Helper()
	data := filepath.Join(n.dir, "data")
	if err := os.Remove(data); err != nil {
		t.Fatalf("galera: %v", err)
	}
	if out, err := exec.Command("cp", "-a", filepath.Join(from.dir, "data"), n.dir).CombinedOutput(); err != nil {
		t.Fatalf("galera: copy %s's data directory for %s: %v\n%s", from.name, n.name, err, out)
	}
	if runAs != "" {
		ChownTree(t, n.dir, runAs)
	}
}

// DSNs creates a fresh database on the cluster, dropped when the test ends,
// and returns the DSNs of nodes 1 and 2 naming it (user root, no password).
func (g *Galera) DSNs(t testing.TB) (dsn1, dsn2 string) {
	t.Helper()
	dsns := g.NodeDSNs(t)
	return dsns[0], dsns[1]
}

// NodeDSNs creates a fresh database on the cluster, dropped when the test
// ends, and returns one DSN per node naming it (user root, no password).
func (g *Galera) NodeDSNs(t testing.TB) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := sql.Open("mysql", g.dsn(0, ""))
	if err != nil {
		t.Fatalf("galera: %v", err)
	}
	name := freshMySQLDatabase(ctx, t, db)
	dsns := make([]string, len(g.Nodes))
	for i := range dsns {
		dsns[i] = g.dsn(i, name)
	}
	return dsns
}

// Kill9 kills node i (0-based) and every process it forked at once, as a
// crash of its host would: no shutdown, no goodbye to the other nodes.
func (g *Galera) Kill9(i int) { g.nodes[i].kill9() }

func (g *Galera) dsn(node int, db string) string {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = g.Nodes[node]
	cfg.DBName = db
	return cfg.FormatDSN()
}

// galeraTools returns the path of mariadbd after checking that everything
// a cluster needs is installed.
func galeraTools(t testing.TB) string {
	t.Helper()
	var missing []string
	mariadbd, err := exec.LookPath("mariadbd")
	if err != nil {
		if _, err := os.Stat("/usr/sbin/mariadbd"); err == nil {
			mariadbd = "/usr/sbin/mariadbd"
		} else {
			missing = append(missing, "mariadbd (mariadb-server)")
		}
	}
	for _, tool := range []string{"mariadb-install-db", "rsync"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if _, err := os.Stat(GaleraProvider); err != nil {
		missing = append(missing, GaleraProvider+" (galera-4)")
	}
	if len(missing) > 0 {
		need.DB(t, "galera: missing "+strings.Join(missing, ", ")+" (apt-get install mariadb-server galera-4 rsync)")
	}
	return mariadbd
}

// galeraConfig is a node's option file; p holds its SQL, group, IST and
// SST ports. The InnoDB flush and buffer settings only make the tests
// faster: durability comes from the other node.
func galeraConfig(n *galeraNode, runAs, gcomm string, p []int, suspect time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[mysqld]\n")
	if runAs != "" {
		fmt.Fprintf(&b, "user=%s\n", runAs)
	}
	fmt.Fprintf(&b, "datadir=%s\n", filepath.Join(n.dir, "data"))
	fmt.Fprintf(&b, "socket=%s\n", filepath.Join(n.dir, "mysqld.sock"))
	fmt.Fprintf(&b, "pid-file=%s\n", filepath.Join(n.dir, "mysqld.pid"))
	fmt.Fprintf(&b, "log-error=%s\n", filepath.Join(n.dir, "error.log"))
	fmt.Fprintf(&b, "port=%d\nbind-address=127.0.0.1\nskip-name-resolve\n", p[0])
	b.WriteString(`binlog_format=ROW
default_storage_engine=InnoDB
innodb_autoinc_lock_mode=2
innodb_buffer_pool_size=64M
innodb_flush_log_at_trx_commit=2
max_connections=200
wsrep_on=ON
`)
	fmt.Fprintf(&b, "wsrep_provider=%s\n", GaleraProvider)
	fmt.Fprintf(&b, "wsrep_cluster_name=nowserving_test\nwsrep_cluster_address=%s\n", gcomm)
	fmt.Fprintf(&b, "wsrep_node_name=%s\nwsrep_node_address=127.0.0.1:%d\n", n.name, p[1])
	fmt.Fprintf(&b, "wsrep_provider_options=\"base_port=%d;ist.recv_addr=127.0.0.1:%d;gcache.size=64M;"+
		"evs.suspect_timeout=%s;evs.inactive_timeout=%s;evs.install_timeout=%s\"\n",
		p[1], p[2], isoSeconds(suspect), isoSeconds(2*suspect), isoSeconds(2*suspect))
	fmt.Fprintf(&b, "wsrep_sst_receive_address=127.0.0.1:%d\nwsrep_sst_method=rsync\n", p[3])
	return b.String()
}

// FreePorts reserves n distinct loopback ports and releases them together,
// for servers that must be told their ports before they start (Galera's
// four per node, a standby's). They are taken below the kernel's
// ephemeral range (net.ipv4.ip_local_port_range), at a random place:
// ports from ":0" are ephemeral ones, which any outgoing connection of the
// machine may take as its own port between their release and the
// server's bind (CI saw a Galera node abort, its IST listener's port
// "already in use", with four test binaries running side by side).
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	lo, hi := 10000, ephemeralLow()
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for p, tried := lo+rand.IntN(hi-lo), 0; len(ports) < n; p, tried = lo+(p-lo+1)%(hi-lo), tried+1 {
		if tried == hi-lo {
			t.Fatalf("free ports: %d of %d found in %d-%d", len(ports), n, lo, hi-1)
		}
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue // taken
		}
		ls = append(ls, l)
		ports = append(ports, p)
	}
	return ports
}

// ephemeralLow is the first port of the kernel's ephemeral range (32768
// where it cannot be read, Linux's default).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	if n, err := strconv.Atoi(f[0]); err == nil && n > 11000 {
		return n
	}
	return 32768
}

// isoSeconds writes d as the ISO 8601 duration Galera's options take.
func isoSeconds(d time.Duration) string {
	return "PT" + strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "S"
}

// waitReady polls the node until it is synced in a cluster of size nodes.
func (n *galeraNode) waitReady(ctx context.Context, size int) error {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", fmt.Sprintf("127.0.0.1:%d", n.sql)
	cfg.Timeout = time.Second
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	var last error
	for {
		var ready, got string
		err := db.QueryRowContext(ctx, "SELECT (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_READY'), "+
			"(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_SIZE')").Scan(&ready, &got)
		switch {
		case err != nil:
			last = err
		case ready == "ON" && got == strconv.Itoa(size):
			return nil
		default:
			last = fmt.Errorf("wsrep_ready=%s, wsrep_cluster_size=%s", ready, got)
		}
		select {
		case err := <-n.exited():
			n.done <- err
			return fmt.Errorf("mariadbd exited: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("not ready in time (want a cluster of %d): %v", size, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// notableLog marks the lines of a node's log printed whatever their age:
// warnings, errors and changes of the cluster's membership.
var notableLog = [][]byte{[]byte("[Warning]"), []byte("[ERROR]"), []byte("view_id("), []byte("Non-primary view"), []byte("New cluster view")}

// printLog logs the node's warnings and errors and the tail of its logs.
func (n *galeraNode) printLog(t testing.TB) {
	const tail = 60
	for _, f := range []string{"error.log", "stdout.log"} {
		b, err := os.ReadFile(filepath.Join(n.dir, f))
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				t.Logf("galera: %s %s: %v", n.name, f, err)
			}
			continue
		}
		lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
		var notable [][]byte
		for _, l := range lines[:max(len(lines)-tail, 0)] {
			for _, w := range notableLog {
				if bytes.Contains(l, w) {
					notable = append(notable, l)
					break
				}
			}
		}
		if len(notable) > 0 {
			t.Logf("galera: %s %s, warnings, errors and views:\n%s", n.name, f, bytes.Join(notable, []byte("\n")))
		}
		lines = lines[max(len(lines)-tail, 0):]
		t.Logf("galera: %s %s (last %d lines):\n%s", n.name, f, len(lines), bytes.Join(lines, []byte("\n")))
	}
}
