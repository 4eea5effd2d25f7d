package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
)

// DisplayOpts say which events a display follows.
type DisplayOpts struct {
	From     *uint64  // replay the events after this version first; nil: from now
	Count    int      // stop after this many events; 0: never
	Counters []string // only events of these counters
	Services []string // only events of these services
	Snapshot bool     // print the state of the site first
	Wait     bool     // wait for the daemon to come up instead of failing
}

// Display subscribes to the site's events and writes one line per event
// to out until ctx ends (or Count events); connection news goes to errw.
// It follows the daemon through reconnections.
func (e *Env) Display(ctx context.Context, o DisplayOpts, out, errw io.Writer) error {
	d, err := e.Device("", wire.RoleDisplay, wire.RoleConsole, wire.RoleKeypad)
	if err != nil {
		return err
	}
	c, err := e.dialWaiting(ctx, d, o.Wait, errw)
	if err != nil || c == nil {
		return err
	}
	defer c.Close()
	filter := client.Filter{Services: o.Services, Snapshot: o.Snapshot}
	for _, id := range o.Counters {
		n, err := CounterNum(id)
		if err != nil {
			return err
		}
		filter.Counters = append(filter.Counters, n)
	}
	filter.FromVersion = c.Welcome().Version
	if o.From != nil {
		filter.FromVersion = *o.From
	}
	s, err := c.Subscribe(ctx, filter)
	if err != nil {
		return e.Explain(err, d)
	}
	defer s.Close()
	w := c.Welcome()
	fmt.Fprintf(errw, "watching site %s (service day %s) after v%d; Ctrl-C to stop\n", w.Site, w.ServiceDay, filter.FromVersion)
	n := 0
	for u := range s.Updates() {
		if u.Snapshot != nil {
			fmt.Fprint(out, SnapshotText(u.Snapshot))
			continue
		}
		fmt.Fprintln(out, EventLine(u.Event))
		if n++; o.Count > 0 && n >= o.Count {
			return nil
		}
	}
	if err := s.Err(); err != nil {
		return e.Explain(err, d)
	}
	return nil // interrupted
}

// dialWaiting dials as d, saying on errw when the connection is lost and
// back; with wait it retries until the daemon answers (a board that boots
// first), and returns nil, nil when ctx ends first.
func (e *Env) dialWaiting(ctx context.Context, d Device, wait bool, errw io.Writer) (*client.Client, error) {
	o := e.ClientOpts(d)
	last := "" // say each reason once, not at every redial
	o.OnState = func(s client.State, err error) {
		switch s {
		case client.StateReconnecting:
			if msg := e.Reason(err, d); err != nil && msg != last {
				last = msg
				fmt.Fprintf(errw, "connection lost (%s), reconnecting...\n", msg)
			}
		case client.StateConnected:
			last = ""
			fmt.Fprintln(errw, "reconnected")
		}
	}
	c, err := e.Dial(ctx, d, o)
	for attempt := 0; wait && (errors.Is(err, client.ErrUnreachable) || cutShort(err)); attempt++ {
		if attempt == 0 {
			fmt.Fprintf(errw, "waiting for the daemon at %s...\n", e.Addr)
		}
		if cutShort(err) && attempt < 3 {
			// A daemon dying or starting as we dialled; a daemon that
			// keeps closing the handshake (TLS expected?) is named.
			fmt.Fprintf(errw, "the daemon closed the handshake (%s), trying again...\n", e.Reason(err, d))
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(client.Backoff(attempt, 200*time.Millisecond, 2*time.Second)):
		}
		c, err = e.Dial(ctx, d, o)
	}
	return c, err
}

// cutShort reports a handshake the connection ended under (reset, or
// closed before the answer): the daemon was killed or restarted meanwhile.
func cutShort(err error) bool {
	return errors.Is(err, client.ErrHandshake) &&
		(errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, wire.ErrTruncated))
}
