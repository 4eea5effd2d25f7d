package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/internal/testkit/gate"
	"github.com/nowserving/nowserving/internal/testkit/logtest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// dbProxy stands between the daemon and its database on loopback. Frozen,
// it takes bytes and forwards none, in either direction: to the daemon
// that is a database that hangs (a stopped process), without stopping
// the shared test server. Down, its port refuses connections: a database
// that is not running.
type dbProxy struct {
	t      *testing.T
	target string
	addr   string // the proxy's own address, kept while down

	mu   sync.Mutex
	srv  *conntest.Server // the last one up (nil if never), closed while down
	gate gate.Gate        // shut while frozen
}

// newProxy returns a proxy to target, up and flowing unless down.
func newProxy(t *testing.T, target string, down bool) *dbProxy {
	p := &dbProxy{t: t, target: target}
	srv := conntest.Listen(t)
	p.addr = srv.Addr()
	if down {
		srv.Close()
	} else {
		p.serve(srv)
	}
	t.Cleanup(p.close)
	return p
}

// up makes a proxy that was down listen on its address.
func (p *dbProxy) up() { p.serve(conntest.ListenOn(p.t, p.addr)) }

func (p *dbProxy) serve(srv *conntest.Server) {
	p.mu.Lock()
	p.srv = srv
	p.mu.Unlock()
	srv.Serve(func(c net.Conn) { p.relay(srv, c) })
}

// relay passes c, accepted by srv, on to the target.
func (p *dbProxy) relay(srv *conntest.Server, c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	srv.Keep(s)
	go p.copy(s, c)
	p.copy(c, s)
}

// copy forwards src to dst while the gate is open.
func (p *dbProxy) copy(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	conntest.Pump(dst, src, p.gate.Wait)
}

// freeze stops every byte, on open connections and new ones.
func (p *dbProxy) freeze() { p.gate.Shut() }

func (p *dbProxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.srv != nil {
		p.srv.Close()
	}
	p.gate.Open() // release the copiers so they see their closed conns
}

// waitsYAML is serveYAML on any store, with a 2 s store deadline and
// HTTP on.
var waitsYAML = strings.NewReplacer(
	"store: { driver: sqlite, dsn: %q }", "store: { driver: %s, dsn: %q, timeout: 2s }",
	`http: "" }`, `http: "127.0.0.1:0" }`).Replace(serveYAML)

// process is the nowserving binary running serve.
type process struct {
	cmd      *exec.Cmd
	log      *logtest.Buffer
	exited   chan struct{}
	err      error // Wait's, once exited is closed
	protocol string
	http     string
}

var httpListenRE = regexp.MustCompile(`http=(127\.0\.0\.1:\d+)`)

