package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/spf13/cobra"
)

// pprofPart serves net/http/pprof on a loopback listener of its own (serve
// --pprof ADDR): off by default, never on listen.http, so the profiles are
// not exposed where the API and /metrics are.
type pprofPart struct {
	srv *http.Server
	ln  net.Listener
}

// pprofFlag is serve's --pprof.
func pprofFlag(cmd *cobra.Command) *string {
	return cmd.Flags().String("pprof", "", "serve Go's profiles (net/http/pprof, /debug/pprof/) on ADDR, a loopback address such as 127.0.0.1:6060; off by default")
}

// addPprof adds the pprof part listening on addr; none when addr is empty.
func (d *server) addPprof(ctx context.Context, addr string, log *slog.Logger) error {
	if addr == "" {
		return nil
	}
	p, err := listenPprof(ctx, addr)
	if err != nil {
		return err
	}
	d.Parts = append(d.Parts, p)
	log.Info("listening", "pprof", p.ln.Addr().String())
	return nil
}

// listenPprof listens on addr, which must be a loopback address
// (127.0.0.1:6060, [::1]:0, localhost:6060).
func listenPprof(ctx context.Context, addr string) (*pprofPart, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("serve: --pprof %s: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("serve: --pprof %s: must be a loopback address (127.0.0.1, ::1 or localhost)", addr)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return &pprofPart{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, ln: ln}, nil
}

// Name names the part.
func (p *pprofPart) Name() string { return "pprof" }

// Run serves until Shutdown.
func (p *pprofPart) Run(context.Context) error {
	if err := p.srv.Serve(p.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops serving; a profile being taken is cut short.
func (p *pprofPart) Shutdown(ctx context.Context) error {
	if err := p.srv.Shutdown(ctx); err != nil {
		return p.srv.Close()
	}
	return nil
}
