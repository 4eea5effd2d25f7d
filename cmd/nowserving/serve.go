package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/metrics"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
	"github.com/nowserving/nowserving/web"
)

// storeReady is /readyz: the store answers and its schema is the newest
// this binary embeds. Both listeners are open before the HTTP server
// serves, so "listeners up" holds whenever /readyz answers.
func storeReady(st *sqlstore.Store) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		v, err := st.Version(ctx)
		if err != nil {
			return err
		}
		ms, err := sqlstore.Migrations(st.Dialect().Migrations)
		if err != nil {
			return err
		}
		if n := len(ms); n > 0 && v < ms[n-1].Version {
			return fmt.Errorf("store schema at version %d, this binary wants %d", v, ms[n-1].Version)
		}
		return nil
	}
}

func init() { commands = append(commands, newServeCmd) }

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
be used. SIGINT or SIGTERM shuts it down in order: refuse new requests,
drain those in flight, close the engine, close the store.`,
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

// newDaemon opens the store, starts the engine and listens; run serves.
// On error everything opened so far is closed.
func newDaemon(ctx context.Context, cfg *config.Config, log *slog.Logger) (_ *daemon, err error) {
	d := &daemon{log: log, grace: shutdownGrace}
	defer func() {
		if err != nil {
			_ = d.close()
		}
	}()
	st, err := openStore(ctx, cfg.Store, log, true)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	log.Info("store opened", "driver", string(cfg.Store.Driver))
	d.closers = append(d.closers, closer{"store", func(context.Context) error { return st.Close() }})

	committers, poll := engineShape(cfg.Store.Driver)
	reg := metrics.NewRegistry()
	mst, err := metrics.NewStore(st, reg)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	eo := queue.Opts{Store: mst, Sites: sites(cfg), Batch: cfg.Store.Batch, Committers: committers, Logger: log}
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
		ws, err := web.New(web.Opts{Engine: eng, Registry: reg, Ready: storeReady(st), Languages: langs, Tokens: tokens, Logger: log})
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
// order within the grace period and closes the engine and the store.
func (d *daemon) run(ctx context.Context) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, p := range d.parts {
		g.Go(func() error {
			if err := p.Run(gctx); err != nil {
				return fmt.Errorf("serve: %s: %w", p.Name(), err)
			}
			return nil
		})
	}
	var shutErr error
	g.Go(func() error {
		<-gctx.Done()
		d.log.Info("shutting down", "grace_s", d.grace.Seconds())
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.grace)
		defer cancel()
		for _, p := range d.parts {
			if err := p.Shutdown(sctx); err != nil {
				d.log.Warn("shutdown", "part", p.Name(), "err", err)
				shutErr = errors.Join(shutErr, fmt.Errorf("serve: shut down %s: %w", p.Name(), err))
			}
		}
		return nil
	})
	err := g.Wait()
	if cerr := d.close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err == nil && shutErr != nil {
		err = shutErr
	}
	if err == nil {
		d.log.Info("stopped")
	}
	return err
}

// close runs the closers in order within the grace period.
func (d *daemon) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), d.grace)
	defer cancel()
	var errs error
	for _, c := range d.closers {
		if err := c.fn(ctx); err != nil {
			errs = errors.Join(errs, fmt.Errorf("serve: close %s: %w", c.name, err))
		}
	}
	d.closers = nil
	return errs
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
