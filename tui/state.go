package tui

import (
	"maps"
	"slices"
	"time"

	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/view"
)

// maxEvents is how many events a site keeps for the event stream.
const maxEvents = 500

// LinkState is the state of a site's connection, as the header shows it.
type LinkState int

// Connection states.
const (
	// LinkConnecting: the first connection is being made.
	LinkConnecting LinkState = iota
	// LinkConnected: authenticated and subscribed.
	LinkConnected
	// LinkReconnecting: the connection was lost; the client redials.
	LinkReconnecting
	// LinkAuthRefused: the daemon refused the device id or secret.
	LinkAuthRefused
	// LinkClosed: the session ended.
	LinkClosed
)

// service is one row of the services table: what the configuration and
// the snapshots say of it. Its figures are the view's (site.figures).
type service struct {
	code, name string
	named      bool          // name from the configuration, in the console's language: the snapshot's (the daemon's main language) does not replace it
	target     time.Duration // wait target from the configuration; 0: none
	open, full bool          // taking tickets, daily cap reached (snapshot)
	lastCalled string        // from the snapshot the view started from, until an event names one
	// lower: the snapshot the view started from counted waiting tickets
	// without saying how long they wait, so a longest wait counted from
	// the snapshot is a lower bound.
	lower bool
}

// counter is one row of the counters table: what the configuration says
// of it and the health of its devices. Its figures are the view's
// (site.holds).
type counter struct {
	id     uint32
	name   string
	named  bool      // as service.named
	serves []string  // service codes it serves (configuration)
	keypad string    // id of its keypad device (configuration); empty: none
	seen   time.Time // last event whose actor is its keypad
	// person is who last acted at it from the browser counter page (an
	// event's actor user:NAME@counter-ID); its keypad acting clears it.
	person string
	// health of its keypad and LED board from the last snapshot:
	// "connected", "offline", or "" when the daemon reported none.
	keypadHealth, boardHealth string
}

// site is everything the console shows about one site. Its figures
// (waits, counts, what each counter holds) are one view.Site, the reducer
// every reader of the daemon uses: started from a snapshot and fed every
// event after it.
type site struct {
	code, name string
	loc        *time.Location // for clock times
	// dayLoc and rollover are how the view counts service days; with no
	// zone configured, dayLoc is guessed from the snapshots (zoneOf).
	dayLoc    *time.Location
	rollover  time.Duration
	guessZone bool
	conn      Conn
	state     LinkState
	attempt   int    // failed redials since the connection was lost
	lastErr   string // why it is not connected
	day       string // service day the daemon last named
	version   uint64 // last event received
	v         *view.Site
	// hist replays the events a snapshot already counts (the history the
	// console asks for); nil when none is expected.
	hist     *history
	snapAt   time.Time // daemon clock of the last snapshot
	seededAt time.Time // daemon clock of the snapshot the view started from
	haveSnap bool
	updated  time.Time // last update from the daemon (snapshot or event)
	services []*service
	counters []*counter
	events   []wire.Event
	offline  map[string]string // device -> what is wrong
	// resourceNames are the bookable resources' names: the
	// configuration's (namedRes), else the snapshots'.
	resourceNames map[string]string
	namedRes      map[string]string // SiteOpts.Resources
	needsFresh    bool              // the day changed: ask for a snapshot
	freshFor      string            // the day a snapshot was last asked for
	healthAt      time.Time         // last snapshot asked for device health
}

// history is the replay of the events up to the version of the snapshot
// the view started from. When it reaches the snapshot and agrees with it
// (see agree), it replaces the view, which then knows when each waiting
// ticket was issued (a snapshot gives only the longest wait, in seconds).
type history struct {
	v *view.Site
}

