// Package protocoltest runs a real daemon for the tests of the protocol
// server, its client, the console and the conformance kit: a SQLite store,
// a queue engine and a protocol server on a loopback port, which can be
// stopped and started again on the same database file and port (NewHQ is
// the one the conformance kit's tests use). It also makes the self-signed
// certificates the TLS tests use.
package protocoltest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/logtest"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// Secret is the secret the tests give device id.
func Secret(id string) []byte { return []byte(id + "-secret-0123456789") }

// Daemon is a daemon on loopback. Set the fields above Store before Start;
// Start fills in the rest.
type Daemon struct {
	T testing.TB
	// Site is the one site the engine serves.
	Site queue.Site
	// Devices are the devices the server knows.
	Devices []protocol.Device
	// Clock is the engine's clock; nil: time.Now.
	Clock func() time.Time
	// Batch is the engine's batch size; 0: 64.
	Batch int
	// StoreTimeout is the engine's store timeout; 0: the engine's
	// default. A test whose transactions read thousands of rows sets
	// more, so that a loaded machine does not fail it.
	StoreTimeout time.Duration
	// ServerOpts, when set, adjusts the server's options.
	ServerOpts func(*protocol.Opts)
	// Wrap, when set, wraps the listener the server serves.
	Wrap func(net.Listener) net.Listener
	// DB is the SQLite database file; New puts one in a temporary folder.
	// Two daemons given the same file share it, as daemons share a server
	// database; set Follow on both so each follows the other's events.
	DB string
	// Follow makes the engine follow other daemons' events (polling the
	// store every 10 ms while subscribers wait).
	Follow bool
	// Addr is where the daemon listens: before the first Start, "" for any
	// loopback port; after it, the port it got, kept by a restart.
	Addr string

	Store  *sqlite.Store
	Engine *queue.Engine
	Server *protocol.Server
	// Served receives what Server.Serve returned.
	Served chan error
}

// New returns a daemon for site and devices, not started, with its
// database in t's temporary folder.
func New(t testing.TB, site queue.Site, devices []protocol.Device) *Daemon {
	return &Daemon{T: t, Site: site, Devices: devices, DB: filepath.Join(t.TempDir(), "q.db")}
}

// Start starts a new daemon for site and devices and stops it when the
// test ends; opts, when not nil, adjusts the server's options.
func Start(t testing.TB, site queue.Site, devices []protocol.Device, opts func(*protocol.Opts)) *Daemon {
	t.Helper()
	d := New(t, site, devices)
	d.ServerOpts = opts
	d.Start()
	t.Cleanup(d.Stop)
	return d
}

// Start opens the store and starts the engine and the server. A database
// file that does not exist yet starts as a copy of a migrated one
// (storetest.MigratedSQLite).
func (d *Daemon) Start() {
	t := d.T
	t.Helper()
	if _, err := os.Stat(d.DB); errors.Is(err, os.ErrNotExist) {
		if err := storetest.MigratedSQLite(d.DB); err != nil {
			t.Fatal(err)
		}
	}
	st, err := sqlite.Open(context.Background(), d.DB, sqlite.Opts{})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	d.Store = st
	clock, batch := d.Clock, d.Batch
	if clock == nil {
		clock = time.Now
	}
	if batch == 0 {
		batch = 64
	}
	d.Engine, err = queue.New(queue.Opts{Store: st, Sites: []queue.Site{d.Site}, Clock: clock, Batch: batch, Committers: 1,
		Follow: d.Follow, PollInterval: 10 * time.Millisecond, StoreTimeout: d.StoreTimeout})
	if err != nil {
		t.Fatalf("new engine: %v", err)
	}
	o := protocol.Opts{Engine: d.Engine, Devices: d.Devices, Logger: logtest.New(), RateLimit: -1}
	if d.ServerOpts != nil {
		d.ServerOpts(&o)
	}
	d.Server, err = protocol.New(o)
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	ln := d.listen()
	d.Addr = ln.Addr().String()
	if d.Wrap != nil {
		ln = d.Wrap(ln)
	}
	d.Served = make(chan error, 1)
	go func() { d.Served <- d.Server.Serve(ln) }()
}

// listen listens on d.Addr, waiting a moment for the port of a stopped
// daemon, which may linger.
func (d *Daemon) listen() net.Listener {
	addr := d.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	for i := 0; ; i++ {
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			return ln
		}
		if i == 50 {
			d.T.Fatalf("listen: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop shuts the daemon down in order: server, engine, store. It does
// nothing on a stopped daemon.
func (d *Daemon) Stop() {
	if d.Server == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.Server.Shutdown(ctx); err != nil {
		d.T.Errorf("shutdown: %v", err)
	}
	if err := <-d.Served; !errors.Is(err, protocol.ErrServerClosed) {
		d.T.Errorf("Serve returned %v, want ErrServerClosed", err)
	}
	if err := d.Engine.Close(ctx); err != nil {
		d.T.Errorf("close engine: %v", err)
	}
	if err := d.Store.Close(); err != nil {
		d.T.Errorf("close store: %v", err)
	}
	d.Server = nil
}

// Restart stops the daemon and starts a new one on the same database file
// and port.
func (d *Daemon) Restart() {
	d.Stop()
	d.Start()
}

// SelfSigned returns a server certificate for 127.0.0.1 and a pool that
// trusts it.
func SelfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "nowserving test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, pool
}
