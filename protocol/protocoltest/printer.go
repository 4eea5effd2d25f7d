package protocoltest

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/nowserving/nowserving/devices"
	"github.com/nowserving/nowserving/queue"
)

// Printer stands in for the devices dispatcher's reprint: its Reprint, the
// server's Opts.Reprint hook, looks the ticket up in Engine as the
// dispatcher does and records each print, or fails as the printer's entry
// in Fail says.
type Printer struct {
	// Engine is where tickets are looked up; set it once the daemon has
	// started, before the first reprint.
	Engine *queue.Engine
	// Fail maps a printer id to the error printing on it gives (wrapped in
	// a *devices.PrintError, as the dispatcher does).
	Fail map[string]error

	mu    sync.Mutex
	calls []string // "site/number/printer"
}

// Reprint prints ticket number of site on printer id.
func (p *Printer) Reprint(ctx context.Context, site, number, id string) error {
	if _, err := p.Engine.Position(ctx, site, number); err != nil {
		return fmt.Errorf("devices: reprint %s: %w", number, err)
	}
	if err := p.Fail[id]; err != nil {
		return &devices.PrintError{Printer: id, Number: number, Err: err}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, site+"/"+number+"/"+id)
	return nil
}

// Printed lists the prints so far, "site/number/printer", space-separated.
func (p *Printer) Printed() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.calls, " ")
}
