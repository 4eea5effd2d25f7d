package load

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/view"
)

// Checkpoint is the day paused (DayOpts.Checkpoints): nothing moves until
// AtCheckpoint returns.
type Checkpoint struct {
	Issued  int64  // tickets issued so far
	End     bool   // the day is over: every ticket issued and handled
	Version uint64 // the site's version at the pause
	// Site is the daemon's picture at the pause (its STATUS snapshot).
	Site *view.Site
	// Calls are the day's calls as the first console read them from the
	// event log, in order: "number counter" (e.g. "A00042 7").
	Calls []string
	// Status is each ticket's status after the last event the first
	// console read, by number.
	Status map[string]queue.Status
	// Consoles are the consoles attached, caught up with Version and
	// compared with Site; Hall the display's stream (with DayOpts.Hall).
	Consoles []ConsoleResult
	Hall     *HallResult
}

// OK reports whether every console and the display equal the daemon and
// none lost its connection; else it says what is wrong.
func (c *Checkpoint) OK() (bool, string) {
	var bad []string
	for i, cr := range c.Consoles {
		if !cr.Matches {
			bad = append(bad, fmt.Sprintf("console %d: %s", i+1, cr.Diff))
		}
		if cr.Lost > 0 {
			bad = append(bad, fmt.Sprintf("console %d lost its connection %d times", i+1, cr.Lost))
		}
	}
	if h := c.Hall; h != nil {
		if !h.Matches {
			bad = append(bad, "display: "+h.Diff)
		}
		if h.Lost > 0 {
			bad = append(bad, fmt.Sprintf("display lost its connection %d times", h.Lost))
		}
	}
	return len(bad) == 0, strings.Join(bad, "; ")
}

// pause is the checkpoint at n tickets issued: it holds the gate, so the
// kiosks and counters wait, compares the consoles and the display with the
// daemon, writes a line and runs DayOpts.AtCheckpoint. An error ends the
// day.
func (d *day) pause(ctx context.Context, n int64) {
	d.gate.Lock()
	defer d.gate.Unlock()
	if d.cpErr != nil || ctx.Err() != nil {
		return
	}
	err := d.joinSecond(ctx, false)
	var cp *Checkpoint
	if err == nil {
		cp, err = d.compare(ctx)
	}
	if err == nil {
		cp.Issued = n
		ok, why := cp.OK()
		if ok {
			why = "consoles and display equal the daemon"
		}
		waiting := 0
		for _, s := range cp.Site.Services {
			waiting += s.Waiting
		}
		d.say("checkpoint %d issued: version %d, %d waiting, %d consoles; %s", n, cp.Version, waiting, len(cp.Consoles), why)
		if d.o.AtCheckpoint != nil {
			err = d.o.AtCheckpoint(ctx, cp)
		}
	}
	if err != nil {
		d.cpErr = fmt.Errorf("bench: day: checkpoint at %d tickets: %w", n, err)
		d.stopDay()
	}
}

// compare asks the daemon for the site's snapshot, waits for every
// console and the display to reach its version and compares them with it.
func (d *day) compare(ctx context.Context) (*Checkpoint, error) {
	d.mu.Lock()
	ws := slices.Clone(d.watchers)
	d.mu.Unlock()
	ans, err := ws[0].c.Do(ctx, &wire.Status{Site: d.keypads[0].Site})
	if err != nil {
		return nil, fmt.Errorf("bench: day: STATUS: %w", err)
	}
	snap, ok := ans.(*wire.Snapshot)
	if !ok {
		return nil, fmt.Errorf("bench: day: STATUS answered %s", ans.Type())
	}
	cp := &Checkpoint{Version: snap.Version,
		Site: view.FromSnapshot(queue.Site{ID: snap.Site}, view.Opts{}, protocol.QueueSnapshot(snap))}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, w := range ws {
		for w.version.Load() < snap.Version && wctx.Err() == nil && !w.ended() {
			sleep(wctx, 10*time.Millisecond)
		}
		w.mu.Lock()
		diff := figuresDiff(w.v, cp.Site)
		w.mu.Unlock()
		if v := w.version.Load(); v < snap.Version {
			why := "stayed at version %d of %d for 30 s; %s"
			if w.ended() {
				why = "its subscription ended at version %d of %d; %s"
			}
			diff = strings.TrimSuffix(fmt.Sprintf(why, v, snap.Version, diff), "; ")
		}
		cp.Consoles = append(cp.Consoles, ConsoleResult{Joined: w.joined, Ready: w.ready, Recent: w.recent,
			Events: w.events.Load(), Lost: w.lost.Load(), Matches: diff == "", Diff: diff})
	}
	ws[0].mu.Lock()
	cp.Calls, cp.Status = slices.Clone(ws[0].calls), maps.Clone(ws[0].status)
	ws[0].mu.Unlock()
	if d.hall != nil {
		st, err := d.hall.at(wctx, int64(snap.Version))
		if err != nil {
			return nil, err
		}
		last := ""
		if len(cp.Calls) > 0 {
			last = cp.Calls[len(cp.Calls)-1]
		}
		diff := hallDiff(st, cp.Site, last)
		cp.Hall = &HallResult{States: d.hall.states.Load(), Lost: d.hall.lost.Load(), Matches: diff == "", Diff: diff}
	}
	return cp, nil
}

// EvenCheckpoints are n checkpoints spread evenly over a day of tickets:
// at tickets/(n+1), 2·tickets/(n+1) and so on.
func EvenCheckpoints(tickets, n int) []int {
	var cps []int
	for i := 1; i <= n; i++ {
		cps = append(cps, i*tickets/(n+1))
	}
	return cps
}

// say writes a line of the day: progress (play) and checkpoints (a
// kiosk's goroutine) come from different goroutines.
func (d *day) say(format string, args ...any) {
	d.outMu.Lock()
	defer d.outMu.Unlock()
	fmt.Fprintf(d.out, format+"\n", args...)
}
