package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/daemon"
	"github.com/nowserving/nowserving/metrics"
	"github.com/nowserving/nowserving/notify"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// shutdownGrace bounds the whole ordered shutdown after a signal.
const shutdownGrace = 15 * time.Second

// sweepEvery is how often the daemon expires past days and applies call
// time-outs.
const sweepEvery = 5 * time.Second

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

// server is the daemon built from the configuration.
type server struct {
	daemon.Group
	// protocolAddr is the address the protocol listener got.
	protocolAddr net.Addr
	// httpAddr is the address the HTTP listener got; nil when off.
	httpAddr net.Addr
	// tls says whether the protocol listener speaks TLS.
	tls bool
}

func (d *server) run(ctx context.Context) error   { return d.Run(ctx) }
func (d *server) close(ctx context.Context) error { return d.Close(ctx) }

// newDaemon starts opening the store, starts the engine and listens; run
// serves. A store that is unavailable (the database is down or does not
// answer) does not stop it: the daemon serves while a connector retries
// with backoff, and the engine's transactions fail as unavailable until
// the store opens. An error retrying cannot cure (a bad DSN, refused
// credentials, a failed migration) on the first attempt is returned. On
// error everything opened so far is closed.
func newDaemon(ctx context.Context, cfg *config.Config, log *slog.Logger) (_ *server, err error) {
	d := &server{Group: daemon.Group{Logger: log, Grace: shutdownGrace}}
	ps := &daemon.PendingStore{}
	d.Closers = append(d.Closers, daemon.Closer{Name: "store", Close: func(context.Context) error { return ps.Close() }})
	conn := daemon.Connect(ps, string(cfg.Store.Driver), func(ctx context.Context) (*sqlstore.Store, error) {
		return openStore(ctx, cfg.Store, log, true, notify.Routes(notifyReceivers(cfg.Notify))...)
	}, log)
	defer func() {
		if err != nil {
			conn.Stop()
			<-conn.Done()
			_ = d.close(context.Background())
		}
	}()
	if err := awaitStore(ctx, conn, ps, cfg.Store.Driver, log); err != nil {
		return nil, err
	}
	d.Parts = append(d.Parts, conn) // stop connecting first

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
	d.Closers = append([]daemon.Closer{{Name: "engine", Close: eng.Close}}, d.Closers...)

	dev, err := buildDevices(cfg, eng, log)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if err := metrics.RegisterDevices(reg, daemon.DeviceSources(dev.Status)); err != nil {
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
	nw, err := newNotifier(cfg.Notify, ps, reg, log)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	ln, err := d.listenProtocol(ctx, cfg, protocolOpts(cfg, eng, dev, nw, devs, log), reg)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			ln.Close() // the protocol part never ran to close it
		}
	}()
	if err := d.listenHTTP(ctx, cfg, eng, reg, ps, log); err != nil {
		return nil, err
	}
	d.Parts = append(d.Parts, daemon.NewSweeper(eng, sweepEvery, log), qm, nw, dev) // dev last: boards blank after the rest drained
	log.Info("listening", "protocol", ln.Addr().String(), "tls", d.tls, "devices", len(devs))
	return d, nil
}
