package tui

import (
	"slices"
	"strconv"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
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

// service is one row of the services table.
type service struct {
	code, name  string
	target      time.Duration // wait target from the configuration; 0: none
	waiting     int           // from the snapshot, then kept by events
	served      int
	issued      int
	noShows     int // counted from today's events
	open        bool
	lastCalled  string
	waitSum     time.Duration // waits of the calls seen today
	full        bool          // daily cap reached (snapshot)
	snapLongest time.Duration // longest wait at the snapshot; 0: none or unknown
	snapAvg     time.Duration // average wait today at the snapshot; 0: unknown
	waitN       int
	serves      bool // seen in a snapshot (false: only in the configuration)
}

// counter is one row of the counters table.
type counter struct {
	id      uint32
	name    string
	state   wire.CounterState
	number  string // ticket it handles; empty: none
	status  wire.TicketStatus
	service string
	since   time.Time // when number was called or started; zero: unknown
	served  int       // today's DONE events at this counter
	serves  []string  // service codes it serves (configuration)
	keypad  string    // id of its keypad device (configuration); empty: none
	seen    time.Time // last event whose actor is its keypad
	// health of its keypad and LED board from the last snapshot:
	// "connected", "offline", or "" when the daemon reported none.
	keypadHealth, boardHealth string
}

// ticket is what the console knows of one of today's tickets from events.
type ticket struct {
	status  wire.TicketStatus
	queue   string
	counter uint32
	since   time.Time // issued, or put back in a queue
	at      time.Time // called or started at its counter
}

// site is everything the console shows about one site.
type site struct {
	code, name string
	loc        *time.Location
	conn       Conn
	state      LinkState
	attempt    int    // failed redials since the connection was lost
	lastErr    string // why it is not connected
	day        string // service day
	version    uint64 // last event applied
	counts     uint64 // version of the snapshot the counts come from
	snapAt     time.Time
	haveSnap   bool
	updated    time.Time // last update from the daemon (snapshot or event)
	services   []*service
	counters   []*counter
	tickets    map[string]*ticket
	events     []wire.Event
	offline    map[string]string // device -> what is wrong
	historyAt  time.Time         // time of the first event of today seen
	needsFresh bool              // a day change was seen: ask for a snapshot
	healthAt   time.Time         // last snapshot asked for device health
}

func newSite(o SiteOpts) *site {
	s := &site{code: o.Code, name: o.Name, loc: o.Location, conn: o.Conn, tickets: map[string]*ticket{}, offline: map[string]string{}}
	if s.loc == nil {
		s.loc = time.UTC
	}
	for _, sv := range o.Services {
		s.services = append(s.services, &service{code: sv.Code, name: sv.Name, target: sv.WaitTarget, open: true})
	}
	for _, c := range o.Counters {
		s.counters = append(s.counters, &counter{id: c.ID, name: c.Name, serves: c.Services, keypad: c.Keypad})
	}
	return s
}

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
	c := &counter{id: id, name: "Counter " + strconv.FormatUint(uint64(id), 10)}
	s.counters = append(s.counters, c)
	slices.SortStableFunc(s.counters, func(a, b *counter) int { return int(a.id) - int(b.id) })
	return c
}

// holder returns the counter handling number, or nil.
func (s *site) holder(number string) *counter {
	if number == "" {
		return nil
	}
	for _, c := range s.counters {
		if c.number == number {
			return c
		}
	}
	return nil
}