func newSite(o SiteOpts) *site {
	s := &site{code: o.Code, name: o.Name, loc: o.Location, rollover: o.Rollover, conn: o.Conn,
		offline: map[string]string{}, guessZone: o.Location == nil,
		resourceNames: maps.Clone(o.Resources), namedRes: o.Resources}
	if s.loc == nil {
		s.loc = time.UTC
	}
	s.dayLoc = s.loc
	for _, sv := range o.Services {
		s.services = append(s.services, &service{code: sv.Code, name: sv.Name, named: sv.Name != "", target: sv.WaitTarget, open: true})
	}
	for _, c := range o.Counters {
		s.counters = append(s.counters, &counter{id: c.ID, name: c.Name, named: c.Name != "", serves: c.Services, keypad: c.Keypad})
	}
	s.v = view.New(s.def(), view.Opts{})
	return s
}

// def is the site as the view knows it: its zone and the services and
// counters the console lists.
func (s *site) def() queue.Site {
	d := queue.Site{ID: s.code, Location: s.dayLoc, Rollover: s.rollover}
	for _, sv := range s.services {
		d.Services = append(d.Services, queue.Service{Code: sv.code})
	}
	for _, c := range s.counters {
		d.Counters = append(d.Counters, queue.Counter{ID: counterID(c.id)})
	}
	return d
}

// counterID is the queue's id of counter n.
func counterID(n uint32) string { return queue.CounterID(n) }

func (s *site) service(code string) *service {
	for _, sv := range s.services {
		if sv.code == code {
			return sv
		}
	}
	if code == "" {
		return nil
	}
	sv := &service{code: code, name: code, open: true}
	s.services = append(s.services, sv)
	return sv
}

func (s *site) counter(id uint32) *counter {
	if id == 0 {
		return nil
	}
	for _, c := range s.counters {
		if c.id == id {
			return c
		}
	}
	c := &counter{id: id, name: "Counter " + queue.CounterID(id)}
	s.counters = append(s.counters, c)
	slices.SortStableFunc(s.counters, func(a, b *counter) int { return int(a.id) - int(b.id) })
	return c
}

// figures is the view's picture of service sv.
func (s *site) figures(sv *service) view.Service {
	if f := s.v.Service(sv.code); f != nil {
		return *f
	}
	return view.Service{Code: sv.code}
}

// holds is the view's picture of counter c.
func (s *site) holds(c *counter) view.Counter {
	if f := s.v.Counter(counterID(c.id)); f != nil {
		return *f
	}
	return view.Counter{ID: counterID(c.id), Mode: queue.CounterOpen}
}

// list adds the services and counters the view has and the console does
// not list yet.
func (s *site) list() {
	for _, sv := range s.v.Services {
		s.service(sv.Code)
	}
	for _, c := range s.v.Counters {
		if n := queue.CounterNumber(c.ID); n > 0 {
			s.counter(n)
		}
	}
}

// applySnapshot takes snap when it is not older than what the console
// has; a newer one, or one of another day, restarts the view from it. It
// reports whether it was taken.
func (s *site) applySnapshot(snap *wire.Snapshot, now time.Time) bool {
	if s.haveSnap && int64(snap.Version) < s.v.Version {
		return false // events after it were applied already: they are newer
	}
	restart := !s.haveSnap || int64(snap.Version) > s.v.Version || snap.ServiceDay != s.v.Day
	s.haveSnap = true
	if snap.ServiceDay != "" {
		s.day = snap.ServiceDay
	}
	if snap.Site != "" && s.code == "" {
		s.code = snap.Site
	}
	s.snapAt = now
	if snap.TimeMS != 0 {
		s.snapAt = time.UnixMilli(snap.TimeMS)
	}
	s.updated = now
	s.describe(snap, restart)
	if restart {
		if s.guessZone {
			s.dayLoc = zoneOf(s.snapAt)
		}
		s.seededAt = s.snapAt
		s.v = view.FromSnapshot(s.def(), view.Opts{}, protocol.QueueSnapshot(snap))
		s.hist = &history{v: view.New(s.def(), view.Opts{})}
		s.recall(snap.Recent, now)
	}
	s.list()
	return true
}

