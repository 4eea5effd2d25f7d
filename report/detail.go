package report

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/view"
)

// Detail is what a report page draws beside a Report, over the same
// service days: arrivals by local hour and by weekday, the waits of each
// service against its target (median, 90th percentile, share within),
// transfers, and per counter and per person the services done and the
// share of their working span spent idle.
//
// The idle share of a counter (or person) on a day is one minus its
// service time (start to done) over its working span, from its first to
// its last event that day; over a range, the spans and service times are
// added up. It says how much of the time a counter was in use it did not
// serve, not how long it was open.
type Detail struct {
	Site     string
	From, To string
	// Hours counts tickets issued per local hour (0-23); Weekdays per
	// weekday of their service day (time.Sunday = 0).
	Hours    [24]int
	Weekdays [7]int
	Services []ServiceDetail // in configuration order
	Counters []WorkRow       // in configuration order
	People   []WorkRow       // by name
}

// ServiceDetail is one service's waits against its target, by the service
// that issued the ticket (as Stats' waits are).
type ServiceDetail struct {
	ID     string
	Target time.Duration // 0: none
	// Called counts first calls; Within those within Target (all of them
	// without one).
	Called, Within   int
	P50Wait, P90Wait time.Duration
	// Transfers counts tickets transferred out of the service's queue.
	Transfers int
}

// WithinShare is Within over Called, 0 with none called.
func (s ServiceDetail) WithinShare() float64 { return share(s.Within, s.Called) }

// WorkRow is what one counter or person did: services done, their mean
// time, and the idle share of the working span (see Detail).
type WorkRow struct {
	ID         string
	Served     int
	AvgService time.Duration
	Span       time.Duration
	Busy       time.Duration
}

// IdleShare is the share of Span not spent serving.
func (w WorkRow) IdleShare() float64 {
	if w.Span <= 0 {
		return 0
	}
	return math.Max(0, 1-w.Busy.Seconds()/w.Span.Seconds())
}

// BuildDetail reads site's events of the service days from..to (to empty
// means from) and computes their Detail.
func BuildDetail(ctx context.Context, eng *queue.Engine, site, from, to string) (Detail, error) {
	s, err := eng.Site(site)
	if err != nil {
		return Detail{}, fmt.Errorf("report: %w", err)
	}
	to = cmp.Or(to, from)
	f, err := parseDay(from)
	if err != nil {
		return Detail{}, err
	}
	t, err := parseDay(to)
	if err != nil {
		return Detail{}, err
	}
	if t.Before(f) {
		return Detail{}, fmt.Errorf("report: %w: range %s..%s ends before it starts", queue.ErrBadRequest, from, to)
	}
	after, err := versionBefore(ctx, eng, s, from)
	if err != nil {
		return Detail{}, fmt.Errorf("report: %w", err)
	}
	d := newDetailer(s)
read:
	for evs, err := range eng.EventPages(ctx, s.ID, after, pageSize) {
		if err != nil {
			return Detail{}, fmt.Errorf("report: %w", err)
		}
		for i := range evs {
			day := queue.ServiceDay(evs[i].At, s.Location, s.Rollover)
			if queue.ServiceDay(evs[i].At.Add(-eventSkew), s.Location, s.Rollover) > to {
				break read
			}
			if day >= from && day <= to {
				d.add(day, &evs[i])
			}
		}
	}
	return d.detail(from, to), nil
}

// work accumulates one WorkRow: spans per day.
type work struct {
	WorkRow
	day         string
	first, last time.Time
}

func (w *work) seen(day string, at time.Time) {
	if day != w.day {
		w.close()
		w.day, w.first = day, at
	}
	w.last = at
}

func (w *work) close() {
	if w.day != "" {
		w.Span += w.last.Sub(w.first)
	}
}

type detailer struct {
	s      *queue.Site
	d      Detail
	waits  map[string][]time.Duration
	svc    map[string]*ServiceDetail
	ctr    map[string]*work
	people map[string]*work
}

