// Package report computes a site's statistics over a range of service days
// from its daily figures (SumDays) and, for the days not summed, its event
// log (queue.Engine.Events), so a report reads the same on every store and
// from either source: per service and per counter, tickets issued, called,
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
	"slices"
	"strings"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/view"
)

// Stats are the figures of one service, one counter or the whole site
// over a report's days (Figures.Stats). For the browser pages (issue 25)
// the figures a page shows come from here:
//   - arrivals by hour: ByHour (tickets issued by local hour; for a
//     counter, its first calls);
//   - waits per service against its target: AvgWait, P50Wait, P90Wait and
//     queue.Service.WaitTarget; the share within target: TargetShare;
//   - no-show and transfer rates: NoShowRate, TransferRate;
//   - per counter: Served, AvgService, IdleShare (of Staffed);
//   - appointments: Report.Bookings (booked, checked in on time or late,
//     missed, per resource and day).
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
	// Transferred counts the transfers out of a service's queue, or made
	// at a counter.
	Transferred int
	// AvgWait, P50Wait and P90Wait are over the tickets first called,
	// from their ISSUED event to their first CALLED event; the
	// percentiles are nearest-rank, to the bound of their WaitBuckets
	// bucket (30 s under two hours), so they add up from daily figures.
	AvgWait time.Duration
	P50Wait time.Duration
	P90Wait time.Duration
	// Targeted counts the waits of tickets whose issuing service has a
	// wait target, WithinTarget those called within it.
	Targeted     int
	WithinTarget int
	// AvgService is over the tickets done after being started;
	// ServiceTime is their sum.
	AvgService  time.Duration
	ServiceTime time.Duration
	// Staffed is a counter's time open over the days (see
	// Figures.StaffedMs); 0 for services.
	Staffed time.Duration
	// ByHour counts by local hour the tickets issued (for a counter: its
	// first calls). BusiestHour is the hour (0-23) with the most, the
	// earliest on a tie; -1 when there were none. BusiestCount is how many.
	ByHour       [24]int
	BusiestHour  int
	BusiestCount int
}

// TargetShare is the share (0..1) of the targeted waits that were within
// their service's target; 0 when none was targeted.
func (s Stats) TargetShare() float64 { return share(s.WithinTarget, s.Targeted) }

// NoShowRate is the share of first calls that ended as no-shows.
func (s Stats) NoShowRate() float64 { return share(s.NoShows, s.Called) }

// TransferRate is the share of first calls transferred (a service:
// out of its queue; a counter: by it).
func (s Stats) TransferRate() float64 { return share(s.Transferred, s.Called) }

// IdleShare is the share of a counter's staffed time it was not serving
// (start to done), 0..1; 0 when its staffed time is unknown.
func (s Stats) IdleShare() float64 {
	if s.Staffed <= 0 {
		return 0
	}
	return max(0, 1-float64(s.ServiceTime)/float64(s.Staffed))
}

func share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
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

// DayStats is the site's total of one service day of a report.
type DayStats struct {
	Day string // YYYY-MM-DD
	Stats
}

