// Package view is the one reducer of nowserving: it folds a site's
// committed events (queue.Event) into the picture every reader shows — the
// console, the metrics, the LED boards and voice, the hall display and the
// report. It is pure: no store, no clock, no goroutines; the same events
// give the same Site.
//
// Each figure has one definition, the one queue.Snapshot computes from the
// tickets table (see queue.ServiceStatus), so a view replayed from a site's
// log equals its snapshot:
//
//   - Issued, Called and the average wait count today's tickets by the
//     service that issued them (the Issuer of their events), whatever queue a
//     transfer moved them to. Called is the tickets called at least once, the
//     wait is issue to first call (the Waited of the CALLED event with
//     CallCount 1). A ticket is transferred only after a call, so its first
//     call is always in its issuing service's queue.
//   - Waiting, Served, NoShows and Cancelled count today's tickets whose
//     status is now WAITING, DONE, NO_SHOW or CANCELLED, by the queue they are
//     in: a re-entered no-show is waiting again, not a no-show. The longest
//     wait is that of the ticket waiting longest in the queue now, since it
//     last started waiting (issue, re-entry or transfer); the average service
//     time is over today's DONE tickets, start to done.
//   - A counter shows the ticket it called or serves, since when it took it
//     or was freed or changed mode; Served counts today's tickets it
//     completed.
//   - Calls lists the latest calls and recalls of today, newest first, one per
//     number.
//
// "Today" is the service day of the newest event: an event of a later day
// starts a new day (figures, waiting tickets and calls are cleared; counters
// keep the ticket they hold, which they may still finish). Tickets of an
// earlier day move counters but count in no figure.
package view

import (
	"slices"
	"time"

	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/queue"
)

// DefaultCalls is how many recent calls a Site keeps when Opts.Calls is 0.
const DefaultCalls = 8

// Opts configures a Site.
type Opts struct {
	// Calls is how many recent calls are kept (default DefaultCalls).
	Calls int
}

// Site is the picture of one site at one event version.
type Site struct {
	ID      string
	Day     string    // service day of the figures; empty before the first event
	Version int64     // last event applied
	At      time.Time // time of the last event applied
	// Services are the configured services in order, then any other queue
	// seen in the events.
	Services []Service
	// Counters are the configured counters in order, then any other
	// counter seen.
	Counters []Counter
	// Calls are the latest calls of the day, newest first, one per number.
	Calls []Call

	loc      *time.Location
	rollover time.Duration
	maxCalls int
	// waiting holds, per queue, the tickets seen waiting and since when.
	waiting map[string]*waitSet
	// unseen holds, per queue, the waiting tickets a snapshot counted that
	// no event has shown yet, and the earliest time one of them may be
	// waiting since.
	unseen map[string]unseen
	// bookings holds per slot day, from the site's day on, the booking
	// figures of each resource; resources are the resource ids in order
	// (see Resources).
	bookings  map[string]map[string]*Resource
	resources []string
}

type unseen struct {
	n     int
	since time.Time
}

// Service is the picture of one service (one queue) of the day.
type Service struct {
	Code string
	// Waiting is the tickets waiting in the queue now; Oldest is since
	// when the one waiting longest waits (zero when none).
	Waiting int
	Oldest  time.Time
	Issued  int
	Called  int
	Served  int
	NoShows int
	// Cancelled is the tickets of the queue cancelled today.
	Cancelled int
	// WaitSum is the sum of the waits (issue to first call) of the Called
	// tickets; ServiceSum that of the service times of the Served ones.
	WaitSum    time.Duration
	ServiceSum time.Duration
	// LastCalled is the number last called from the queue today.
	LastCalled string
}

// Counter is the picture of one counter.
type Counter struct {
	ID   string
	Mode queue.CounterMode
	// The ticket the counter called or serves; TicketID 0 when idle.
	TicketID int64
	Number   string
	Status   queue.Status // CALLED or SERVING
	Queue    string
	Class    queue.Class
	Since    time.Time // when it took its ticket, was freed or changed mode
	Served   int       // today's tickets it completed
}