// recall takes the day's last events that came with a snapshot (and that
// it counts already): the event stream shows them at once, and when they
// go back to the day's first event the history they make replaces the
// snapshot's figures (see replay), without asking the daemon for more.
func (s *site) recall(evs []wire.Event, now time.Time) {
	for i := range evs {
		e := &evs[i]
		if e.Version == 0 || int64(e.Version) > s.v.Version {
			continue
		}
		if e.Version > s.version {
			s.version = e.Version
			at := time.UnixMilli(e.TimeMS)
			if e.TimeMS == 0 {
				at = now
			}
			s.remember(e, at)
		}
		if qe, ok := protocol.QueueEvent(e); ok && s.hist != nil {
			qe.At = time.UnixMilli(e.TimeMS)
			s.replay(&qe)
		}
	}
}

// zoneOf is the zone a console without the site's configuration counts
// service days in: one where the snapshot taken at t is at noon, so that
// the view's day ends no sooner than twelve hours on. Each day the daemon
// names anew brings a fresh snapshot, and the zone is guessed again.
func zoneOf(t time.Time) *time.Location {
	u := t.UTC()
	noon := time.Date(u.Year(), u.Month(), u.Day(), 12, 0, 0, 0, time.UTC)
	off := noon.Sub(u).Truncate(time.Minute)
	return time.FixedZone("site", int(off/time.Second))
}

// describe takes what a snapshot says beyond the view's figures: names,
// open and full, wait targets, the number last called.
func (s *site) describe(snap *wire.Snapshot, restart bool) {
	for _, si := range snap.Services {
		sv := s.service(si.Code)
		if sv == nil {
			continue
		}
		if si.Name != "" && !sv.named {
			sv.name = si.Name
		}
		sv.open, sv.full = si.Open, si.Full
		if sv.target == 0 {
			sv.target = time.Duration(si.WaitTargetS) * time.Second
		}
		if restart {
			sv.lastCalled = si.LastCalled
			sv.lower = si.Waiting > 0 && si.LongestWaitS == 0
		}
	}
	for _, ci := range snap.Counters {
		if c := s.counter(ci.ID); c != nil && ci.Name != "" && !c.named {
			c.name = ci.Name
		}
	}
	for _, r := range snap.Resources {
		if s.resourceNames == nil {
			s.resourceNames = map[string]string{}
		}
		if r.Name != "" && s.namedRes[r.ID] == "" {
			s.resourceNames[r.ID] = r.Name
		}
	}
}

// applyEvent applies e if it is newer than the last event received.
// Events the snapshot counts already (the history replayed after it) only
// feed the event stream and the replay that may replace the view.
func (s *site) applyEvent(e *wire.Event, now time.Time) bool {
	if e.Version != 0 && e.Version <= s.version {
		return false
	}
	s.version = max(s.version, e.Version)
	s.updated = now
	at := time.UnixMilli(e.TimeMS)
	if e.TimeMS == 0 {
		at = now
	}
	s.remember(e, at)
	qe, ok := protocol.QueueEvent(e)
	if !ok {
		return true
	}
	qe.At = at
	if s.hist != nil && qe.Version != 0 && qe.Version <= s.v.Version {
		s.replay(&qe)
		return true
	}
	s.hist = nil
	s.v.Apply(&qe)
	s.follow(e.ServiceDay)
	s.list()
	return true
}

// remember keeps what the console shows of every event: the stream, when
// a keypad was last seen, a failed print.
func (s *site) remember(e *wire.Event, at time.Time) {
	s.events = append(s.events, *e)
	if len(s.events) > maxEvents {
		s.events = slices.Delete(s.events, 0, len(s.events)-maxEvents)
	}
	for _, c := range s.counters {
		if c.keypad != "" && c.keypad == e.Actor {
			c.seen = at
			c.person = ""
		}
	}
	if name, _, ok := queue.ParseStaffActor(e.Actor); ok {
		if c := s.counter(e.Counter); c != nil {
			c.person = name
		}
	}
	if e.Kind == wire.EventPrintFailed {
		s.offline[e.Actor] = "print_failed " + at.In(s.loc).Format("15:04") // KIND DETAIL, as applyDevices
	}
}

