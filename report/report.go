// Package report computes a site's statistics over a range of service days
// from its event log alone (queue.Engine.Events), so a report reads the same
// on every store: per service and per counter, tickets issued, called,
// served, no-shows and cancelled, average and 90th-percentile wait (first
// CALLED minus ISSUED of the same ticket), average service time (SERVING to
// DONE) and the busiest local hour. It renders as an aligned table, CSV or
// JSON.
package report

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// Stats are the figures of one service, one counter or the whole site.
type Stats struct {
	// Issued counts ISSUED events (0 for counters: tickets are not issued
	// at a counter).
	Issued int
	// Called counts first calls (recalls and calls after a re-entry or
	// transfer are not counted again).
	Called    int
	Served    int // DONE events
	NoShows   int // NO_SHOW events
	Cancelled int // CANCELLED events
	// AvgWait and P90Wait are over the tickets first called, from their
	// ISSUED event to their first CALLED event.
	AvgWait time.Duration
	P90Wait time.Duration
	// AvgService is over the tickets done after being started.
	AvgService time.Duration
	// BusiestHour is the local hour (0-23) with the most tickets issued
	// (for a counter: the most first calls), the earliest on a tie; -1 when
	// there were none. BusiestCount is how many.
	BusiestHour  int
	BusiestCount int
}

// Row is the figures of one service or counter.
type Row struct {
	ID string
	Stats
}

// Report is a site's statistics over the service days From..To inclusive.
type Report struct {
	Site     string
	From, To string // service days, YYYY-MM-DD
	Services []Row  // in configuration order
	Counters []Row  // in configuration order
	Total    Stats  // every service together
}

// pageSize is how many events are read at a time.
const pageSize = 1000

// parseDay checks that s is a service day.
func parseDay(s string) (time.Time, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("report: %w: day %q: want YYYY-MM-DD", queue.ErrBadRequest, s)
	}
	return t, nil
}

// acc accumulates one row.
type acc struct {
	Stats
	waits    []time.Duration
	services []time.Duration
	hours    [24]int
}

func (a *acc) finish() Stats {
	s := a.Stats
	s.AvgWait, s.P90Wait = mean(a.waits), p90(a.waits)
	s.AvgService = mean(a.services)
	s.BusiestHour = -1
	for h, n := range a.hours {
		if n > s.BusiestCount {
			s.BusiestHour, s.BusiestCount = h, n
		}
	}
	return s
}

func mean(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

// p90 is the nearest-rank 90th percentile.
func p90(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(math.Ceil(0.9*float64(len(s))))-1]
}

// ticket is what the report remembers of one ticket while reading.
type ticket struct {
	issued  time.Time
	called  bool
	serving time.Time
}

// Build reads every event of site and computes the report of the service
// days from..to (inclusive; to empty means from). The service day of an
// event is queue.ServiceDay of its time at the site.
func Build(ctx context.Context, eng *queue.Engine, site, from, to string) (Report, error) {
	s, err := eng.Site(site)
	if err != nil {
		return Report{}, fmt.Errorf("report: %w", err)
	}
	if to == "" {
		to = from
	}
	f, err := parseDay(from)
	if err != nil {
		return Report{}, err
	}
	t, err := parseDay(to)
	if err != nil {
		return Report{}, err
	}
	if t.Before(f) {
		return Report{}, fmt.Errorf("report: %w: range %s..%s ends before it starts", queue.ErrBadRequest, from, to)
	}
	svc := map[string]*acc{}
	ctr := map[string]*acc{}
	total := &acc{}
	get := func(m map[string]*acc, id string) *acc {
		a := m[id]
		if a == nil {
			a = &acc{}
			m[id] = a
		}
		return a
	}
	tickets := map[int64]*ticket{}
	tk := func(id int64) *ticket {
		x := tickets[id]
		if x == nil {
			x = &ticket{}
			tickets[id] = x
		}
		return x
	}
	var after int64
	for {
		evs, err := eng.Events(ctx, s.ID, after, pageSize)
		if err != nil {
			return Report{}, fmt.Errorf("report: %w", err)
		}
		for _, ev := range evs {
			after = ev.Version
			day := queue.ServiceDay(ev.At, s.Location, s.Rollover)
			if day < from || day > to {
				continue
			}
			hour := ev.At.In(s.Location).Hour()
			switch ev.Type {
			case queue.EventIssued:
				tk(ev.TicketID).issued = ev.At
				for _, a := range []*acc{get(svc, ev.Service), total} {
					a.Issued++
					a.hours[hour]++
				}
			case queue.EventCalled:
				x := tk(ev.TicketID)
				if x.called {
					continue
				}
				x.called = true
				c := get(ctr, ev.Counter)
				c.hours[hour]++
				for _, a := range []*acc{get(svc, ev.Service), c, total} {
					a.Called++
					if !x.issued.IsZero() {
						a.waits = append(a.waits, ev.At.Sub(x.issued))
					}
				}
			case queue.EventServing:
				tk(ev.TicketID).serving = ev.At
			case queue.EventDone:
				x := tk(ev.TicketID)
				for _, a := range []*acc{get(svc, ev.Service), get(ctr, ev.Counter), total} {
					a.Served++
					if !x.serving.IsZero() {
						a.services = append(a.services, ev.At.Sub(x.serving))
					}
				}
			case queue.EventNoShow:
				for _, a := range []*acc{get(svc, ev.Service), get(ctr, ev.Counter), total} {
					a.NoShows++
				}
			case queue.EventCancelled:
				as := []*acc{get(svc, ev.Service), total}
				if ev.Counter != "" {
					as = append(as, get(ctr, ev.Counter))
				}
				for _, a := range as {
					a.Cancelled++
				}
			}
		}
		if len(evs) < pageSize {
			break
		}
		if err := ctx.Err(); err != nil {
			return Report{}, fmt.Errorf("report: %w", err)
		}
	}
	r := Report{Site: s.ID, From: from, To: to, Total: total.finish()}
	for _, sv := range s.Services {
		r.Services = append(r.Services, Row{ID: sv.Code, Stats: get(svc, sv.Code).finish()})
		delete(svc, sv.Code)
	}
	for _, c := range s.Counters {
		r.Counters = append(r.Counters, Row{ID: c.ID, Stats: get(ctr, c.ID).finish()})
		delete(ctr, c.ID)
	}
	// Services or counters no longer configured still appear, sorted.
	for _, id := range slices.Sorted(maps.Keys(svc)) {
		r.Services = append(r.Services, Row{ID: id, Stats: svc[id].finish()})
	}
	for _, id := range slices.Sorted(maps.Keys(ctr)) {
		if id == "" {
			continue
		}
		r.Counters = append(r.Counters, Row{ID: id, Stats: ctr[id].finish()})
	}
	return r, nil
}

// ErrFormat is returned for an unknown output format.
var ErrFormat = errors.New("report: unknown format (want table, csv or json)")
