package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
)

// LongWait is the longest estimate said in minutes, in seconds; beyond it
// the estimate is "more than 2 hours" (an estimate that far out is a guess).
const LongWait = 2 * 60 * 60

// WaitText renders an estimated wait in whole minutes, up to LongWait.
func WaitText(sec uint32) string {
	switch {
	case sec == 0:
		return "none"
	case sec < 60:
		return "under a minute"
	case sec > LongWait:
		return "more than 2 hours"
	}
	m := (sec + 30) / 60
	if m == 1 {
		return "about 1 minute"
	}
	return fmt.Sprintf("about %d minutes", m)
}

// TicketLine describes a ticket after an action, e.g. "A001 called -> 1".
func TicketLine(t *wire.Ticket) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", t.Number, t.Status)
	switch t.Status {
	case wire.StatusCalled:
		fmt.Fprintf(&b, " -> %d", t.Counter)
		if t.CallCount > 1 {
			fmt.Fprintf(&b, " (call %d)", t.CallCount)
		}
	case wire.StatusServing:
		fmt.Fprintf(&b, " at %d", t.Counter)
	case wire.StatusWaiting:
		fmt.Fprintf(&b, " in %s", t.Service)
		if t.Counter != 0 {
			fmt.Fprintf(&b, " for counter %d", t.Counter)
		}
		fmt.Fprintf(&b, ", %d ahead", t.PeopleAhead)
	}
	return b.String()
}

// EventLine formats one event, e.g. "v12 CALLED A023 -> 5".
func EventLine(e *wire.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "v%d %s", e.Version, strings.ToUpper(e.Kind.String()))
	switch e.Kind {
	case wire.EventCounterOpened, wire.EventCounterPaused, wire.EventCounterClosed:
		fmt.Fprintf(&b, " %d", e.Counter)
		return b.String()
	}
	if e.Resource != "" { // a booking event: its resource and slot
		fmt.Fprintf(&b, " %s %s", e.Resource, time.UnixMilli(e.SlotMS).UTC().Format("2006-01-02T15:04Z"))
		if e.Number != "" {
			fmt.Fprintf(&b, " -> %s", e.Number)
		}
		return b.String()
	}
	fmt.Fprintf(&b, " %s", e.Number)
	switch e.Kind {
	case wire.EventCalled, wire.EventRecalled:
		fmt.Fprintf(&b, " -> %d", e.Counter)
		if e.CallCount > 1 {
			fmt.Fprintf(&b, " (call %d)", e.CallCount)
		}
	case wire.EventServing, wire.EventDone, wire.EventNoShow:
		if e.Counter != 0 {
			fmt.Fprintf(&b, " at %d", e.Counter)
		}
	case wire.EventTransferred:
		fmt.Fprintf(&b, " in %s", e.Service)
		if e.ToCounter != 0 {
			fmt.Fprintf(&b, " for counter %d", e.ToCounter)
		}
		if e.Counter != 0 {
			fmt.Fprintf(&b, " (from counter %d)", e.Counter)
		}
	case wire.EventIssued, wire.EventReentered:
		fmt.Fprintf(&b, " in %s", e.Service)
		if e.Counter != 0 {
			fmt.Fprintf(&b, " for counter %d", e.Counter)
		}
	}
	return b.String()
}

// SnapshotText formats a snapshot, a line per service and per counter.
func SnapshotText(s *wire.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "snapshot v%d site %s day %s\n", s.Version, s.Site, s.ServiceDay)
	for _, sv := range s.Services {
		state := "open"
		if !sv.Open {
			state = "closed"
		}
		fmt.Fprintf(&b, "  service %s %s: %d waiting, %d issued, %d served", sv.Code, state, sv.Waiting, sv.Issued, sv.Served)
		if sv.LastCalled != "" {
			fmt.Fprintf(&b, ", last called %s", sv.LastCalled)
		}
		b.WriteByte('\n')
	}
	for _, c := range s.Counters {
		fmt.Fprintf(&b, "  counter %d %s", c.ID, c.State)
		if c.Number != "" {
			fmt.Fprintf(&b, ": %s %s", c.Number, c.Status)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