// Call is one call or recall of a number to a counter.
type Call struct {
	Version   int64
	Number    string
	Service   string
	Counter   string
	Recall    bool
	CallCount int
	At        time.Time
}

// New returns the empty picture of site def, before any event.
func New(def queue.Site, o Opts) *Site {
	s := &Site{ID: def.ID, loc: def.Location, rollover: def.Rollover, maxCalls: o.Calls,
		waiting: map[string]*waitSet{}, unseen: map[string]unseen{}}
	if s.loc == nil {
		s.loc = time.UTC
	}
	s.maxCalls = positive.Or(s.maxCalls, DefaultCalls)
	for _, sv := range def.Services {
		s.Services = append(s.Services, Service{Code: sv.Code})
	}
	for _, c := range def.Counters {
		s.Counters = append(s.Counters, Counter{ID: c.ID, Mode: queue.CounterOpen})
	}
	for _, r := range def.Resources {
		s.resources = append(s.resources, r.ID)
	}
	return s
}

// Replay returns the picture of site def after evs.
func Replay(def queue.Site, o Opts, evs []queue.Event) *Site {
	s := New(def, o)
	for i := range evs {
		s.Apply(&evs[i])
	}
	return s
}

// FromSnapshot starts the picture of site def from a snapshot, for a reader
// that follows the events after snap.Version. A snapshot does not list the
// waiting tickets: until the ones it counted have been called or left, the
// longest wait of their queue is the snapshot's (growing with the clock),
// an upper bound once its oldest ticket left. Recent calls start empty.
// The booking figures are the snapshot's, of its day and the days after.
func FromSnapshot(def queue.Site, o Opts, snap queue.Snapshot) *Site {
	s := New(def, o)
	s.Day, s.Version, s.At = snap.Day, snap.Version, snap.At
	for _, st := range snap.Services {
		sv := s.service(st.Code)
		sv.Waiting, sv.Issued, sv.Called, sv.Served = st.Waiting, st.Issued, st.Called, st.Served
		sv.NoShows, sv.Cancelled = st.NoShows, st.Cancelled
		sv.WaitSum = st.AvgWait * time.Duration(st.Called)
		sv.ServiceSum = st.AvgService * time.Duration(st.Served)
		if st.Waiting > 0 {
			since := snap.At.Add(-st.LongestWait)
			s.unseen[st.Code] = unseen{n: st.Waiting, since: since}
			sv.Oldest = since
		}
	}
	for _, cs := range snap.Counters {
		c := s.counter(cs.ID)
		c.Mode, c.Since, c.Served = cs.Mode, cs.Since, cs.Served
		if t := cs.Ticket; t != nil {
			c.TicketID, c.Number, c.Status, c.Queue, c.Class = t.ID, t.Number, t.Status, t.Queue, t.Class
		}
	}
	for _, rd := range snap.Resources {
		s.restoreBookings(rd)
	}
	return s
}

// Service returns the picture of a service, nil if none was configured or
// seen.
func (s *Site) Service(code string) *Service {
	for i := range s.Services {
		if s.Services[i].Code == code {
			return &s.Services[i]
		}
	}
	return nil
}

// Counter returns the picture of a counter, nil if none was configured or
// seen.
func (s *Site) Counter(id string) *Counter {
	for i := range s.Counters {
		if s.Counters[i].ID == id {
			return &s.Counters[i]
		}
	}
	return nil
}

// service returns the picture of a queue, adding it when first seen.
func (s *Site) service(code string) *Service {
	if sv := s.Service(code); sv != nil {
		return sv
	}
	s.Services = append(s.Services, Service{Code: code})
	return &s.Services[len(s.Services)-1]
}

// counter returns the picture of a counter, adding it (open) when first
// seen.
func (s *Site) counter(id string) *Counter {
	if c := s.Counter(id); c != nil {
		return c
	}
	s.Counters = append(s.Counters, Counter{ID: id, Mode: queue.CounterOpen})
	return &s.Counters[len(s.Counters)-1]
}

