package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/metrics"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/web"
)

// readiness is /readyz's check: the store is open, its schema is the
// newest this binary embeds, and it can write now (sqlstore.Store.Probe).
// Both listeners are open before the HTTP server serves, so "listeners up"
// holds whenever /readyz answers. One probe runs at a time, with the store
// deadline and detached from the request that started it, and its result
// is kept for readyTTL: a load balancer polling /readyz adds at most one
// small write per readyTTL, and never holds SQLite's one writer longer
// than the store deadline.
type readiness struct {
	ps      *pendingStore
	daemon  string        // the probe's row in the health table
	timeout time.Duration // the store deadline

	mu      sync.Mutex
	at      time.Time // when the last probe ended
	err     error     // its result
	running chan struct{}
}

// readyTTL is how long a probe's result answers /readyz.
const readyTTL = time.Second

// Ready reports whether the daemon can serve; it returns when ctx ends
// even if the probe has not.
func (r *readiness) Ready(ctx context.Context) error {
	if _, err := r.ps.store(); err != nil {
		return err
	}
	r.mu.Lock()
	if r.running == nil && (r.at.IsZero() || time.Since(r.at) >= readyTTL) {
		r.running = make(chan struct{})
		go r.probe(r.running)
	}
	wait := r.running
	err := r.err
	r.mu.Unlock()
	if wait == nil {
		return err
	}
	select {
	case <-wait:
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.err
	case <-ctx.Done():
		return fmt.Errorf("store did not answer within %s", web.ReadyTimeout)
	}
}

func (r *readiness) probe(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	err := r.check(ctx)
	r.mu.Lock()
	r.at, r.err, r.running = time.Now(), err, nil
	r.mu.Unlock()
	close(done)
}

func (r *readiness) check(ctx context.Context) error {
	st, err := r.ps.store()
	if err != nil {
		return err
	}
	if err := st.CheckSchema(ctx); err != nil {
		return err
	}
	return st.Probe(ctx, r.daemon)
}

// probeName names this daemon's row of the health table: its host and
// configured protocol address, stable across restarts.
func probeName(cfg *config.Config) string {
	host, err := os.Hostname()
	if err != nil {
		host = "unknown-host"
	}
	return host + " " + cfg.Listen.Protocol
}

// shutdownGrace bounds the whole ordered shutdown after a signal.
const shutdownGrace = 15 * time.Second