// applySnapshot takes the counts and counter states of snap when it is
// newer than what the console has. It reports whether it was taken.
func (s *site) applySnapshot(snap *wire.Snapshot, now time.Time) bool {
	if s.haveSnap && snap.Version < s.counts {
		return false
	}
	if s.haveSnap && snap.Version < s.version {
		// Events after it were applied already: they are newer.
		return false
	}
	if s.day != "" && snap.ServiceDay != "" && snap.ServiceDay != s.day {
		s.resetDay()
	}
	s.haveSnap = true
	// The counts come from the snapshot; events up to its version may
	// still follow (history, or the resume after a reconnect) and only feed
	// what the snapshot does not carry.
	s.counts = snap.Version
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
	for _, si := range snap.Services {
		sv := s.service(si.Code)
		if si.Name != "" {
			sv.name = si.Name
		}
		sv.waiting, sv.served, sv.issued, sv.open = int(si.Waiting), int(si.Served), int(si.Issued), si.Open
		sv.noShows, sv.full = int(si.NoShows), si.Full
		sv.snapLongest = time.Duration(si.LongestWaitS) * time.Second
		sv.snapAvg = time.Duration(si.AvgWaitS) * time.Second
		if sv.target == 0 {
			sv.target = time.Duration(si.WaitTargetS) * time.Second
		}
		if si.LastCalled != "" {
			sv.lastCalled = si.LastCalled
		}
		sv.serves = true
	}
	for _, ci := range snap.Counters {
		c := s.counter(ci.ID)
		if ci.Name != "" {
			c.name = ci.Name
		}
		if c.number != ci.Number {
			c.since = time.Time{}
			if t := s.tickets[ci.Number]; t != nil && t.counter == ci.ID {
				c.since = t.at
			}
		}
		c.state, c.number, c.status, c.service = ci.State, ci.Number, ci.Status, ci.Service
		c.served = int(ci.Served)
		if ci.SinceMS != 0 && ci.Number != "" {
			c.since = time.UnixMilli(ci.SinceMS)
		}
	}
	for _, c := range s.counters {
		if !slices.ContainsFunc(snap.Counters, func(ci wire.CounterInfo) bool { return ci.ID == c.id }) && len(snap.Counters) > 0 {
			c.number, c.status, c.service = "", 0, ""
		}
	}
	return true
}

// resetDay forgets what was counted for the previous service day.
func (s *site) resetDay() {
	for _, sv := range s.services {
		sv.served, sv.issued, sv.noShows, sv.waitSum, sv.waitN, sv.lastCalled = 0, 0, 0, 0, 0, ""
	}
	for _, c := range s.counters {
		c.served = 0
	}
	s.tickets = map[string]*ticket{}
	s.historyAt = time.Time{}
}

// applyEvent applies e if it is newer than the last event applied. Events
// at or below the version of the last snapshot (replayed history) only feed
// what the snapshot does not carry: no-shows, wait times, how long a
// counter has had its ticket, the event stream.
func (s *site) applyEvent(e *wire.Event, now time.Time) bool {
	if e.Version != 0 && e.Version <= s.version {
		return false
	}
	if e.Version > s.version {
		s.version = e.Version
	}
	s.updated = now
	at := time.UnixMilli(e.TimeMS)
	if e.TimeMS == 0 {
		at = now
	}
	if e.ServiceDay != "" && s.day != "" && e.ServiceDay != s.day {
		if e.ServiceDay < s.day {
			return true // yesterday's, replayed: nothing to count today
		}
		s.resetDay()
		s.day = e.ServiceDay
		s.needsFresh = true
	}
	if s.day == "" {
		s.day = e.ServiceDay
	}
	live := e.Version > s.counts || !s.haveSnap
	if s.historyAt.IsZero() || at.Before(s.historyAt) {
		s.historyAt = at
	}
	s.events = append(s.events, *e)
	if len(s.events) > maxEvents {
		s.events = slices.Delete(s.events, 0, len(s.events)-maxEvents)
	}
	for _, c := range s.counters {
		if c.keypad != "" && c.keypad == e.Actor {
			c.seen = at
		}
	}
	switch e.Kind {
	case wire.EventCounterOpened, wire.EventCounterPaused, wire.EventCounterClosed:
		if c := s.counter(e.Counter); c != nil && live {
			c.state = map[wire.EventKind]wire.CounterState{
				wire.EventCounterOpened: wire.CounterOpen, wire.EventCounterPaused: wire.CounterPaused,
				wire.EventCounterClosed: wire.CounterClosed,
			}[e.Kind]
		}
		return true
	case wire.EventPrintFailed:
		s.offline[e.Actor] = "print failed " + at.In(s.loc).Format("15:04")
		return true
	}
	if e.Number == "" {
		return true
	}
	s.applyTicket(e, at, live)
	return true
}

