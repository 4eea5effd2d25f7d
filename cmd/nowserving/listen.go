package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/daemon"
	"github.com/nowserving/nowserving/metrics"
	"github.com/nowserving/nowserving/notify"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/web"
)

// server is the daemon built from the configuration.
type server struct {
	daemon.Group
	// protocolAddr is the address the protocol listener got.
	protocolAddr net.Addr
	// httpAddr is the address the HTTP listener got; nil when off.
	httpAddr net.Addr
	// appointmentsAddr is the address the appointments API's own listener
	// got; nil without one (listen_appointments.go).
	appointmentsAddr net.Addr
	// tls says whether the protocol listener speaks TLS.
	tls bool
	// live is what a reload changes (reload.go).
	live live
	// reg is the registry /metrics serves.
	reg *prometheus.Registry
}

func (d *server) run(ctx context.Context) error   { return d.Run(ctx) }
func (d *server) close(ctx context.Context) error { return d.Close(ctx) }

// protocolOpts wires the protocol server to the engine, the devices, the
// notify worker (its outbox in the console's devices) and the metrics.
func protocolOpts(cfg *config.Config, eng *queue.Engine, dev *daemon.Devices, nw *notify.Worker, devs []protocol.Device, log *slog.Logger) protocol.Opts {
	return protocol.Opts{
		Engine: eng, Devices: devs, Logger: log,
		Heartbeat: cfg.Listen.Heartbeat, MaxConns: cfg.Listen.MaxConnections,
		MaxPending: cfg.Listen.MaxPending, HandshakeTimeout: cfg.Listen.HandshakeTimeout,
		RateLimit: rateLimit(cfg.Listen.RateLimit), Render: dev.RenderTicket, Reprint: dev.Reprint,
		Health: daemon.Health(daemon.DeviceHealth(dev.Status), daemon.OutboxHealth(nw, time.Now)),
		Print:  dev.PrintTicket,
	}
}

// rateLimit maps listen.rate_limit onto protocol.Opts.RateLimit: 0 there
// means the default, off is negative.
func rateLimit(perDevice float64) float64 {
	if perDevice == 0 {
		return -1
	}
	return perDevice
}

// listenProtocol listens on listen.protocol (with TLS when listen.tls is
// set) and adds the protocol part serving po there.
func (d *server) listenProtocol(ctx context.Context, cfg *config.Config, po protocol.Opts, reg *prometheus.Registry) (net.Listener, error) {
	pm, err := metrics.NewProtocol(reg)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	po.Metrics = pm
	if po.TLSConfig, err = tlsConfig(cfg.Listen.TLS); err != nil {
		return nil, err
	}
	srv, err := protocol.New(po)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Listen.Protocol)
	if err != nil {
		return nil, listenError(cfg.Listen.Protocol, "listen.protocol", err)
	}
	d.protocolAddr = ln.Addr()
	d.tls = po.TLSConfig != nil
	d.live.proto = srv
	d.Parts = append(d.Parts, &daemon.Protocol{Server: srv, Listener: ln})
	return ln, nil
}

// listenError is a failed listen on addr, the value of key; when the
// address is taken (another daemon, often the demo on the same ports) it
// says how to choose another: the key's flag, variable or port 0.
func listenError(addr, key string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		flag := "--" + strings.NewReplacer(".", "-", "_", "-").Replace(key)
		return fmt.Errorf("serve: listen on %s: %w: another process (another nowserving?) holds it; "+
			"give another address with %s HOST:PORT (or %s, or %s in the file; port 0 picks a free one)",
			addr, err, flag, config.EnvName(key), key)
	}
	return fmt.Errorf("serve: listen on %s: %w", addr, err)
}

// listenHTTP listens on listen.http, when set, and adds the web part
// serving the API, the displays, /metrics and /readyz there.
func (d *server) listenHTTP(ctx context.Context, cfg *config.Config, eng *queue.Engine, reg *prometheus.Registry, ps *daemon.PendingStore, log *slog.Logger) error {
	if cfg.Listen.HTTP == "" {
		return nil
	}
	ready := daemon.NewReadiness(ps, probeName(cfg), cfg.Store.Timeout)
	sc := cfg.HTTP.Staff
	people, err := staffService(sc, ps)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	seedDemoAccounts(ctx, sc, ps, log)
	tc, err := tlsConfig(cfg.Listen.HTTPTLS)
	if err != nil {
		return err
	}
	al, err := listenAppointments(ctx, cfg, tc)
	if err != nil {
		return err
	}
	ws, err := web.New(web.Opts{Engine: eng, Registry: reg, Ready: ready.Ready, Tokens: webTokens(cfg), Logger: log,
		Staff: people, TrustedHeader: sc.TrustedHeader.Header, TrustedProxies: sc.TrustedHeader.ProxyPrefixes(),
		Kiosks: kioskDevices(cfg), PublicURL: cfg.HTTP.PublicURL, Print: d.printKiosk,
		SlotCache: cfg.HTTP.SlotCache, MaxSlotReads: cfg.HTTP.MaxSlotReads, MaxBookings: cfg.HTTP.MaxBookings, BookingQueue: cfg.HTTP.BookingQueue,
		MaxRunning: cfg.HTTP.MaxRunning, ReadWait: cfg.HTTP.ReadWait, BookingWait: cfg.HTTP.BookingWait,
		Appointments: addrOf(al), AppointmentConns: cfg.Listen.AppointmentsMaxConnections, AppointmentIdle: cfg.Listen.AppointmentsIdleTimeout})
	if err != nil {
		closeListener(al)
		return fmt.Errorf("serve: %w", err)
	}
	d.live.web = ws
	var lc net.ListenConfig
	hl, err := lc.Listen(ctx, "tcp", cfg.Listen.HTTP)
	if err != nil {
		closeListener(al)
		return listenError(cfg.Listen.HTTP, "listen.http", err)
	}
	if tc != nil {
		hl = tls.NewListener(hl, tc)
	}
	d.httpAddr = hl.Addr()
	if al != nil {
		d.appointmentsAddr = al.Addr()
		d.Parts = append(d.Parts, web.Part{Server: ws, Listener: al, Appointments: true}) // takes requests: stops early
	}
	d.Parts = append(d.Parts, web.Part{Server: ws, Listener: hl}) // takes requests: stops early
	log.Info("listening", "http", hl.Addr().String(), "tls", tc != nil, "appointments", addrOf(al))
	return nil
}

// webTokens maps the configured API clients onto the web server's.
func webTokens(cfg *config.Config) []web.TokenInfo {
	var tokens []web.TokenInfo
	for _, t := range cfg.HTTP.Tokens {
		tokens = append(tokens, web.TokenInfo{Name: t.Name, Token: t.Token, Sites: t.Sites})
	}
	return tokens
}

// protocolDevices maps the configured devices onto the server's.
func protocolDevices(in []config.Device) ([]protocol.Device, error) {
	out := make([]protocol.Device, 0, len(in))
	for _, d := range in {
		r, err := protocol.ParseRole(string(d.Role))
		if err != nil {
			return nil, fmt.Errorf("device %s: %w", d.ID, err)
		}
		out = append(out, protocol.Device{ID: d.ID, Role: r, Site: d.Site, Counter: d.Counter, Secret: []byte(d.Secret), Lang: d.Lang})
	}
	return out, nil
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