// replay feeds e, which the view's snapshot counts, to the history, and
// lets the history replace the view when it agrees with the snapshot.
func (s *site) replay(e *queue.Event) {
	h := s.hist
	h.v.Apply(e)
	if h.v.Version < s.v.Version {
		return
	}
	s.hist = nil
	if agree(h.v, s.v) {
		h.v.TakeBookings(s.v)
		s.v = h.v
		for _, sv := range s.services {
			sv.lower = false
		}
	}
}

// agree reports whether a replayed view counts what the snapshot's view
// does, service by service and counter by counter. A replay can only miss
// the first events of the log (the console asks for the last few
// thousand); if it counts every ticket issued today, it saw each of
// today's tickets from its issue, and knows which wait and since when.
func agree(replay, snap *view.Site) bool {
	if replay.Day != snap.Day {
		return false
	}
	for _, want := range snap.Services {
		got := replay.Service(want.Code)
		if got == nil {
			got = &view.Service{}
		}
		if got.Waiting != want.Waiting || got.Issued != want.Issued || got.Called != want.Called ||
			got.Served != want.Served || got.NoShows != want.NoShows || got.Cancelled != want.Cancelled {
			return false
		}
	}
	for _, want := range snap.Counters {
		got := replay.Counter(want.ID)
		if got == nil || got.TicketID != want.TicketID || got.Mode != want.Mode || got.Served != want.Served {
			return false
		}
	}
	return true
}

// follow asks for a fresh snapshot when the daemon names a new service
// day, or when the view's day is not the daemon's (the console counts days
// in a zone it guessed); once a day.
func (s *site) follow(day string) {
	if day == "" {
		return
	}
	fresh := day > s.day || s.v.Day != day
	s.day = max(s.day, day)
	if fresh && s.freshFor != day {
		s.freshFor, s.needsFresh = day, true
	}
}

// longest is the longest wait in service sv now, and whether it is a lower
// bound (tickets the snapshot counted wait since before it, for how long
// it did not say).
func (s *site) longest(sv *service, now time.Time) (time.Duration, bool) {
	f := s.figures(sv)
	return f.LongestWait(now), sv.lower && f.Waiting > 0 && f.Oldest.Equal(s.seededAt)
}

// waitingFor is how many tickets wait in the services counter c serves
// (every service when the configuration does not say).
func (s *site) waitingFor(c *counter) int {
	n := 0
	for _, sv := range s.services {
		if c == nil || len(c.serves) == 0 || slices.Contains(c.serves, sv.code) {
			n += s.figures(sv).Waiting
		}
	}
	return n
}

// applyDevices takes the devices' health from a snapshot: what is offline
// or failing goes on the offline line (replacing what an earlier snapshot
// said of the same device), and each counter learns whether its keypad is
// connected and its LED board answers.
func (s *site) applyDevices(devs []wire.DeviceInfo) {
	if len(devs) == 0 {
		return
	}
	for _, c := range s.counters {
		c.keypadHealth, c.boardHealth = "", ""
	}
	for _, d := range devs {
		delete(s.offline, d.ID)
		if !d.Online || d.Detail != "" {
			what := d.Kind
			if d.Detail != "" {
				what += " " + d.Detail
			}
			s.offline[d.ID] = what
		}
		c := s.counter(d.Counter)
		if c == nil || d.Counter == 0 {
			continue
		}
		word := "connected"
		if !d.Online {
			word = "offline"
		}
		switch d.Kind {
		case "device", "keypad":
			if c.keypad == "" || c.keypad == d.ID || d.Kind == "keypad" {
				c.keypadHealth = word
			}
		case "led":
			if word == "connected" {
				word = "ok"
			}
			c.boardHealth = word
		}
	}
}

// number is the ticket counter c handles, empty when none (or no counter).
func (s *site) number(c *counter) string {
	if c == nil {
		return ""
	}
	return s.holds(c).Number
}