// LongestWait is how long the ticket waiting longest has waited at now; 0
// when none waits.
func (sv *Service) LongestWait(now time.Time) time.Duration {
	if sv.Oldest.IsZero() {
		return 0
	}
	return max(now.Sub(sv.Oldest), 0)
}

// AvgWait is the mean wait, issue to first call, of the tickets called
// today, in whole milliseconds (as the snapshot stores times).
func (sv *Service) AvgWait() time.Duration { return avg(sv.WaitSum, sv.Called) }

// AvgService is the mean service time, start to done, of the tickets served
// today, in whole milliseconds.
func (sv *Service) AvgService() time.Duration { return avg(sv.ServiceSum, sv.Served) }

func avg(sum time.Duration, n int) time.Duration {
	if n <= 0 {
		return 0
	}
	return time.Duration(sum.Milliseconds()/int64(n)) * time.Millisecond
}

// Busy reports whether the counter holds a ticket.
func (c *Counter) Busy() bool { return c.TicketID != 0 }

// Apply folds one event into the picture. An event at or below the version
// already applied (a duplicate delivery) is ignored: Apply reports whether
// the event was applied.
func (s *Site) Apply(e *queue.Event) bool {
	if e.Version != 0 && e.Version <= s.Version {
		return false
	}
	if d := queue.ServiceDay(e.At, s.loc, s.rollover); d > s.Day {
		s.newDay(d)
	}
	if e.Version != 0 {
		s.Version = e.Version
	}
	s.At = e.At
	switch e.Type {
	case queue.EventCounterOpened, queue.EventCounterPaused:
		c := s.counter(e.Counter)
		c.Mode, c.Since = queue.CounterOpen, e.At
		if e.Type == queue.EventCounterPaused {
			c.Mode = queue.CounterPaused
		}
		return true
	}
	if e.Type.IsBooking() {
		s.applyBooking(e)
		return true
	}
	if e.TicketID == 0 {
		return true
	}
	today := e.Day == s.Day || (e.Day == "" && queue.ServiceDay(e.At, s.loc, s.rollover) == s.Day)
	if today {
		s.count(e)
	}
	s.hold(e, today)
	if today && (e.Type == queue.EventCalled || e.Type == queue.EventRecalled) {
		s.call(e)
	}
	return true
}

// newDay clears the figures for service day d.
func (s *Site) newDay(d string) {
	s.Day = d
	s.forgetBookings(d)
	for i := range s.Services {
		s.Services[i] = Service{Code: s.Services[i].Code}
	}
	for i := range s.Counters {
		s.Counters[i].Served = 0
	}
	s.Calls = nil
	clear(s.waiting)
	clear(s.unseen)
}

// count moves one of today's tickets between the figures.
func (s *Site) count(e *queue.Event) {
	if e.Type == queue.EventIssued {
		s.service(Issuer(e)).Issued++
	}
	if e.Type == queue.EventCalled {
		s.service(e.Service).LastCalled = e.Number
	}
	if w, ok := FirstCall(e); ok {
		sv := s.service(Issuer(e))
		sv.Called++
		sv.WaitSum += w
	}
	if d, ok := Completed(e); ok {
		s.service(e.Service).ServiceSum += d
	}
	if e.Type != queue.EventIssued && e.From == e.Status && e.FromQueue == e.Service {
		return // RECALLED, PRINT_FAILED: nothing moved
	}
	if e.From != "" {
		s.leave(e.FromQueue, e.From, e.TicketID)
	}
	sv := s.service(e.Service)
	switch e.Status {
	case queue.StatusWaiting:
		sv.Waiting++
		w := s.waiting[e.Service]
		if w == nil {
			w = newWaitSet()
			s.waiting[e.Service] = w
		}
		w.add(e.TicketID, e.At)
		s.oldest(e.Service)
	case queue.StatusDone:
		sv.Served++
	case queue.StatusNoShow:
		sv.NoShows++
	case queue.StatusCancelled:
		sv.Cancelled++
	}
}