func newServeCmd() *cobra.Command {
	var file *string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon: the device protocol, the engine and the store",
		Long: `serve runs the nowserving daemon from the configuration: it opens the store
(embedded SQLite by default), starts the queue engine and serves the device
protocol on listen.protocol (TLS when listen.tls is set). It logs
msg=listening protocol=HOST:PORT once it accepts connections, so port 0 can
be used. A database that is down at start does not stop it: it serves
(devices get ERROR 0x41, /readyz says why) while it retries opening the
store, 1 s doubling to 30 s. SIGINT or SIGTERM shuts it down in order:
refuse new requests, drain those in flight, close the engine, close the
store, all within 15 s whatever the database does (what does not finish is
abandoned, logged at WARN); the exit status is then 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(cmd, *file)
			if err != nil {
				return err
			}
			log := newLogger(cfg.Log)
			d, err := newDaemon(cmd.Context(), cfg, log)
			if err != nil {
				return err
			}
			return d.run(cmd.Context())
		},
	}
	file = configFlags(cmd)
	return cmd
}

// part is one long-running piece of the daemon (the protocol server, the
// sweeper, later the HTTP server and the device dispatcher). Run blocks
// until the part stops and returns nil after Shutdown; Shutdown stops it,
// draining what is in flight within ctx.
type part interface {
	Name() string
	Run(ctx context.Context) error
	Shutdown(ctx context.Context) error
}

// daemon runs its parts together and stops them in order.
type daemon struct {
	log *slog.Logger
	// parts are started together and shut down in list order: the ones
	// that take requests first, so nothing new arrives while the rest
	// drain.
	parts []part
	// closers run after every part stopped, in order (engine, then store).
	closers []closer
	// grace bounds the shutdown.
	grace time.Duration
	// protocolAddr is the address the protocol listener got.
	protocolAddr net.Addr
	// httpAddr is the address the HTTP listener got; nil when off.
	httpAddr net.Addr
}

type closer struct {
	name string
	fn   func(ctx context.Context) error
}

// startWait is how long newDaemon waits for the first attempt to open the
// store before it serves anyway (a database that hangs at start): devices
// get ERROR 0x41 and /readyz says why until the store opens.
const startWait = 5 * time.Second

// newDaemon starts opening the store, starts the engine and listens; run
// serves. A store that is unavailable (the database is down or does not
// answer) does not stop it: the daemon serves while a connector retries
// with backoff, and the engine's transactions fail as unavailable until
// the store opens. An error retrying cannot cure (a bad DSN, refused
// credentials, a failed migration) on the first attempt is returned. On
// error everything opened so far is closed.
func newDaemon(ctx context.Context, cfg *config.Config, log *slog.Logger) (_ *daemon, err error) {
	d := &daemon{log: log, grace: shutdownGrace}
	ps := &pendingStore{}
	d.closers = append(d.closers, closer{"store", func(context.Context) error { return ps.Close() }})
	conn := startConnector(cfg.Store, log, ps)
	defer func() {
		if err != nil {
			conn.stop()
			<-conn.done
			_ = d.close(context.Background())
		}
	}()
	wait := time.NewTimer(startWait)
	select {
	case <-conn.first:
	case <-wait.C:
	case <-ctx.Done():
	}
	wait.Stop()
	select {
	case <-conn.done:
		if conn.err != nil {
			return nil, fmt.Errorf("serve: %w", conn.err)
		}
	default:
		_, why := ps.store()
		log.Warn("serving while the store connects: devices get ERROR 0x41 until it opens", "driver", string(cfg.Store.Driver), "err", why)
	}
	d.parts = append(d.parts, conn) // stop connecting first

	committers, poll := engineShape(cfg.Store.Driver)
	reg := metrics.NewRegistry()
	mst, err := metrics.NewStore(ps, reg)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	eo := queue.Opts{Store: mst, Sites: sites(cfg), Batch: cfg.Store.Batch, Committers: committers, StoreTimeout: cfg.Store.Timeout, Logger: log}
	if poll {
		eo.PollInterval = 500 * time.Millisecond
	}
	eng, err := queue.New(eo)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	// The engine closes before the store: prepend.
	d.closers = append([]closer{{"engine", eng.Close}}, d.closers...)

	dev, err := buildDevices(cfg, eng, log)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if err := metrics.RegisterDevices(reg, deviceSources(dev)); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}

	devs, err := protocolDevices(cfg.Devices)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	qm, err := metrics.NewQueue(metrics.QueueOpts{Engine: eng, Registry: reg, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	pm, err := metrics.NewProtocol(reg)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	po := protocol.Opts{
		Engine: eng, Devices: devs, Logger: log, Metrics: pm,
		Heartbeat: cfg.Listen.Heartbeat, MaxConns: cfg.Listen.MaxConnections,
		MaxPending: cfg.Listen.MaxPending, HandshakeTimeout: cfg.Listen.HandshakeTimeout,
		Render: dev.RenderTicket, Reprint: dev.Reprint, Health: deviceHealth(dev),
		Print: func(ctx context.Context, device string, t queue.Ticket, p queue.Position) error {
			if !dev.HasPrinter(device) {
				return nil
			}
			return dev.PrintTicket(ctx, device, t, p)
		},
	}
	if cfg.Listen.TLS.Enabled() {
		cert, err := tls.LoadX509KeyPair(cfg.Listen.TLS.Cert, cfg.Listen.TLS.Key)
		if err != nil {
			return nil, fmt.Errorf("serve: load TLS key pair: %w", err)
		}
		po.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	srv, err := protocol.New(po)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Listen.Protocol)
	if err != nil {
		return nil, fmt.Errorf("serve: listen on %s: %w", cfg.Listen.Protocol, err)
	}
	defer func() {
		if err != nil {
			ln.Close() // the protocol part never ran to close it
		}
	}()
	d.protocolAddr = ln.Addr()
	d.parts = append(d.parts, &protocolPart{srv: srv, ln: ln})
	if cfg.Listen.HTTP != "" {
		langs := map[string][]string{}
		for _, s := range cfg.Sites {
			langs[s.ID] = s.Languages
		}
		var tokens []web.TokenInfo
		for _, t := range cfg.HTTP.Tokens {
			tokens = append(tokens, web.TokenInfo{Name: t.Name, Token: t.Token, Sites: t.Sites})
		}
		ws, err := web.New(web.Opts{Engine: eng, Registry: reg, Ready: (&readiness{ps: ps, daemon: probeName(cfg), timeout: cfg.Store.Timeout}).Ready, Languages: langs, Tokens: tokens, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
		hl, err := lc.Listen(ctx, "tcp", cfg.Listen.HTTP)
		if err != nil {
			return nil, fmt.Errorf("serve: listen on %s: %w", cfg.Listen.HTTP, err)
		}
		d.httpAddr = hl.Addr()
		d.parts = append(d.parts, web.Part{Server: ws, Listener: hl}) // takes requests: stops early
		log.Info("listening", "http", hl.Addr().String())
	}
	d.parts = append(d.parts, newSweeper(eng, sweepEvery, log), qm, dev) // dev last: boards blank after the rest drained
	log.Info("listening", "protocol", ln.Addr().String(), "tls", po.TLSConfig != nil, "devices", len(devs))
	return d, nil
}

// run runs every part until ctx ends or one fails, then shuts them down in
// order and closes the engine and the store, all within one grace period
// from the signal. Whatever does not finish in time (a part, the engine
// waiting on a transaction a hung database holds, the store waiting on its
// connections) is abandoned and logged at WARN: the process exits within
// the grace whatever the database does. run returns nil after a
// shutdown ctx asked for, even when something was abandoned, and an error
// when a part failed.
func (d *daemon) run(ctx context.Context) error {
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	failed := make(chan error, len(d.parts))
	var running sync.WaitGroup
	for _, p := range d.parts {
		running.Add(1)
		go func() {
			defer running.Done()
			if err := p.Run(rctx); err != nil {
				failed <- fmt.Errorf("serve: %s: %w", p.Name(), err)
				stop()
			}
		}()
	}
	<-rctx.Done()
	d.log.Info("shutting down", "grace_s", d.grace.Seconds())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.grace)
	defer cancel()
	var abandoned error
	for _, p := range d.parts {
		if err := bounded(sctx, p.Shutdown); err != nil {
			d.log.Warn("shutdown", "part", p.Name(), "err", err)
			abandoned = errors.Join(abandoned, fmt.Errorf("shut down %s: %w", p.Name(), err))
		}
	}
	if err := bounded(sctx, func(context.Context) error { running.Wait(); return nil }); err != nil {
		d.log.Warn("shutdown: parts still running", "err", err)
		abandoned = errors.Join(abandoned, fmt.Errorf("wait for parts: %w", err))
	}
	if err := d.close(sctx); err != nil {
		abandoned = errors.Join(abandoned, err)
	}
	var errs error
	for len(failed) > 0 {
		errs = errors.Join(errs, <-failed)
	}
	if errs != nil {
		return errors.Join(errs, abandoned)
	}
	if abandoned != nil {
		d.log.Warn("stopped, abandoning what did not finish within the grace", "err", abandoned)
		return nil
	}
	d.log.Info("stopped")
	return nil
}

// close runs the closers in order, each abandoned when ctx ends first, and
// logs each failure at WARN.
func (d *daemon) close(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.grace)
		defer cancel()
	}
	var errs error
	for _, c := range d.closers {
		if err := bounded(ctx, c.fn); err != nil {
			d.log.Warn("shutdown: close", "part", c.name, "err", err)
			errs = errors.Join(errs, fmt.Errorf("serve: close %s: %w", c.name, err))
		}
	}
	d.closers = nil
	return errs
}

// bounded runs fn and waits for it until ctx ends; then fn is abandoned,
// left to finish (or not) on its own.
func bounded(ctx context.Context, fn func(ctx context.Context) error) error {
	res := make(chan error, 1)
	go func() { res <- fn(ctx) }()
	select {
	case err := <-res:
		return err
	case <-ctx.Done():
		return fmt.Errorf("abandoned: %w", ctx.Err())
	}
}

// protocolDevices maps the configured devices onto the server's.
func protocolDevices(in []config.Device) ([]protocol.Device, error) {
	out := make([]protocol.Device, 0, len(in))
	for _, d := range in {
		r, err := protocol.ParseRole(string(d.Role))
		if err != nil {
			return nil, fmt.Errorf("device %s: %w", d.ID, err)
		}
		out = append(out, protocol.Device{ID: d.ID, Role: r, Site: d.Site, Counter: d.Counter, Secret: []byte(d.Secret)})
	}
	return out, nil
}

// protocolPart serves the device protocol on one listener.
type protocolPart struct {
	srv *protocol.Server
	ln  net.Listener
}

func (p *protocolPart) Name() string { return "protocol" }

func (p *protocolPart) Run(context.Context) error {
	if err := p.srv.Serve(p.ln); !errors.Is(err, protocol.ErrServerClosed) {
		return err
	}
	return nil
}

func (p *protocolPart) Shutdown(ctx context.Context) error { return p.srv.Shutdown(ctx) }

// sweeper expires past days and applies call time-outs every few seconds.
type sweeper struct {
	eng   *queue.Engine
	every time.Duration
	log   *slog.Logger
	stop  chan struct{}
	done  chan struct{}
}

func newSweeper(eng *queue.Engine, every time.Duration, log *slog.Logger) *sweeper {
	return &sweeper{eng: eng, every: every, log: log, stop: make(chan struct{}), done: make(chan struct{})}
}

func (s *sweeper) Name() string { return "sweeper" }

func (s *sweeper) Run(ctx context.Context) error {
	defer close(s.done)
	tk := time.NewTicker(s.every)
	defer tk.Stop()
	for {
		select {
		case <-s.stop:
			return nil
		case <-ctx.Done():
			return nil
		case <-tk.C:
		}
		sctx, cancel := context.WithTimeout(ctx, s.every)
		n, err := s.eng.Sweep(sctx)
		cancel()
		switch {
		case errors.Is(err, queue.ErrClosed) || errors.Is(err, context.Canceled):
			return nil
		case err != nil:
			s.log.Warn("sweep failed", "err", err)
		case n > 0:
			s.log.Info("swept tickets", "moved", n)
		}
	}
}

func (s *sweeper) Shutdown(ctx context.Context) error {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