// Report is a site's statistics over the service days From..To inclusive.
type Report struct {
	Site     string
	From, To string // service days, YYYY-MM-DD
	Services []Row  // in configuration order
	Counters []Row  // in configuration order
	Total    Stats  // every service together
	// Days has the total of each day of the range, in order.
	Days []DayStats
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

// Build computes the report of site for the service days from..to
// (inclusive; to empty means from). Days the store's daily figures hold
// (see SumDays; the store is eng's, when it offers DailyStore) are read
// from there, one row per service, counter and resource a day; the others
// (today, and days not summed yet) from the event log of those days only
// (the service day of an event is queue.ServiceDay of its time at the
// site). Either way a day's figures are the same.
//
// A service's figures are those of package view at the end of each day,
// added up: issued, called and waits by the service that issued the
// ticket; served, no-shows (tickets left as no-shows: one re-entered is not
// counted) and cancelled by the queue the ticket ended the day in. A
// counter's figures are what happened there: first calls and their waits,
// services done, no-shows marked and cancels of the ticket it held.
func Build(ctx context.Context, eng *queue.Engine, site, from, to string) (Report, error) {
	s, f, t, days, err := figuresOf(ctx, eng, site, from, to)
	if err != nil {
		return Report{}, err
	}
	return assemble(s, f, t, days), nil
}

// figuresOf reads the figures of site's service days from..to (to empty
// means from) as Build does: the daily figures of the days summed, the
// event log of the others; with them the days before and after whose
// booking events may count in the range (see lookBack).
func figuresOf(ctx context.Context, eng *queue.Engine, site, from, to string) (*queue.Site, time.Time, time.Time, map[string]*dayFigures, error) {
	s, err := eng.Site(site)
	if err != nil {
		return nil, time.Time{}, time.Time{}, nil, fmt.Errorf("report: %w", err)
	}
	f, t, err := parseRange(from, cmp.Or(to, from))
	if err != nil {
		return nil, f, t, nil, err
	}
	// Bookings count on the day of their slot: those of the range were
	// made up to lookBack days before it, and marked missed up to a day
	// after it.
	wf, wt := f.AddDate(0, 0, -lookBack(s)), t.AddDate(0, 0, 1)
	days := map[string]*dayFigures{}
	if ds, ok := eng.Store().(DailyStore); ok {
		if days, err = readDaily(ctx, ds, s.ID, wf.Format(time.DateOnly), wt.Format(time.DateOnly)); err != nil {
			return nil, f, t, nil, err
		}
	}
	// The days not summed, a run of consecutive days at a time, from the
	// event log; then the people of the days of the range summed without
	// them.
	if err := sumRuns(ctx, eng, s, wf, wt, days, func(d *dayFigures) bool { return d != nil }, maps.Copy); err != nil {
		return nil, f, t, nil, err
	}
	err = sumRuns(ctx, eng, s, f, t, days, func(d *dayFigures) bool { return d.total.PersonRows },
		func(days, run map[string]*dayFigures) {
			for day, d := range run {
				days[day].people, days[day].total.PersonRows = d.people, true
			}
		})
	return s, f, t, days, err
}

// sumRuns reads from the event log, a run of consecutive days at a time,
// the days f..t that are not done, and merges their figures into days.
func sumRuns(ctx context.Context, eng *queue.Engine, s *queue.Site, f, t time.Time, days map[string]*dayFigures,
	done func(*dayFigures) bool, merge func(days, run map[string]*dayFigures)) error {
	ok := func(d time.Time) bool { return done(days[d.Format(time.DateOnly)]) }
	for d := f; !d.After(t); {
		if ok(d) {
			d = d.AddDate(0, 0, 1)
			continue
		}
		e := d
		for e.Before(t) && !ok(e.AddDate(0, 0, 1)) {
			e = e.AddDate(0, 0, 1)
		}
		run, err := sumEvents(ctx, eng, s, d, e)
		if err != nil {
			return err
		}
		merge(days, run)
		d = e.AddDate(0, 0, 1)
	}
	return nil
}

// parseRange checks the service days from..to.
func parseRange(from, to string) (time.Time, time.Time, error) {
	f, err := parseDay(from)
	if err != nil {
		return f, f, err
	}
	t, err := parseDay(to)
	if err != nil {
		return f, t, err
	}
	if t.Before(f) {
		return f, t, fmt.Errorf("report: %w: range %s..%s ends before it starts", queue.ErrBadRequest, from, to)
	}
	return f, t, nil
}

// sumEvents reads the events of site's service days from..to (by their
// time) and returns the figures of every day of the range.
func sumEvents(ctx context.Context, eng *queue.Engine, s *queue.Site, f, t time.Time) (map[string]*dayFigures, error) {
	from, to := f.Format(time.DateOnly), t.Format(time.DateOnly)
	b := newBuilder(s)
	after, err := versionBefore(ctx, eng, s, from)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
read:
	for evs, err := range eng.EventPages(ctx, s.ID, after, pageSize) {
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		for i := range evs {
			if queue.ServiceDay(evs[i].At.Add(-eventSkew), s.Location, s.Rollover) > to {
				break read
			}
			if day := queue.ServiceDay(evs[i].At, s.Location, s.Rollover); day >= from && day <= to {
				b.add(day, &evs[i])
			}
		}
	}
	b.endDay()
	for d := f; !d.After(t); d = d.AddDate(0, 0, 1) {
		b.day(d.Format(time.DateOnly)).total.PersonRows = true
	}
	return b.days, nil
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

// dayFigures are the figures of one service day of a site, per row:
// bookings has the booking events of the day (made, cancelled, checked
// in, missed) by the day of their slot and resource, "YYYY-MM-DD resource".
// people has the figures of each person, by name (kind person).
type dayFigures struct {
	total                                Figures
	services, counters, bookings, people map[string]*Figures
}

func newDayFigures() *dayFigures {
	return &dayFigures{services: map[string]*Figures{}, counters: map[string]*Figures{}, bookings: map[string]*Figures{},
		people: map[string]*Figures{}}
}

// row is the figures of id in m, made when missing.
func row(m map[string]*Figures, id string) *Figures {
	f := m[id]
	if f == nil {
		f = &Figures{}
		m[id] = f
	}
	return f
}

// staffing is a counter's open time on the day being read.
type staffing struct {
	open        bool
	since, last time.Time
}

// builder adds a site's events up into the figures of its days.
type builder struct {
	s    *queue.Site
	v    *view.Site // the day being read
	days map[string]*dayFigures
	// appointment holds the tickets issued with class appointment (a
	// check-in on time), whose BOOKING_CHECKED_IN follows.
	appointment map[int64]bool
	// staff and staffP follow the open time of counters and of people.
	staff, staffP map[string]*staffing
	targets       map[string]time.Duration
}

func newBuilder(s *queue.Site) *builder {
	b := &builder{s: s, v: view.New(*s, view.Opts{}), days: map[string]*dayFigures{},
		appointment: map[int64]bool{}, staff: map[string]*staffing{}, staffP: map[string]*staffing{},
		targets: map[string]time.Duration{}}
	for _, sv := range s.Services {
		b.targets[sv.Code] = sv.WaitTarget
	}
	return b
}

func (b *builder) day(day string) *dayFigures {
	d := b.days[day]
	if d == nil {
		d = newDayFigures()
		b.days[day] = d
	}
	return d
}

// addBooking counts a booking event of day d by its slot's day and
// resource; it remembers the appointment tickets a check-in names.
func (b *builder) addBooking(d *dayFigures, ev *queue.Event) {
	if ev.Type == queue.EventIssued && ev.Class == queue.ClassAppointment {
		b.appointment[ev.TicketID] = true
	}
	if !ev.Type.IsBooking() {
		return
	}
	r := row(d.bookings, ev.Day+" "+ev.Resource)
	switch ev.Type {
	case queue.EventBookingBooked:
		r.Booked++
	case queue.EventBookingCancelled:
		r.BookCancelled++
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

// add reads one event of service day day.
func (b *builder) add(day string, ev *queue.Event) {
	if b.v.Day != "" && day != b.v.Day {
		b.endDay()
	}
	b.v.Apply(ev)
	d := b.day(day)
	b.addBooking(d, ev)
	hour := ev.At.In(b.s.Location).Hour()
	if ev.Type == queue.EventIssued {
		row(d.services, view.Issuer(ev)).Hours[hour]++
		d.total.Hours[hour]++
	}
	if w, ok := view.FirstCall(ev); ok {
		c := row(d.counters, ev.Counter)
		c.Hours[hour]++
		c.Called++
		target := b.targets[view.Issuer(ev)]
		for _, f := range []*Figures{row(d.services, view.Issuer(ev)), c, &d.total} {
			f.addWait(w, target)
		}
	}
	if dur, ok := view.Completed(ev); ok {
		c := row(d.counters, ev.Counter)
		c.Served++
		c.ServiceMs += dur.Milliseconds()
	}
	switch {
	case ev.Type == queue.EventNoShow && ev.Counter != "":
		row(d.counters, ev.Counter).NoShows++
	case ev.Type == queue.EventCancelled && ev.Counter != "":
		row(d.counters, ev.Counter).Cancelled++
	case ev.Type == queue.EventTransferred:
		row(d.services, cmp.Or(ev.FromQueue, ev.Service)).Transferred++
		d.total.Transferred++
		if c := cmp.Or(ev.FromCounter, ev.Counter); c != "" {
			row(d.counters, c).Transferred++
		}
	}
	if ev.Counter != "" {
		staffed(b.staff, row(d.counters, ev.Counter), ev.Counter, ev)
	}
	// A name longer than an account's (64) is no person's, and would not
	// fit the id of a daily row.
	if name, at, ok := queue.ParseStaffActor(ev.Actor); ok && len(name) <= 64 {
		p := row(d.people, name)
		addPerson(p, at, ev)
		staffed(b.staffP, p, name, ev)
	}
}

// addPerson counts an event of the person whose row is p, acting at
// counter at.
func addPerson(p *Figures, at string, ev *queue.Event) {
	p.atCounter(at)
	switch ev.Type {
	case queue.EventCalled:
		p.Called++
	case queue.EventRecalled:
		p.Recalled++
	case queue.EventDone:
		p.Served++
		if ev.ServiceTime > 0 {
			p.ServiceMs += ev.ServiceTime.Milliseconds()
			p.Timed++
		}
	case queue.EventNoShow:
		p.NoShows++
	case queue.EventTransferred:
		p.Transferred++
	case queue.EventCounterPaused:
		p.Paused++
	}
}

// staffed follows the open time of the counter or person id (in m), whose
// row is f.
func staffed(m map[string]*staffing, f *Figures, id string, ev *queue.Event) {
	st := m[id]
	if st == nil {
		st = &staffing{}
		m[id] = st
	}
	switch {
	case ev.Type == queue.EventCounterPaused:
		if st.open {
			f.StaffedMs += ev.At.Sub(st.since).Milliseconds()
		}
		st.open = false
	case !st.open:
		st.open, st.since = true, ev.At
	}
	st.last = ev.At
}

// endDay adds the figures of the day read to its services and total.
func (b *builder) endDay() {
	if b.v.Day == "" {
		return
	}
	d := b.day(b.v.Day)
	for _, sv := range b.v.Services {
		for _, f := range []*Figures{row(d.services, sv.Code), &d.total} {
			f.Issued += sv.Issued
			f.Called += sv.Called
			f.Served += sv.Served
			f.NoShows += sv.NoShows
			f.Cancelled += sv.Cancelled
			f.ServiceMs += sv.ServiceSum.Milliseconds()
		}
	}
	for _, m := range []struct {
		staff map[string]*staffing
		rows  map[string]*Figures
	}{{b.staff, d.counters}, {b.staffP, d.people}} {
		for id, st := range m.staff {
			if st.open {
				row(m.rows, id).StaffedMs += st.last.Sub(st.since).Milliseconds()
			}
		}
		clear(m.staff)
	}
	b.v = view.New(*b.s, view.Opts{})
}

// assemble adds the days from..to up into a report, and the bookings of
// their slots from every day of days.
func assemble(s *queue.Site, f, t time.Time, days map[string]*dayFigures) Report {
	r := Report{Site: s.ID, From: f.Format(time.DateOnly), To: t.Format(time.DateOnly)}
	sum := newDayFigures()
	for d := f; !d.After(t); d = d.AddDate(0, 0, 1) {
		day := d.Format(time.DateOnly)
		df := days[day]
		if df == nil {
			df = newDayFigures()
		}
		sum.total.Add(&df.total)
		r.Days = append(r.Days, DayStats{Day: day, Stats: df.total.Stats()})
		for _, m := range [][2]map[string]*Figures{{sum.services, df.services}, {sum.counters, df.counters}} {
			for id, x := range m[1] {
				row(m[0], id).Add(x)
			}
		}
	}
	for _, df := range days {
		for k, x := range df.bookings {
			if day, _, _ := strings.Cut(k, " "); day >= r.From && day <= r.To {
				row(sum.bookings, k).Add(x)
			}
		}
	}
	r.Bookings = bookingRows(s, f, t, sum.bookings)
	r.Total = sum.total.Stats()
	var codes, ids []string
	for _, sv := range s.Services {
		codes = append(codes, sv.Code)
	}
	for _, c := range s.Counters {
		ids = append(ids, c.ID)
	}
	r.Services = rows(codes, sum.services)
	r.Counters = rows(ids, sum.counters)
	return r
}

// bookingRows lists the booking figures of the slot days f..t (m, by
// "day resource"): every configured resource on every day, then those
// seen only in events, by day and resource.
func bookingRows(s *queue.Site, f, t time.Time, m map[string]*Figures) []BookingRow {
	var out []BookingRow
	for d := f; !d.After(t); d = d.AddDate(0, 0, 1) {
		day := d.Format(time.DateOnly)
		for _, res := range s.Resources {
			out = append(out, bookingRow(day, res.ID, m[day+" "+res.ID]))
			delete(m, day+" "+res.ID)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		day, res, _ := strings.Cut(k, " ")
		out = append(out, bookingRow(day, res, m[k]))
	}
	return out
}

// rows lists the configured ids in order, then the others seen, sorted
// (a service or counter no longer configured still appears).
func rows(configured []string, m map[string]*Figures) []Row {
	var out []Row
	for _, id := range ordered(configured, m) {
		out = append(out, Row{ID: id, Stats: row(m, id).Stats()})
	}
	return out
}

func bookingRow(day, id string, f *Figures) BookingRow {
	r := BookingRow{Day: day, Resource: id}
	if f != nil {
		r.Booked, r.Cancelled, r.OnTime, r.Late, r.Missed = f.Booked, f.BookCancelled, f.OnTime, f.Late, f.Missed
	}
	return r
}

// ErrFormat is returned for an unknown output format.
var ErrFormat = errors.New("report: unknown format (want table, csv or json)")
