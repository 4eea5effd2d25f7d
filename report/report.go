// Package report computes a site's statistics over a range of service days
// from its event log alone (queue.Engine.Events), so a report reads the same
// on every store: per service and per counter, tickets issued, called,
// served, no-shows and cancelled, average and 90th-percentile wait (first
// CALLED minus ISSUED of the same ticket), average service time (SERVING to
// DONE) and the busiest local hour; per bookable resource and day of its
// slots, bookings made, cancelled, checked in on time or late, and missed.
// It renders as an aligned table, CSV or JSON.
package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/view"
)

// Stats are the figures of one service, one counter or the whole site.
type Stats struct {
	// Issued counts the tickets a service issued (0 for counters: tickets
	// are not issued at a counter).
	Issued int
	// Called counts first calls (recalls and calls after a re-entry or
	// transfer are not counted again).
	Called int
	// Served, NoShows and Cancelled count, for a service, the tickets that
	// ended their day DONE, NO_SHOW (a re-entered no-show is not one) or
	// CANCELLED in its queue (package view's figures); for a counter, the
	// services it completed, the no-shows it marked and the cancels of the
	// ticket it held.
	Served    int
	NoShows   int
	Cancelled int
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

// BookingRow is the appointments of one resource on one service day, the
// day of their slots (a booking made a week ahead counts on its day), from
// the BOOKING_* events:
//   - Booked: bookings made (BOOKING_BOOKED, a confirmed hold included; a
//     hold that expired is none), whatever became of them;
//   - Cancelled: bookings cancelled;
//   - OnTime, Late: check-ins inside the site's window (an appointment
//     ticket) and after it (a normal ticket);
//   - Missed: bookings not checked in by the end of their slot and grace.
type BookingRow struct {
	Day       string // YYYY-MM-DD
	Resource  string
	Booked    int
	Cancelled int
	OnTime    int
	Late      int
	Missed    int
}

// Report is a site's statistics over the service days From..To inclusive.
type Report struct {
	Site     string
	From, To string // service days, YYYY-MM-DD
	Services []Row  // in configuration order
	Counters []Row  // in configuration order
	Total    Stats  // every service together
	// Bookings has a row per day and configured resource (in configuration
	// order, then resources seen only in events, sorted); none for a site
	// without resources.
	Bookings []BookingRow
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
	// serviceSum is the services' time of a row added up from days (its
	// services list stays empty): its mean is over Served.
	serviceSum time.Duration
}

func (a *acc) finish() Stats {
	s := a.Stats
	s.AvgWait, s.P90Wait = mean(a.waits), p90(a.waits)
	s.AvgService = mean(a.services)
	if a.serviceSum > 0 && s.Served > 0 {
		s.AvgService = a.serviceSum / time.Duration(s.Served)
	}
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

// Build reads every event of site and computes the report of the service
// days from..to (inclusive; to empty means from). The service day of an
// event is queue.ServiceDay of its time at the site.
//
// A service's figures are those of package view at the end of each day,
// added up: issued, called and waits by the service that issued the
// ticket; served, no-shows (tickets left as no-shows: one re-entered is not
// counted) and cancelled by the queue the ticket ended the day in. A
// counter's figures are what happened there: first calls and their waits,
// services done, no-shows marked and cancels of the ticket it held.
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
	b := newBuilder(s)
	b.from, b.to = f, t
	after, err := versionBefore(ctx, eng, s, f.AddDate(0, 0, -lookBack(s)).Format(time.DateOnly))
	if err != nil {
		return Report{}, fmt.Errorf("report: %w", err)
	}
	// The day after the range still brings its late booking events
	// (bookings marked missed after the last slots of the range).
	past := t.AddDate(0, 0, 1).Format(time.DateOnly)
read:
	for evs, err := range eng.EventPages(ctx, s.ID, after, pageSize) {
		if err != nil {
			return Report{}, fmt.Errorf("report: %w", err)
		}
		for i := range evs {
			if queue.ServiceDay(evs[i].At.Add(-eventSkew), s.Location, s.Rollover) > past {
				break read
			}
			b.addBooking(from, to, &evs[i])
			if day := queue.ServiceDay(evs[i].At, s.Location, s.Rollover); day >= from && day <= to {
				b.add(day, &evs[i])
			}
		}
	}
	return b.report(from, to), nil
}

// eventSkew bounds how far out of version order events' times may run
// (an event is stamped when its request runs, versioned when it commits).
const eventSkew = time.Minute

// lookBack is how many days before a range its booking events may come:
// bookings open the slots of a day DaysAhead days before it (the longest
// of the site's resources), and are made from then on.
func lookBack(s *queue.Site) int {
	n := 0
	for _, r := range s.Resources {
		n = max(n, r.Schedule.DaysAhead+1)
	}
	return n
}

// versionBefore is the version to read a site's events after so as to
// start a little before the first event of service day day: it looks
// the version up by halves, one event read per step, so a report of a
// day costs what that day costs, however long the log.
func versionBefore(ctx context.Context, eng *queue.Engine, s *queue.Site, day string) (int64, error) {
	last, err := eng.LastVersion(ctx, s.ID)
	if err != nil {
		return 0, err
	}
	lo, hi := int64(1), last+1 // the first version of day or later is in [lo, hi]
	for lo < hi {
		mid := lo + (hi-lo)/2
		evs, err := eng.Events(ctx, s.ID, mid-1, 1)
		if err != nil {
			return 0, err
		}
		if len(evs) == 0 || queue.ServiceDay(evs[0].At.Add(eventSkew), s.Location, s.Rollover) >= day {
			hi = mid
		} else {
			lo = evs[0].Version + 1
		}
	}
	return lo - 1, nil
}

// builder adds a site's events up into a report.
type builder struct {
	s        *queue.Site
	v        *view.Site // the day being read
	svc, ctr map[string]*acc
	total    *acc
	// from, to are the range's days; bookings its booking figures by day
	// and resource; appointment the tickets issued with class appointment
	// (a check-in on time), whose BOOKING_CHECKED_IN follows.
	from, to    time.Time
	bookings    map[[2]string]*BookingRow
	appointment map[int64]bool
}

func newBuilder(s *queue.Site) *builder {
	return &builder{s: s, v: view.New(*s, view.Opts{}), svc: map[string]*acc{}, ctr: map[string]*acc{}, total: &acc{},
		bookings: map[[2]string]*BookingRow{}, appointment: map[int64]bool{}}
}

// addBooking counts a booking event on its slot's day, when that is in
// from..to; it remembers the appointment tickets a check-in names.
func (b *builder) addBooking(from, to string, ev *queue.Event) {
	if ev.Type == queue.EventIssued && ev.Class == queue.ClassAppointment {
		b.appointment[ev.TicketID] = true
	}
	if !ev.Type.IsBooking() || ev.Day < from || ev.Day > to {
		return
	}
	k := [2]string{ev.Day, ev.Resource}
	r := b.bookings[k]
	if r == nil {
		r = &BookingRow{Day: ev.Day, Resource: ev.Resource}
		b.bookings[k] = r
	}
	switch ev.Type {
	case queue.EventBookingBooked:
		r.Booked++
	case queue.EventBookingCancelled:
		r.Cancelled++
	case queue.EventBookingCheckedIn:
		if b.appointment[ev.TicketID] {
			r.OnTime++
		} else {
			r.Late++
		}
		delete(b.appointment, ev.TicketID)
	case queue.EventBookingMissed:
		r.Missed++
	}
}

// bookingRows lists the booking figures: every configured resource on
// every day of the range, then those seen only in events.
func (b *builder) bookingRows() []BookingRow {
	var out []BookingRow
	for d := b.from; !d.After(b.to); d = d.AddDate(0, 0, 1) {
		day := d.Format(time.DateOnly)
		for _, res := range b.s.Resources {
			k := [2]string{day, res.ID}
			r := BookingRow{Day: day, Resource: res.ID}
			if c := b.bookings[k]; c != nil {
				r = *c
				delete(b.bookings, k)
			}
			out = append(out, r)
		}
	}
	rest := slices.SortedFunc(maps.Values(b.bookings), func(x, y *BookingRow) int {
		return cmp.Or(cmp.Compare(x.Day, y.Day), cmp.Compare(x.Resource, y.Resource))
	})
	for _, r := range rest {
		out = append(out, *r)
	}
	return out
}

func (b *builder) get(m map[string]*acc, id string) *acc {
	a := m[id]
	if a == nil {
		a = &acc{}
		m[id] = a
	}
	return a
}

// add reads one event of service day day.
func (b *builder) add(day string, ev *queue.Event) {
	if b.v.Day != "" && day != b.v.Day {
		b.endDay()
	}
	b.v.Apply(ev)
	hour := ev.At.In(b.s.Location).Hour()
	if ev.Type == queue.EventIssued {
		b.get(b.svc, view.Issuer(ev)).hours[hour]++
		b.total.hours[hour]++
	}
	if w, ok := view.FirstCall(ev); ok {
		c := b.get(b.ctr, ev.Counter)
		c.hours[hour]++
		c.Called++
		for _, a := range []*acc{b.get(b.svc, view.Issuer(ev)), c, b.total} {
			a.waits = append(a.waits, w)
		}
	}
	if d, ok := view.Completed(ev); ok {
		c := b.get(b.ctr, ev.Counter)
		c.Served++
		c.services = append(c.services, d)
	}
	switch {
	case ev.Type == queue.EventNoShow && ev.Counter != "":
		b.get(b.ctr, ev.Counter).NoShows++
	case ev.Type == queue.EventCancelled && ev.Counter != "":
		b.get(b.ctr, ev.Counter).Cancelled++
	}
}

// endDay adds the figures of the day read to the services and the total.
func (b *builder) endDay() {
	for _, sv := range b.v.Services {
		for _, a := range []*acc{b.get(b.svc, sv.Code), b.total} {
			a.Issued += sv.Issued
			a.Called += sv.Called
			a.Served += sv.Served
			a.NoShows += sv.NoShows
			a.Cancelled += sv.Cancelled
			a.serviceSum += sv.ServiceSum
		}
	}
	b.v = view.New(*b.s, view.Opts{})
}

func (b *builder) report(from, to string) Report {
	b.endDay()
	r := Report{Site: b.s.ID, From: from, To: to, Total: b.total.finish(), Bookings: b.bookingRows()}
	for _, sv := range b.s.Services {
		r.Services = append(r.Services, Row{ID: sv.Code, Stats: b.get(b.svc, sv.Code).finish()})
		delete(b.svc, sv.Code)
	}
	for _, c := range b.s.Counters {
		r.Counters = append(r.Counters, Row{ID: c.ID, Stats: b.get(b.ctr, c.ID).finish()})
		delete(b.ctr, c.ID)
	}
	// Services or counters no longer configured still appear, sorted.
	for _, id := range slices.Sorted(maps.Keys(b.svc)) {
		r.Services = append(r.Services, Row{ID: id, Stats: b.svc[id].finish()})
	}
	for _, id := range slices.Sorted(maps.Keys(b.ctr)) {
		if id == "" {
			continue
		}
		r.Counters = append(r.Counters, Row{ID: id, Stats: b.ctr[id].finish()})
	}
	return r
}

// ErrFormat is returned for an unknown output format.
var ErrFormat = errors.New("report: unknown format (want table, csv or json)")