// leave takes ticket id, in status st, out of queue q's figures.
func (s *Site) leave(q string, st queue.Status, id int64) {
	sv := s.service(q)
	switch st {
	case queue.StatusWaiting:
		sv.Waiting--
		if u := s.unseen[q]; !s.waiting[q].remove(id) && u.n > 0 {
			u.n--
			s.unseen[q] = u
		}
		s.oldest(q)
	case queue.StatusDone:
		sv.Served--
	case queue.StatusNoShow:
		sv.NoShows--
	case queue.StatusCancelled:
		sv.Cancelled--
	}
}

// oldest recomputes the Oldest of queue q.
func (s *Site) oldest(q string) {
	o := s.waiting[q].oldest()
	if u := s.unseen[q]; u.n > 0 && (o.IsZero() || u.since.Before(o)) {
		o = u.since
	}
	s.service(q).Oldest = o
}

// hold moves the ticket of e between counters.
func (s *Site) hold(e *queue.Event, today bool) {
	held := e.Status == queue.StatusCalled || e.Status == queue.StatusServing
	if (e.From == queue.StatusCalled || e.From == queue.StatusServing) && e.FromCounter != "" &&
		!(held && e.Counter == e.FromCounter) {
		if c := s.Counter(e.FromCounter); c != nil && c.TicketID == e.TicketID {
			*c = Counter{ID: c.ID, Mode: c.Mode, Since: e.At, Served: c.Served}
		}
	}
	if held && e.Counter != "" {
		c := s.counter(e.Counter)
		if c.TicketID != e.TicketID {
			c.Since = e.At
		}
		c.TicketID, c.Number, c.Status, c.Queue, c.Class = e.TicketID, e.Number, e.Status, e.Service, e.Class
	}
	if today && e.Type == queue.EventDone && e.Counter != "" {
		s.counter(e.Counter).Served++
	}
}

// call records a call or recall in Calls.
func (s *Site) call(e *queue.Event) {
	c := Call{Version: e.Version, Number: e.Number, Service: e.Service, Counter: e.Counter,
		Recall: e.Type == queue.EventRecalled, CallCount: e.CallCount, At: e.At}
	s.Calls = slices.DeleteFunc(s.Calls, func(x Call) bool { return x.Number == c.Number })
	s.Calls = slices.Insert(s.Calls, 0, c)
	if len(s.Calls) > s.maxCalls {
		s.Calls = s.Calls[:s.maxCalls]
	}
}

// Clone returns a deep copy of s, for a reader handing the picture to
// another goroutine.
func (s *Site) Clone() *Site {
	c := *s
	c.Services = slices.Clone(s.Services)
	c.Counters = slices.Clone(s.Counters)
	c.Calls = slices.Clone(s.Calls)
	c.waiting = make(map[string]*waitSet, len(s.waiting))
	for q, w := range s.waiting {
		c.waiting[q] = w.clone()
	}
	c.unseen = make(map[string]unseen, len(s.unseen))
	for q, u := range s.unseen {
		c.unseen[q] = u
	}
	c.bookings = s.cloneBookings()
	c.resources = slices.Clone(s.resources)
	return &c
}

// Issuer is the service that issued the number of e's ticket, the service
// Issued, Called and the wait are counted by. Events written before the
// issuer was recorded name only the queue, which was then the issuer's.
func Issuer(e *queue.Event) string {
	if e.Issuer == "" {
		return e.Service
	}
	return e.Issuer
}

// FirstCall reports whether e is its ticket's first call, and the ticket's
// wait: issue to first call. It is the figure behind Called and the
// average wait.
func FirstCall(e *queue.Event) (time.Duration, bool) {
	return e.Waited, e.Type == queue.EventCalled && e.CallCount == 1
}

// Completed reports whether e ends a service (DONE), and its service time:
// start to done.
func Completed(e *queue.Event) (time.Duration, bool) {
	return e.ServiceTime, e.Type == queue.EventDone
}
