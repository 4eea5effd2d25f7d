package storetest

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/need"
)

// PGPair is a PostgreSQL primary and a streaming standby made from it with
// pg_basebackup -R, each on its own loopback port, started by StartPGPair
// for one test and stopped when it ends: the replicated database a
// failover tool (Patroni, pg_auto_failover) runs, without the tool. The
// test plays the tool: it kills or freezes the primary and promotes the
// standby.
type PGPair struct {
	// Primary and Standby are the servers' addresses (host:port).
	Primary, Standby string
	// Database is the database both serve (made before the standby).
	Database string

	bin              string // the server binaries' directory
	cred             *syscall.Credential
	primary, standby *pgNode
}

// PGPairOpts shapes a pair.
type PGPairOpts struct {
	// Synchronous makes every commit wait for the standby to have flushed
	// it (synchronous_standby_names = '*'); else replication is
	// asynchronous, PostgreSQL's default and Patroni's.
	Synchronous bool
}

// pgNode is one postgres server of a pair.
type pgNode struct {
	serverProc
	dir  string // data directory
	port int
	log  string
}

// PostgreSQL's server binaries: Debian installs them per major version,
// outside PATH.
const pgBinGlob = "/usr/lib/postgresql/*/bin"

// StartPGPair starts a primary (initdb, as user postgres when the tests
// run as root, since initdb refuses root; trust authentication on
// loopback), creates the database, copies it to a standby with
// pg_basebackup -R (which writes primary_conninfo and standby.signal),
// with o.Synchronous then makes it the primary's synchronous standby, and
// returns once the standby streams from the primary. Both stop when the test ends;
// their logs are printed if it failed. The standby runs with
// synchronous_standby_names empty: promoted, it has no standby to wait
// for, as a failover tool leaves it. It fails the test when the server
// binaries or pg_basebackup are missing, or skips it with
// NOWSERVING_SKIP_DB=1.
func StartPGPair(t testing.TB, o PGPairOpts) *PGPair {
	t.Helper()
	bin := pgTools(t)
	began := time.Now()
	dir := t.TempDir()
	owner, cred := ServerUser(t, dir, "postgres")
	ports := FreePorts(t, 2)
	p := &PGPair{Database: "nowserving", bin: bin, cred: cred,
		Primary: fmt.Sprintf("127.0.0.1:%d", ports[0]), Standby: fmt.Sprintf("127.0.0.1:%d", ports[1])}
	p.primary = &pgNode{serverProc: serverProc{name: "pg primary"}, dir: filepath.Join(dir, "primary"), port: ports[0], log: filepath.Join(dir, "primary.log")}
	p.standby = &pgNode{serverProc: serverProc{name: "pg standby"}, dir: filepath.Join(dir, "standby"), port: ports[1], log: filepath.Join(dir, "standby.log")}
	if owner != "" {
		ChownTree(t, dir, owner)
	}
	t.Cleanup(func() {
		for _, n := range []*pgNode{p.standby, p.primary} {
			// Fast shutdown: clients are cut off, nothing is kept.
			n.stop(t, syscall.SIGINT, 30*time.Second)
			n.dropSharedMemory(t)
		}
		if t.Failed() {
			p.primary.printLog(t)
			p.standby.printLog(t)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	p.run(t, "initdb", "-D", p.primary.dir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	appendFile(t, filepath.Join(p.primary.dir, "postgresql.conf"), "\n# nowserving test pair\nwal_level = replica\nmax_wal_senders = 5\nwal_keep_size = '256MB'\n")
	p.start(t, p.primary)
	if err := p.primary.waitReady(ctx, false); err != nil {
		t.Fatalf("pg primary: %v", err)
	}
	p.exec(ctx, t, p.Primary, "postgres", "CREATE DATABASE "+p.Database)

	p.run(t, "pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(p.primary.port), "-U", "postgres",
		"-D", p.standby.dir, "-R", "-X", "stream", "--checkpoint=fast", "--no-sync")
	p.start(t, p.standby, "-c", "synchronous_standby_names=")
	if err := p.standby.waitReady(ctx, true); err != nil {
		t.Fatalf("pg standby: %v", err)
	}
	if o.Synchronous {
		// Only now: until the standby streams, every commit would wait.
		p.exec(ctx, t, p.Primary, "postgres", "ALTER SYSTEM SET synchronous_standby_names = '*'")
		p.exec(ctx, t, p.Primary, "postgres", "SELECT pg_reload_conf()")
	}
	if err := p.waitStreaming(ctx, o.Synchronous); err != nil {
		t.Fatalf("pg pair: %v", err)
	}
	t.Logf("pg pair: primary and standby streaming in %.1fs", time.Since(began).Seconds())
	return p
}

// pgTools returns the server binaries' directory after checking that
// initdb, postgres and pg_basebackup are installed.
func pgTools(t testing.TB) string {
	t.Helper()
	dirs, _ := filepath.Glob(pgBinGlob)
	// The newest major version: "9.6" < "15" needs a numeric sort.
	sort.Slice(dirs, func(i, j int) bool { return pgMajor(dirs[i]) < pgMajor(dirs[j]) })
	for i := len(dirs) - 1; i >= 0; i-- {
		ok := true
		for _, tool := range []string{"initdb", "postgres", "pg_basebackup"} {
			if _, err := os.Stat(filepath.Join(dirs[i], tool)); err != nil {
				ok = false
			}
		}
		if ok {
			return dirs[i]
		}
	}
	need.DB(t, "pg pair: no PostgreSQL server binaries (initdb, postgres, pg_basebackup) in "+pgBinGlob+" (apt-get install postgresql)")
	return ""
}

func pgMajor(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

func appendFile(t testing.TB, name, text string) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(text)
		err = errors.Join(err, f.Close())
	}
	if err != nil {
		t.Fatalf("pg pair: %v", err)
	}
}

// run runs one of the server's tools as the servers' user.
func (p *PGPair) run(t testing.TB, tool string, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(p.bin, tool), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	cmd.Dir = "/"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pg pair: %s: %v\n%s", tool, err, out)
	}
}

// start runs postgres on n's data directory: loopback only, no Unix
// socket, dynamic shared memory in the data directory (nothing left in
// /dev/shm by a server killed with -9), no fsync (a killed server's
// writes are in the page cache; the host never crashes), small buffers.
func (p *PGPair) start(t testing.TB, n *pgNode, extra ...string) {
	t.Helper()
	args := []string{"-D", n.dir, "-p", strconv.Itoa(n.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
		"-c", "dynamic_shared_memory_type=mmap", "-c", "fsync=off", "-c", "shared_buffers=32MB",
		"-c", "max_connections=200", "-c", "log_min_messages=warning", "-c", "log_line_prefix=%m [%p] "}
	n.start(t, filepath.Join(p.bin, "postgres"), append(args, extra...), n.log, p.cred)
}

// pgDSN is a single-host DSN of database db at addr.
func pgDSN(addr, db string) string {
	return fmt.Sprintf("postgres://postgres@%s/%s?sslmode=disable", addr, db)
}

// DSN is the multi-host DSN a daemon of the pair is given: both hosts,
// the primary first, and target_session_attrs=read-write, so that each
// new connection goes to the one that takes writes. Nothing else: the
// connect time-out is the driver's default.
func (p *PGPair) DSN() string {
	return fmt.Sprintf("postgres://postgres@%s,%s/%s?target_session_attrs=read-write&sslmode=disable", p.Primary, p.Standby, p.Database)
}

// StandbyDSN is a DSN of the standby alone (after Promote, the survivor).
func (p *PGPair) StandbyDSN() string { return pgDSN(p.Standby, p.Database) }

// Kill9Primary kills the primary's postmaster and every backend at once,
// as a crash of its host would, and waits for them to be gone.
func (p *PGPair) Kill9Primary(t testing.TB) {
	t.Helper()
	p.primary.kill9()
	p.primary.dropSharedMemory(t)
}

// StopPrimary freezes every process of the primary (SIGSTOP), a host that
// hangs: its port still accepts connections (the kernel completes them),
// and nothing on them is ever answered. ContinuePrimary wakes it.
func (p *PGPair) StopPrimary(t testing.TB) {
	t.Helper()
	if err := p.primary.signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("pg primary: SIGSTOP: %v", err)
	}
}

// ContinuePrimary wakes a primary StopPrimary froze.
func (p *PGPair) ContinuePrimary(t testing.TB) {
	t.Helper()
	if err := p.primary.signal(syscall.SIGCONT); err != nil {
		t.Fatalf("pg primary: SIGCONT: %v", err)
	}
}

// PauseReplay pauses the standby's replay (pg_wal_replay_pause): queries
// on it see an older state. The WAL still arrives and is flushed, and a
// promotion replays all of it first, so this alone loses nothing; see
// DetachStandby for a standby that really lags.
func (p *PGPair) PauseReplay(t testing.TB) {
	t.Helper()
	p.exec(t.Context(), t, p.Standby, p.Database, "SELECT pg_wal_replay_pause()")
}

// ResumeReplay resumes the standby's replay.
func (p *PGPair) ResumeReplay(t testing.TB) {
	t.Helper()
	p.exec(t.Context(), t, p.Standby, p.Database, "SELECT pg_wal_replay_resume()")
}

// DetachStandby stops the standby receiving WAL: it clears its
// primary_conninfo and reloads, and returns once its WAL receiver has
// gone. From then on every commit of the primary, acknowledged to its
// client (asynchronous replication), is missing on the standby, as the
// last moments before a crash are on a standby that lags under load. With
// a synchronous pair the primary's commits wait instead. It returns the
// WAL position the standby received up to.
func (p *PGPair) DetachStandby(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	p.exec(ctx, t, p.Standby, p.Database, "ALTER SYSTEM SET primary_conninfo = ''")
	p.exec(ctx, t, p.Standby, p.Database, "SELECT pg_reload_conf()")
	db := p.open(t, p.Standby, p.Database)
	defer db.Close()
	for {
		var receivers int
		var lsn sql.NullString
		err := db.QueryRowContext(ctx, "SELECT (SELECT COUNT(*) FROM pg_stat_wal_receiver), pg_last_wal_receive_lsn()::text").Scan(&receivers, &lsn)
		if err != nil {
			t.Fatalf("pg standby: %v", err)
		}
		if receivers == 0 {
			return lsn.String
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pg standby: its WAL receiver did not stop: %v", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Promote makes the standby a primary (pg_promote, waiting for it) and
// returns once it takes writes.
func (p *PGPair) Promote(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	p.exec(ctx, t, p.Standby, p.Database, "SELECT pg_promote(true, 60)")
	if err := p.standby.waitReady(ctx, false); err != nil {
		t.Fatalf("pg standby: promoted: %v", err)
	}
}

// ReadOnlyPrimary makes the primary refuse writes on every session, the
// open ones included (default_transaction_read_only, reloaded): a node
// that turned read-only under the daemon's pooled connections, which
// then fail with SQLSTATE 25006, while it still answers.
func (p *PGPair) ReadOnlyPrimary(t testing.TB) {
	t.Helper()
	p.exec(t.Context(), t, p.Primary, p.Database, "ALTER SYSTEM SET default_transaction_read_only = on")
	p.exec(t.Context(), t, p.Primary, p.Database, "SELECT pg_reload_conf()")
}

// WALBehind is how many bytes of WAL the primary has written past what
// the standby received, while both answer.
func (p *PGPair) WALBehind(t testing.TB) int64 {
	t.Helper()
	var behind int64
	pdb := p.open(t, p.Primary, p.Database)
	defer pdb.Close()
	var received string
	sdb := p.open(t, p.Standby, p.Database)
	defer sdb.Close()
	if err := sdb.QueryRowContext(t.Context(), "SELECT COALESCE(pg_last_wal_receive_lsn(), '0/0')::text").Scan(&received); err != nil {
		t.Fatalf("pg standby: %v", err)
	}
	if err := pdb.QueryRowContext(t.Context(), "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint", received).Scan(&behind); err != nil {
		t.Fatalf("pg primary: %v", err)
	}
	return behind
}

func (p *PGPair) open(t testing.TB, addr, db string) *sql.DB {
	t.Helper()
	d, err := sql.Open("pgx", pgDSN(addr, db)+"&connect_timeout=5")
	if err != nil {
		t.Fatalf("pg pair: %v", err)
	}
	return d
}

// exec runs one statement on the server at addr.
func (p *PGPair) exec(ctx context.Context, t testing.TB, addr, db, stmt string) {
	t.Helper()
	d := p.open(t, addr, db)
	defer d.Close()
	if _, err := d.ExecContext(ctx, stmt); err != nil {
		t.Fatalf("pg pair: %s on %s: %v", stmt, addr, err)
	}
}

// waitStreaming polls the primary until the standby streams from it (as
// its synchronous standby when sync).
func (p *PGPair) waitStreaming(ctx context.Context, sync bool) error {
	db, err := sql.Open("pgx", pgDSN(p.Primary, "postgres")+"&connect_timeout=5")
	if err != nil {
		return err
	}
	defer db.Close()
	want := "async"
	if sync {
		want = "sync"
	}
	var last error
	for {
		var state, syncState string
		err := db.QueryRowContext(ctx, "SELECT state, sync_state FROM pg_stat_replication").Scan(&state, &syncState)
		switch {
		case err != nil:
			last = err
		case state == "streaming" && syncState == want:
			return nil
		default:
			last = fmt.Errorf("replication %s, %s (want streaming, %s)", state, syncState, want)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("standby not streaming in time: %v", last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitReady polls the node until it answers, in recovery (a standby) or
// not (a primary, or a promoted standby).
func (n *pgNode) waitReady(ctx context.Context, standby bool) error {
	db, err := sql.Open("pgx", pgDSN(fmt.Sprintf("127.0.0.1:%d", n.port), "postgres")+"&connect_timeout=2")
	if err != nil {
		return err
	}
	defer db.Close()
	var last error
	for {
		var inRecovery bool
		err := db.QueryRowContext(ctx, "SELECT pg_is_in_recovery()").Scan(&inRecovery)
		switch {
		case err != nil:
			last = err
		case inRecovery == standby:
			return nil
		default:
			last = fmt.Errorf("pg_is_in_recovery() = %v", inRecovery)
		}
		select {
		case err := <-n.exited():
			n.done <- err
			return fmt.Errorf("postgres exited: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("not ready in time: %v", last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// dropSharedMemory removes the small System V segment a postgres killed
// with -9 leaves behind (its id is on line 7 of postmaster.pid): the data
// directory it guards goes with the test, nothing else would ever remove it.
func (n *pgNode) dropSharedMemory(t testing.TB) {
	b, err := os.ReadFile(filepath.Join(n.dir, "postmaster.pid"))
	if err != nil {
		return // a clean shutdown removed the file, and the segment
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for i := 1; sc.Scan(); i++ {
		if i != 7 {
			continue
		}
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			return
		}
		id, err := strconv.Atoi(f[1])
		if err != nil {
			return
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_SHMCTL, uintptr(id), 0 /* IPC_RMID */, 0); errno != 0 && errno != syscall.EINVAL {
			t.Logf("%s: remove shared memory segment %d: %v", n.name, id, errno)
		}
	}
}

// printLog logs the tail of the node's server log.
func (n *pgNode) printLog(t testing.TB) {
	const tail = 60
	b, err := os.ReadFile(n.log)
	if err != nil {
		t.Logf("%s: %v", n.name, err)
		return
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	lines = lines[max(len(lines)-tail, 0):]
	t.Logf("%s log (last %d lines):\n%s", n.name, len(lines), bytes.Join(lines, []byte("\n")))
}