// applyTicket follows one ticket event.
func (s *site) applyTicket(e *wire.Event, at time.Time, live bool) {
	prev := s.tickets[e.Number]
	held := s.holder(e.Number)
	var wasWaiting bool
	switch {
	case prev != nil:
		wasWaiting = prev.status == wire.StatusWaiting
	case e.Kind == wire.EventCalled:
		wasWaiting = true
	case e.Kind == wire.EventCancelled, e.Kind == wire.EventExpired:
		wasWaiting = held == nil
	}
	if wasWaiting && e.Kind == wire.EventIssued {
		wasWaiting = false
	}
	if live {
		if wasWaiting {
			q := e.Service
			if prev != nil && prev.queue != "" {
				q = prev.queue
			}
			if sv := s.service(q); sv != nil && sv.waiting > 0 {
				sv.waiting--
			}
		}
		if e.Status == wire.StatusWaiting {
			if sv := s.service(e.Service); sv != nil {
				sv.waiting++
			}
		}
	}
	sv := s.service(e.Service)
	switch e.Kind {
	case wire.EventIssued:
		if live && sv != nil {
			sv.issued++
		}
	case wire.EventCalled:
		if sv != nil {
			sv.lastCalled = e.Number
			if wasWaiting && prev != nil && !prev.since.IsZero() {
				sv.waitSum += at.Sub(prev.since)
				sv.waitN++
			}
		}
	case wire.EventNoShow:
		if live && sv != nil {
			sv.noShows++
		}
	case wire.EventDone:
		if live && sv != nil {
			sv.served++
		}
		c := s.counter(e.Counter)
		if c == nil {
			c = held
		}
		if c != nil && live {
			c.served++
		}
	}
	// The counter side.
	switch e.Status {
	case wire.StatusCalled, wire.StatusServing:
		c := s.counter(e.Counter)
		if c == nil {
			break
		}
		changed := e.Kind == wire.EventCalled || e.Kind == wire.EventServing
		if live {
			if held != nil && held != c {
				held.clear()
			}
			if changed || c.number != e.Number || c.since.IsZero() {
				c.since = at
			}
			c.number, c.status, c.service = e.Number, e.Status, e.Service
		} else if c.number == e.Number && changed {
			c.since = at
		}
	default:
		if held != nil && live {
			held.clear()
		}
	}
	// What the console remembers of the ticket.
	switch e.Status {
	case wire.StatusDone, wire.StatusCancelled, wire.StatusExpired:
		delete(s.tickets, e.Number)
		return
	}
	t := prev
	if t == nil {
		t = &ticket{}
		s.tickets[e.Number] = t
	}
	switch {
	case e.Kind == wire.EventIssued, e.Kind == wire.EventReentered:
		t.since = at
	case e.Status == wire.StatusWaiting && t.since.IsZero():
		t.since = at
	}
	t.status, t.queue, t.counter = e.Status, e.Service, 0
	if e.Status == wire.StatusCalled || e.Status == wire.StatusServing {
		t.counter = e.Counter
		if e.Kind == wire.EventCalled || e.Kind == wire.EventServing || t.at.IsZero() {
			t.at = at
		}
	}
}

func (c *counter) clear() {
	c.number, c.status, c.service, c.since = "", 0, "", time.Time{}
}

// longest returns the longest wait in service code now, and whether it is a
// lower bound (some waiting tickets came before the events the console saw).
func (s *site) longest(sv *service, now time.Time) (time.Duration, bool) {
	var d time.Duration
	known := 0
	for _, t := range s.tickets {
		if t.status == wire.StatusWaiting && t.queue == sv.code {
			known++
			if w := now.Sub(t.since); w > d {
				d = w
			}
		}
	}
	if sv.waiting > known && sv.snapLongest > 0 && !s.snapAt.IsZero() {
		// The snapshot knows the longest wait exactly.
		return max(d, sv.snapLongest+now.Sub(s.snapAt)), false
	}
	if sv.waiting > known {
		from := s.historyAt
		if from.IsZero() || (!s.snapAt.IsZero() && s.snapAt.Before(from)) {
			from = s.snapAt
		}
		if !from.IsZero() && now.Sub(from) > d {
			d = now.Sub(from)
		}
		return d, true
	}
	return d, false
}

// average returns the average wait of the calls seen today.
func (sv *service) average() (time.Duration, bool) {
	if sv.waitN == 0 {
		return sv.snapAvg, sv.snapAvg > 0
	}
	return sv.waitSum / time.Duration(sv.waitN), true
}

// waitingFor is how many tickets wait in the services counter c serves
// (every service when the configuration does not say).
func (s *site) waitingFor(c *counter) int {
	n := 0
	for _, sv := range s.services {
		if c == nil || len(c.serves) == 0 || slices.Contains(c.serves, sv.code) {
			n += sv.waiting
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
