package report

import (
	"context"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// Detail is what a report page draws beside a Report, over the same
// service days and from the same figures (the daily figures of the days
// summed, the event log of the others; see Build): arrivals by local hour
// and by weekday, the waits of each service against its target (median,
// 90th percentile, share within), transfers, and per counter and per
// person the services done and the share of their working time spent
// idle.
//
// The working time of a counter (or person) on a day is its staffed time
// (Figures.StaffedMs): from its first event that day to a pause or its
// last event, and again from its next event after a pause; over a range,
// the working times and service times are added up. The idle share says
// how much of the time a counter was in use it did not serve.
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
// that issued the ticket (as Stats' waits are). The percentiles are those
// of Figures.Percentile: nearest-rank, to the bound of their WaitBuckets
// bucket (30 s under two hours).
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

// BuildDetail computes the Detail of site's service days from..to (to
// empty means from), from the figures Build reads.
func BuildDetail(ctx context.Context, eng *queue.Engine, site, from, to string) (Detail, error) {
	s, f, t, days, err := figuresOf(ctx, eng, site, from, to)
	if err != nil {
		return Detail{}, err
	}
	return detailOf(s, f, t, days), nil
}

// BuildAll is Build and BuildDetail of the same days from one reading of
// their figures, as a report page draws them.
func BuildAll(ctx context.Context, eng *queue.Engine, site, from, to string) (Report, Detail, error) {
	s, f, t, days, err := figuresOf(ctx, eng, site, from, to)
	if err != nil {
		return Report{}, Detail{}, err
	}
	d := detailOf(s, f, t, days)
	return assemble(s, f, t, days), d, nil
}

// detailOf adds the days f..t up into their Detail.
func detailOf(s *queue.Site, f, t time.Time, days map[string]*dayFigures) Detail {
	d := Detail{Site: s.ID, From: f.Format(time.DateOnly), To: t.Format(time.DateOnly)}
	sum := newDayFigures()
	for day := f; !day.After(t); day = day.AddDate(0, 0, 1) {
		df := days[day.Format(time.DateOnly)]
		for h, n := range df.total.Hours {
			d.Hours[h] += n
			d.Weekdays[day.Weekday()] += n
		}
		for _, m := range [][2]map[string]*Figures{{sum.services, df.services}, {sum.counters, df.counters}} {
			for id, x := range m[1] {
				row(m[0], id).Add(x)
			}
		}
	}
	var codes, ids []string
	for _, sv := range s.Services {
		codes = append(codes, sv.Code)
	}
	for _, c := range s.Counters {
		ids = append(ids, c.ID)
	}
	for _, id := range ordered(codes, sum.services) {
		d.Services = append(d.Services, serviceDetail(s, id, row(sum.services, id)))
	}
	for _, id := range ordered(ids, sum.counters) {
		d.Counters = append(d.Counters, workRow(id, row(sum.counters, id)))
	}
	people := peopleOf(f, t, days)
	for _, name := range slices.Sorted(maps.Keys(people)) {
		d.People = append(d.People, workRow(name, people[name]))
	}
	return d
}

// ordered is the configured ids in order, then the others of m (but ""),
// sorted.
func ordered(configured []string, m map[string]*Figures) []string {
	out := slices.Clone(configured)
	for _, id := range slices.Sorted(maps.Keys(m)) {
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// serviceDetail is the ServiceDetail of service id, summed in x, against
// its configured target.
func serviceDetail(s *queue.Site, id string, x *Figures) ServiceDetail {
	sd := ServiceDetail{ID: id, Called: x.waited(), P50Wait: x.Percentile(0.5), P90Wait: x.Percentile(0.9),
		Transfers: x.Transferred}
	for _, sv := range s.Services {
		if sv.Code == id {
			sd.Target = sv.WaitTarget
		}
	}
	sd.Within = sd.Called
	if sd.Target > 0 {
		sd.Within = x.Within
	}
	return sd
}

// workRow is the WorkRow of counter or person id, summed in x.
func workRow(id string, x *Figures) WorkRow {
	w := WorkRow{ID: id, Served: x.Served, Busy: time.Duration(x.ServiceMs) * time.Millisecond,
		Span: time.Duration(x.StaffedMs) * time.Millisecond}
	if w.Served > 0 {
		w.AvgService = w.Busy / time.Duration(w.Served)
	}
	return w
}

// personOf is the person an event's actor names ("user:li.na@counter-3":
// li.na), or "" for a device.
func personOf(actor string) string {
	name, _, _ := queue.ParseStaffActor(actor)
	return name
}
