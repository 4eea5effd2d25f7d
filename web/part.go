package web

import (
	"context"
	"errors"
	"net"
)

// Part runs a Server on a listener with the daemon's part lifecycle: Run
// serves until Shutdown and then returns nil.
type Part struct {
	Server   *Server
	Listener net.Listener
}

// Name names the part.
func (p Part) Name() string { return "http" }

// Run serves on the listener; it returns nil after Shutdown.
func (p Part) Run(context.Context) error {
	if err := p.Server.Serve(p.Listener); !errors.Is(err, ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown ends the streams and drains requests within ctx.
func (p Part) Shutdown(ctx context.Context) error { return p.Server.Shutdown(ctx) }