func newDetailer(s *queue.Site) *detailer {
	return &detailer{s: s, d: Detail{Site: s.ID}, waits: map[string][]time.Duration{},
		svc: map[string]*ServiceDetail{}, ctr: map[string]*work{}, people: map[string]*work{}}
}

func (b *detailer) service(id string) *ServiceDetail {
	if b.svc[id] == nil {
		b.svc[id] = &ServiceDetail{ID: id}
		for _, sv := range b.s.Services {
			if sv.Code == id {
				b.svc[id].Target = sv.WaitTarget
			}
		}
	}
	return b.svc[id]
}

func getWork(m map[string]*work, id string) *work {
	if m[id] == nil {
		m[id] = &work{WorkRow: WorkRow{ID: id}}
	}
	return m[id]
}

// personOf is the person an event's actor names ("user:li.na@counter-3":
// li.na), or "" for a device.
func personOf(actor string) string {
	name, _, _ := queue.ParseStaffActor(actor)
	return name
}

// add reads one event of service day day.
func (b *detailer) add(day string, e *queue.Event) {
	if e.Type == queue.EventIssued {
		b.d.Hours[e.At.In(b.s.Location).Hour()]++
		if t, err := parseDay(day); err == nil {
			b.d.Weekdays[t.Weekday()]++
		}
	}
	if w, ok := view.FirstCall(e); ok {
		sd := b.service(view.Issuer(e))
		sd.Called++
		if sd.Target <= 0 || w <= sd.Target {
			sd.Within++
		}
		b.waits[sd.ID] = append(b.waits[sd.ID], w)
	}
	if e.Type == queue.EventTransferred {
		b.service(cmp.Or(e.FromQueue, e.Service)).Transfers++
	}
	rows := []*work{}
	if e.Counter != "" {
		rows = append(rows, getWork(b.ctr, e.Counter))
	}
	if p := personOf(e.Actor); p != "" {
		rows = append(rows, getWork(b.people, p))
	}
	for _, w := range rows {
		w.seen(day, e.At)
		if d, ok := view.Completed(e); ok {
			w.Served++
			w.Busy += d
		}
	}
}

func (b *detailer) detail(from, to string) Detail {
	d := b.d
	d.From, d.To = from, to
	for _, sv := range b.s.Services {
		b.service(sv.Code)
	}
	for _, id := range serviceOrder(b.s, b.svc) {
		sd := *b.svc[id]
		sd.P50Wait, sd.P90Wait = percentile(b.waits[id], 0.5), percentile(b.waits[id], 0.9)
		d.Services = append(d.Services, sd)
	}
	for _, c := range b.s.Counters {
		getWork(b.ctr, c.ID)
	}
	d.Counters = workRows(b.ctr, func(id string) int {
		return slices.IndexFunc(b.s.Counters, func(c queue.Counter) bool { return c.ID == id })
	})
	d.People = workRows(b.people, func(string) int { return 0 })
	return d
}

// serviceOrder is the configured services in order, then any other seen,
// sorted.
func serviceOrder(s *queue.Site, m map[string]*ServiceDetail) []string {
	var out []string
	for _, sv := range s.Services {
		out = append(out, sv.Code)
	}
	for _, id := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// workRows are m's rows by rank (configured order; -1, unconfigured,
// last), then id.
func workRows(m map[string]*work, rank func(string) int) []WorkRow {
	out := make([]WorkRow, 0, len(m))
	for _, w := range m {
		w.close()
		r := w.WorkRow
		if r.Served > 0 {
			r.AvgService = r.Busy / time.Duration(r.Served)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b WorkRow) int {
		ra, rb := rank(a.ID), rank(b.ID)
		if ra < 0 {
			ra = math.MaxInt
		}
		if rb < 0 {
			rb = math.MaxInt
		}
		return cmp.Or(cmp.Compare(ra, rb), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// percentile is the nearest-rank percentile p (0 < p <= 1) of d.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[max(0, int(math.Ceil(p*float64(len(s))))-1)]
}
