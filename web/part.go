package web

import (
	"context"
	"errors"
	"fmt"
	"net"
)

// Part runs a Server on a listener with the daemon's part lifecycle: Run
// serves until Shutdown and then returns nil. With Appointments it serves
// the appointments API on a listener of its own (ServeAppointments), and
// Shutdown stops only that one; without, the rest (Serve), and Shutdown
// stops both.
type Part struct {
	Server       *Server
	Listener     net.Listener
	Appointments bool
}

// Name names the part.
func (p Part) Name() string {
	if p.Appointments {
		return "appointments"
	}
	return "http"
}

// Run serves on the listener; it returns nil after Shutdown.
func (p Part) Run(context.Context) error {
	serve := p.Server.Serve
	if p.Appointments {
		serve = p.Server.ServeAppointments
	}
	if err := serve(p.Listener); !errors.Is(err, ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown ends the streams and drains requests within ctx.
func (p Part) Shutdown(ctx context.Context) error {
	if !p.Appointments {
		return p.Server.Shutdown(ctx)
	}
	if err := p.Server.appts.srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("web: shutdown the appointments listener: %w", err)
	}
	return nil
}