// startServe runs `nowserving serve` (this test binary, as testscript put
// it on PATH) on a configuration for driver and dsn, and waits until it
// logs both listening addresses.
func startServe(t *testing.T, driver, dsn string) *process {
	t.Helper()
	file := filepath.Join(t.TempDir(), "site.yaml")
	if err := os.WriteFile(file, fmt.Appendf(nil, waitsYAML, driver, dsn), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &process{log: &logtest.Buffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command("nowserving", "serve", "--config", file)
	// GORACE=atexit_sleep_ms=0 comes from TestMain: the daemon's exit
	// is not its time.
	p.cmd.Stderr = p.log
	p.cmd.Stdout = p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("daemon log:\n%s", p.log.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := p.log.String()
		p.protocol = listenAddr(s)
		if m := httpListenRE.FindStringSubmatch(s); m != nil && p.protocol != "" {
			p.http = m[1]
			return p
		}
		select {
		case <-p.exited:
			t.Fatalf("daemon exited: %v; log:\n%s", p.err, s)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon did not listen within 10s; log:\n%s", s)
		}
	}
}

// get returns the status and body of GET path on the daemon's HTTP side.
func (p *process) get(t *testing.T, path string) (int, string) {
	t.Helper()
	hc := http.Client{Timeout: 5 * time.Second}
	r, err := hc.Get("http://" + p.http + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, string(b)
}

// terminate sends SIGTERM and returns how long the daemon took to exit;
// it fails the test unless the exit status is 0.
func (p *process) terminate(t *testing.T, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
	case <-time.After(within):
		t.Fatalf("daemon still running %s after SIGTERM", within)
	}
	took := time.Since(start)
	if p.err != nil {
		t.Errorf("daemon exited after SIGTERM with %v, want status 0", p.err)
	}
	return took
}

// kiosk dials the daemon as kiosk-1 with one attempt per request.
func kiosk(t *testing.T, addr string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr, client.Opts{DeviceID: "kiosk-1", Secret: []byte("test-kiosk-1-secret-0123"),
		Role: wire.RoleKiosk, Site: "clinic", Retries: -1})
	if err != nil {
		t.Fatalf("kiosk dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// take takes a ticket once and returns it, or the daemon's status error.
func take(t *testing.T, c *client.Client) (*wire.Ticket, *wire.StatusError) {
	t.Helper()
	tk, err := c.TakeTicket(t.Context(), "A", 0, client.TicketOpts{})
	if err == nil {
		return tk, nil
	}
	var se *wire.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("take ticket: %v, want a ticket or a status error", err)
	}
	return nil, se
}

// proxiedPostgres returns a fresh PostgreSQL test schema's DSN with its
// host replaced by a proxy.
func proxiedPostgres(t *testing.T) (*dbProxy, string) {
	addr, at := storetest.ServerAddr(t, "postgres", storetest.PostgresDSN(t))
	p := newProxy(t, addr, false)
	return p, at(p.addr)
}

// proxiedMySQL returns a fresh MariaDB test database's DSN with its
// address replaced by a proxy (down: not listening yet).
func proxiedMySQL(t *testing.T, down bool) (*dbProxy, string) {
	cfg, err := mysql.ParseDSN(storetest.MySQLDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, cfg.Addr, down)
	cfg.Addr = p.addr
	cfg.Timeout = 2 * time.Second
	return p, cfg.FormatDSN()
}

// TestHungDatabase: with PostgreSQL or MariaDB hanging mid-run (the proxy frozen), a
// kiosk gets ERROR 0x41 within the store deadline, /readyz answers 503
// within 1 s, and SIGTERM ends the daemon within its grace with status 0.
func TestHungDatabase(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		proxy, dsn := proxiedPostgres(t)
		hungDatabase(t, proxy, "postgres", dsn)
	})
	t.Run("mysql", func(t *testing.T) {
		proxy, dsn := proxiedMySQL(t, false)
		hungDatabase(t, proxy, "mysql", dsn)
	})
}

func hungDatabase(t *testing.T, proxy *dbProxy, driver, dsn string) {
	d := startServe(t, driver, dsn)
	k := kiosk(t, d.protocol)
	if tk, se := take(t, k); se != nil {
		t.Fatalf("before the hang: %v", se)
	} else if tk.Number != "A001" {
		t.Errorf("first ticket %s, want A001", tk.Number)
	}
	// Ready before the hang: the probe's write answers within 1 s, which a
	// loaded machine may miss once just after the start, so it is asked
	// again for a while.
	var code int
	var body string
	if !poll.Within(10*time.Second, 200*time.Millisecond, func() bool { code, body = d.get(t, "/readyz"); return code == 200 }) {
		t.Fatalf("/readyz before the hang: %d %s", code, body)
	}

	proxy.freeze()
	start := time.Now()
	_, se := take(t, k)
	firstErr := time.Since(start)
	if se == nil || se.Code != wire.ErrStoreUnavailable.Code {
		t.Errorf("take ticket with the database hung: %v, want 0x41", se)
	}
	if firstErr > 4*time.Second {
		t.Errorf("first device error after %s, want within the 2s store deadline (and the kiosk's 5s)", firstErr)
	}
	// Asked again until the cached probe result (1 s) is past.
	var ready time.Duration
	poll.Within(5*time.Second, 100*time.Millisecond, func() bool {
		start := time.Now()
		code, body = d.get(t, "/readyz")
		ready = time.Since(start)
		return code != 200
	})
	// Either the probe is still waiting on the hung server, or it has
	// already given up on a fresh connection's connect time-out.
	hung := strings.Contains(body, "store did not answer within 1s") || strings.Contains(body, `"store not answering"`)
	if code != 503 || ready > 1500*time.Millisecond || !hung {
		t.Errorf("/readyz with the database hung: %d after %s, want 503 within 1s: %s", code, ready, body)
	}
	// A request in flight when the signal comes: its transaction waits on
	// the hung database.
	inflight := make(chan struct{})
	go func() {
		defer close(inflight)
		_, _ = k.TakeTicket(context.Background(), "A", 0, client.TicketOpts{})
	}()
	time.Sleep(200 * time.Millisecond)
	took := d.terminate(t, shutdownGrace+2*time.Second)
	if took > shutdownGrace {
		t.Errorf("exit %s after SIGTERM, want within the %s grace", took, shutdownGrace)
	}
	<-inflight
	t.Logf("hung database: first device error (0x41) after %s; /readyz %d in %s; SIGTERM to exit %s (a request in flight)",
		firstErr.Round(time.Millisecond), code, ready.Round(time.Millisecond), took.Round(time.Millisecond))
}

// TestStartWithDatabaseDown: a daemon started while MariaDB cannot be
// reached serves /healthz, says why it is not ready, answers kiosks 0x41,
// and takes tickets once the database is there.
func TestStartWithDatabaseDown(t *testing.T) {
	proxy, dsn := proxiedMySQL(t, true)
	d := startServe(t, "mysql", dsn)

	if code, _ := d.get(t, "/healthz"); code != 200 {
		t.Errorf("/healthz while connecting: %d", code)
	}
	code, body := d.get(t, "/readyz")
	// The body says what a load balancer can act on; the driver's words
	// ("connection refused") are for the log (issue 14). A server that
	// refuses connections is not answering (issue 21).
	if code != 503 || !strings.Contains(body, `"store not answering"`) || strings.Contains(body, "refused") {
		t.Errorf("/readyz while connecting: %d %s", code, body)
	}
	if log := d.log.String(); !strings.Contains(log, "store unavailable, retrying") || !strings.Contains(log, "level=WARN") {
		t.Errorf("no WARN saying why the store is not open; log:\n%s", log)
	}
	k := kiosk(t, d.protocol)
	if _, se := take(t, k); se == nil || se.Code != wire.ErrStoreUnavailable.Code {
		t.Errorf("take ticket while connecting: %v, want 0x41", se)
	}

	proxy.up()
	start := time.Now()
	if !poll.Within(10*time.Second, 100*time.Millisecond, func() bool { code, body = d.get(t, "/readyz"); return code == 200 }) {
		t.Fatalf("not ready 10s after the database came up: %d %s", code, body)
	}
	t.Logf("ready %s after the database came up", time.Since(start).Round(time.Millisecond))
	if tk, se := take(t, k); se != nil || tk.Number != "A001" {
		t.Errorf("take ticket once connected: %v %v, want A001", tk, se)
	}
	d.terminate(t, shutdownGrace)
}

// TestSignalWhileConnecting: SIGTERM while the store cannot be opened (a
// SQLite file in a directory that does not exist yet) ends the daemon at
// once with status 0.
func TestSignalWhileConnecting(t *testing.T) {
	d := startServe(t, "sqlite", filepath.Join(t.TempDir(), "not-yet", "q.db"))
	if code, body := d.get(t, "/readyz"); code != 503 || !strings.Contains(body, `"store unavailable"`) {
		t.Errorf("/readyz while connecting: %d %s", code, body)
	}
	if took := d.terminate(t, 5*time.Second); took > time.Second {
		t.Errorf("exit %s after SIGTERM while connecting, want at once", took)
	}
}

// TestServeIncurableStore: a store error waiting cannot cure (here an
// in-memory SQLite database, refused by the store) still ends serve at
// start, without listening.
func TestServeIncurableStore(t *testing.T) {
	cfg := serveConfig(t)
	cfg.Store.DSN = ":memory:"
	start := time.Now()
	d, err := newDaemon(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err == nil {
		d.close(context.Background())
		t.Fatal("newDaemon accepted an in-memory SQLite store")
	}
	if took := time.Since(start); took > time.Second || !strings.Contains(err.Error(), "need a database file") {
		t.Errorf("newDaemon: %v after %s, want the store's refusal at once", err, took)
	}
}
