package main

import (
	"context"
	"crypto/tls"
	"net"

	"github.com/nowserving/nowserving/config"
)

// listenAppointments listens on listen.appointments, with listen.http_tls's
// TLS when tc is set; nil when the appointments API has no listener of
// its own (it is then served on listen.http).
func listenAppointments(ctx context.Context, cfg *config.Config, tc *tls.Config) (net.Listener, error) {
	if cfg.Listen.Appointments == "" {
		return nil, nil
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Listen.Appointments)
	if err != nil {
		return nil, listenError(cfg.Listen.Appointments, "listen.appointments", err)
	}
	if tc != nil {
		ln = tls.NewListener(ln, tc)
	}
	return ln, nil
}

// addrOf is ln's address, "" for none.
func addrOf(ln net.Listener) string {
	if ln == nil {
		return ""
	}
	return ln.Addr().String()
}

// closeListener closes ln, if any, that no part will serve.
func closeListener(ln net.Listener) {
	if ln != nil {
		ln.Close()
	}
}
