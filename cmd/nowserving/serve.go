package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
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
	var file, pidFile, pprofAddr *string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the daemon: the device protocol, the engine and the store",
		Long: `serve runs the daemon from --config: it opens the store (embedded SQLite
by default; a database that is down is retried, 1 s doubling to 30 s, while
devices get ERROR 0x41), starts the engine and serves the device protocol on
listen.protocol (msg=listening protocol=HOST:PORT, so port 0 works). SIGINT
or SIGTERM drains and stops within 15 s, exit status 0. SIGHUP (or
nowserving reload) re-reads the file and applies sites, devices, secrets,
tokens, boards and voice live; an invalid file is refused and nothing changes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if *file == "" {
				return errNoConfig
			}
			cfg, err := loadConfig(cmd, *file)
			if err != nil {
				return err
			}
			log := newLogger(cfg.Log)
			d, err := newDaemon(cmd.Context(), cfg, log)
			if err != nil {
				return err
			}
			if err := d.addPprof(cmd.Context(), *pprofAddr, log); err != nil {
				_ = d.close(cmd.Context())
				return err
			}
			if err := writePIDFile(*pidFile); err != nil {
				_ = d.close(cmd.Context())
				return err
			}
			quietStart(cmd.ErrOrStderr(), cfg.Log, d)
			defer removePIDFile(*pidFile)
			stop := d.live.onHangup(cmd.Context(), func() (*config.Config, error) { return loadConfig(cmd, *file) })
			defer stop()
			return d.run(cmd.Context())
		},
	}
	file = configFlags(cmd)
	pidFile = cmd.Flags().String("pid-file", "", "write the daemon's process id to FILE (for nowserving reload --pid-file)")
	pprofAddr = pprofFlag(cmd)
	return cmd
}

// quietStart says once on w that the daemon serves, and where, when the
// log level hides the INFO "listening" lines (rush.yaml logs at warn):
// a daemon that starts in silence looks hung.
func quietStart(w io.Writer, l config.Log, d *server) {
	if l.SlogLevel() <= slog.LevelInfo {
		return
	}
	http := "off"
	if d.httpAddr != nil {
		http = d.httpAddr.String()
	}
	if d.appointmentsAddr != nil {
		http += ", appointments " + d.appointmentsAddr.String()
	}
	fmt.Fprintf(w, "nowserving: serving, protocol %s, http %s (log.level %s: only warnings and errors follow)\n",
		d.protocolAddr, http, l.Level)
}

// errNoConfig is serve's answer to a missing --config: a daemon without
// sites serves nobody.
var errNoConfig = errors.New("serve: give --config FILE, the sites, services, counters and devices to serve (`make run` starts the demo: serve --config testdata/hospital.yaml)")

// storeMetrics measures the store's transactions and counts its failovers
// on reg.
func storeMetrics(ps *daemon.PendingStore, reg *prometheus.Registry) (*metrics.Store, error) {
	mst, err := metrics.NewStore(ps, reg)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if err := metrics.RegisterFailovers(reg, func() (uint64, uint64) { h := ps.Health(); return h.ReadOnly, h.NotAnswering }); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	return mst, nil
}

// newEngine builds the engine over st, and its notifier when the store
// has one; both close before the store, the engine first.
func (d *server) newEngine(cfg *config.Config, st queue.Store, log *slog.Logger) (*queue.Engine, error) {
	eo := queue.Opts{Store: st, Sites: sites(cfg), Batch: cfg.Store.Batch, Committers: committers(cfg.Store), StoreTimeout: cfg.Store.Timeout,
		Name: probeName(cfg), Logger: log}
	if n := follow(cfg.Store, &eo); n != nil {
		d.Closers = append([]daemon.Closer{{Name: "notifier", Close: func(context.Context) error { return n.Close() }}}, d.Closers...)
	}
	eng, err := queue.New(eo)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	// The engine closes before the notifier and the store: prepend.
	d.Closers = append([]daemon.Closer{{Name: "engine", Close: eng.Close}}, d.Closers...)
	return eng, nil
}

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

	reg := metrics.NewRegistry()
	d.reg = reg
	mst, err := storeMetrics(ps, reg)
	if err != nil {
		return nil, err
	}
	eng, err := d.newEngine(cfg, mst, log)
	if err != nil {
		return nil, err
	}

	first, err := buildDevices(cfg, eng, log)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	dev := daemon.NewDevices(first, log)
	if err := metrics.RegisterFollow(reg, eng, time.Now); err != nil {
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
	pg, err := newPurger(cfg, ps, eng, reg, log)
	if err != nil {
		return nil, err
	}
	d.Parts = append(d.Parts, pg)
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
	if cfg.Store.Driver != config.DriverSQLite {
		// One daemon per SQLite file: its devices have nowhere else to go.
		d.Parts = append(d.Parts, daemon.NewReleaser(ps.Health, d.live.proto, cfg.Store.ReleaseAfter, log))
	}
	d.Parts = append(d.Parts, daemon.NewSweeper(eng, sweepEvery, log), newReports(cfg, eng, ps, log), qm, nw, dev) // dev last: boards blank after the rest drained
	d.live.cfg, d.live.eng, d.live.dev, d.live.log = cfg, eng, dev, log
	daemon.LogClosedServices(log, eng)
	log.Info("listening", "protocol", ln.Addr().String(), "tls", d.tls, "devices", len(devs))
	return d, nil
}
