package tui

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

var _ Conn = (*client.Client)(nil)

// SiteSession says how RunSite connects one site.
type SiteSession struct {
	// Index is the site's index in Opts.Sites.
	Index int
	// Site is the site code; empty: the device's own site.
	Site string
	// Dial connects to the daemon. It must pass onState as the client's
	// Opts.OnState so that the header follows the connection.
	Dial func(ctx context.Context, onState func(client.State, error)) (*client.Client, error)
	// Send delivers a message to the program (tea.Program.Send).
	Send func(tea.Msg)
	// MinBackoff and MaxBackoff bound the pause between first dials
	// (defaults: the client's).
	MinBackoff, MaxBackoff time.Duration
}

// RunSite is the adapter between one site's connection and the model: it
// dials (again and again, with back-off, until the daemon answers or refuses
// the device), hands the model the connection (ConnMsg), a first snapshot
// (with the day's last events), then every update of the subscription as SnapshotMsg
// and EventMsg; connection changes become StateMsg. The client reconnects by
// itself and resumes the subscription from the last version it delivered.
// RunSite returns when ctx ends or the daemon refuses the device or the
// subscription for good.
func RunSite(ctx context.Context, o SiteSession) error {
	o.MinBackoff = positive.Or(o.MinBackoff, client.DefaultMinBackoff)
	o.MaxBackoff = positive.Or(o.MaxBackoff, client.DefaultMaxBackoff)
	rl := &relay{index: o.Index, send: o.Send, wake: make(chan struct{}, 1)}
	go rl.run(ctx)

	var c *client.Client
	for attempt := 0; ; attempt++ {
		var err error
		c, err = o.Dial(ctx, rl.onState)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, wire.ErrAuthFailed) {
			o.Send(StateMsg{Site: o.Index, State: LinkAuthRefused, Err: err})
			return fmt.Errorf("tui: connect: %w", err)
		}
		o.Send(StateMsg{Site: o.Index, State: LinkConnecting, Attempt: attempt + 1, Err: err})
		t := time.NewTimer(client.Backoff(attempt, o.MinBackoff, o.MaxBackoff))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	defer c.Close()
	w := c.Welcome()
	code := o.Site
	if code == "" {
		code = w.Site
	}
	o.Send(ConnMsg{Site: o.Index, Conn: c, Code: code, Day: w.ServiceDay})
	rl.onState(client.StateConnected, nil)

	// The site's state first, with the day's last events (the SNAPSHOT's
	// Recent), then only the events after it: a console that starts late
	// in a busy day never asks for the day one event at a time.
	var from uint64
	if snap, err := wholeSnapshot(ctx, c, code); err == nil {
		o.Send(SnapshotMsg{Site: o.Index, Snapshot: snap})
		from = snap.Version
	}
	sub, err := c.Subscribe(ctx, client.Filter{FromVersion: from, Site: code})
	if err != nil {
		o.Send(StateMsg{Site: o.Index, State: LinkClosed, Err: err})
		return fmt.Errorf("tui: subscribe to %s: %w", code, err)
	}
	for u := range sub.Updates() {
		switch {
		case u.Snapshot != nil:
			snap := u.Snapshot
			if snap.ResourceNext != "" {
				// A gap's SNAPSHOT is a first page: the console counts
				// every resource.
				if whole, err := wholeSnapshot(ctx, c, code); err == nil && whole.Version >= snap.Version {
					snap = whole
				}
			}
			o.Send(SnapshotMsg{Site: o.Index, Snapshot: snap})
		case u.Event != nil:
			o.Send(EventMsg{Site: o.Index, Event: u.Event})
		}
	}
	if err := sub.Err(); err != nil && ctx.Err() == nil {
		o.Send(StateMsg{Site: o.Index, State: LinkClosed, Err: err})
		return fmt.Errorf("tui: subscription of %s: %w", code, err)
	}
	return ctx.Err()
}

// relay turns the client's state callbacks (which must not block) into
// StateMsg values sent from its own goroutine, keeping only the latest.
type relay struct {
	index int
	send  func(tea.Msg)
	wake  chan struct{}

	mu      sync.Mutex
	latest  StateMsg
	pending bool
}

func (r *relay) onState(s client.State, err error) {
	r.mu.Lock()
	switch s {
	case client.StateConnected:
		r.latest = StateMsg{Site: r.index, State: LinkConnected}
	case client.StateReconnecting:
		attempt := 0
		if r.latest.State == LinkReconnecting || r.latest.State == LinkAuthRefused {
			attempt = r.latest.Attempt + 1
		}
		r.latest = StateMsg{Site: r.index, State: LinkReconnecting, Attempt: attempt, Err: err}
	case client.StateClosed:
		r.latest = StateMsg{Site: r.index, State: LinkClosed}
	}
	r.pending = true
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *relay) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		r.mu.Lock()
		msg, ok := r.latest, r.pending
		r.pending = false
		r.mu.Unlock()
		if ok {
			r.send(msg)
		}
	}
}

// wholeSnapshot asks for the SNAPSHOT of site with every resource: the
// first page and the pages after it (PROTOCOL.md section 7). A page at
// another version than the first starts the walk over, three times at
// most; then the pages are taken as they are.
func wholeSnapshot(ctx context.Context, c *client.Client, site string) (*wire.Snapshot, error) {
	var snap *wire.Snapshot
	for try := 0; try < 3; try++ {
		ans, err := c.Do(ctx, &wire.Status{Site: site})
		if err != nil {
			return nil, err
		}
		first, ok := ans.(*wire.Snapshot)
		if !ok {
			return nil, fmt.Errorf("tui: STATUS of %s answered %s", site, ans.Type())
		}
		snap = first
		same := true
		for next := first.ResourceNext; next != ""; {
			ans, err := c.Do(ctx, &wire.Status{Site: site, ResourceAfter: next})
			if err != nil {
				return nil, err
			}
			page, ok := ans.(*wire.Snapshot)
			if !ok {
				return nil, fmt.Errorf("tui: STATUS of %s answered %s", site, ans.Type())
			}
			same = same && page.Version == first.Version
			snap.Resources = append(snap.Resources, page.Resources...)
			next = page.ResourceNext
		}
		snap.ResourceNext = ""
		if same {
			break
		}
	}
	return snap, nil
}
