package queue

import (
	"fmt"
	"regexp"
	"slices"
	"time"
)

// Site is a branch or hall: its services, counters, time zone and the
// local time at which the service day rolls over.
type Site struct {
	ID       string
	Names    map[string]string // by language code
	Location *time.Location
	Rollover time.Duration // offset from local midnight, e.g. 4h
	// HeldGrace is how long after the day rolls over a ticket a counter
	// still holds (called, or being served) may be finished there: started,
	// recalled, completed or marked no-show as on any other day. Past it
	// the sweep expires the ticket and frees the counter. 0 means
	// DefaultHeldGrace. Waiting tickets of a past day expire at the
	// rollover itself.
	HeldGrace time.Duration
	Ranks     map[Class]int // nil: DefaultRanks
	// ClassNames are the display names of ticket classes, by class then
	// language (config sites[].class_names); a class without one is shown
	// by a built-in English word, or its code.
	ClassNames map[Class]map[string]string
	Services   []Service
	Counters   []Counter
	// Resources are what patients book; Appointments the booking rules
	// (zero fields take the Default* values).
	Resources    []Resource
	Appointments Appointments

	// Languages are the site's languages, the main one first (config
	// sites[].languages); empty means English. Every reader shows names in
	// the first of them that has one: see PickName.
	Languages []string
}

// Hours is one opening window on some weekdays, as offsets from local
// midnight. Close must be after Open.
type Hours struct {
	Days  []time.Weekday
	Open  time.Duration
	Close time.Duration
}

// Ratio serves one ticket of a priority class after every NormalPerPriority
// other tickets (the rule Brazilian banks use).
type Ratio struct {
	Priority          []Class
	NormalPerPriority int
}

// TimeoutAction is what happens to a called ticket nobody started in time.
type TimeoutAction string

// Timeout actions.
const (
	TimeoutNoShow  TimeoutAction = "noshow"
	TimeoutRequeue TimeoutAction = "requeue"
)

// Service is one queue of a site.
type Service struct {
	Code          string
	Names         map[string]string
	Prefix        string
	Width         int
	DailyCap      int     // 0: no cap
	Hours         []Hours // empty: always open
	AvgService    time.Duration
	WaitTarget    time.Duration
	MaxWait       time.Duration // a ticket waiting longer is called first; 0: off
	RevisitAfter  int           // a revisit lands exactly this many places after the head
	ReentryAfter  int           // a re-entered no-show lands this many places after the head
	MaxReentries  int           // re-entries allowed per ticket
	CallTimeout   time.Duration // 0: off
	TimeoutAction TimeoutAction
	Ratio         *Ratio
}

// Policy is how a counter serving several services picks the next ticket.
type Policy string

// Counter policies.
const (
	PolicyStrict   Policy = "strict"   // services in listed order
	PolicyWeighted Policy = "weighted" // longest wait times weight
)

// CounterService is one service a counter serves, with its weight.
type CounterService struct {
	Service string
	Weight  int
}

// Counter is a window or desk.
type Counter struct {
	ID       string
	Names    map[string]string
	Services []CounterService
	Policy   Policy
	Zone     string
}

var codeRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// Validate checks a site definition; the config package reports friendlier,
// key-named errors first, this is the engine's own guard.
func (s *Site) Validate() error {
	if !codeRE.MatchString(s.ID) {
		return fmt.Errorf("queue: site id %q: want 1-32 letters, digits, _ or -", s.ID)
	}
	if s.Location == nil {
		return fmt.Errorf("queue: site %s: no time zone", s.ID)
	}
	if s.HeldGrace < 0 || s.HeldGrace >= 24*time.Hour {
		return fmt.Errorf("queue: site %s: held grace %v outside 0 to 24h", s.ID, s.HeldGrace)
	}
	if s.Rollover < 0 || s.Rollover >= 24*time.Hour {
		return fmt.Errorf("queue: site %s: rollover %v outside one day", s.ID, s.Rollover)
	}
	seen := map[string]bool{}
	for _, sv := range s.Services {
		if !codeRE.MatchString(sv.Code) || seen[sv.Code] {
			return fmt.Errorf("queue: site %s: service code %q invalid or repeated", s.ID, sv.Code)
		}
		seen[sv.Code] = true
		if sv.Width < 1 || sv.Width > 9 {
			return fmt.Errorf("queue: site %s service %s: width %d outside 1..9", s.ID, sv.Code, sv.Width)
		}
		if sv.Ratio != nil && sv.Ratio.NormalPerPriority < 1 {
			return fmt.Errorf("queue: site %s service %s: ratio needs normal_per_priority >= 1", s.ID, sv.Code)
		}
	}
	if err := s.validateResources(seen); err != nil {
		return err
	}
	cseen := map[string]bool{}
	for _, c := range s.Counters {
		if !codeRE.MatchString(c.ID) || cseen[c.ID] {
			return fmt.Errorf("queue: site %s: counter id %q invalid or repeated", s.ID, c.ID)
		}
		cseen[c.ID] = true
		if len(c.Services) == 0 {
			return fmt.Errorf("queue: site %s counter %s: serves no service", s.ID, c.ID)
		}
		for _, cs := range c.Services {
			if !seen[cs.Service] {
				return fmt.Errorf("queue: site %s counter %s: unknown service %q", s.ID, c.ID, cs.Service)
			}
		}
	}
	return nil
}

func (s *Site) service(code string) (*Service, error) {
	for i := range s.Services {
		if s.Services[i].Code == code {
			return &s.Services[i], nil
		}
	}
	return nil, fmt.Errorf("%w: %q at site %s", ErrUnknownService, code, s.ID)
}

func (s *Site) counter(id string) (*Counter, error) {
	for i := range s.Counters {
		if s.Counters[i].ID == id {
			return &s.Counters[i], nil
		}
	}
	return nil, fmt.Errorf("%w: %q at site %s", ErrUnknownCounter, id, s.ID)
}

func (s *Site) rank(c Class) int {
	ranks := s.Ranks
	if ranks == nil {
		ranks = DefaultRanks()
	}
	switch c {
	case ClassRevisit, ClassReentered:
		c = ClassNormal
	}
	if r, ok := ranks[c]; ok {
		return r
	}
	return ranks[ClassNormal]
}

// DefaultHeldGrace is Site.HeldGrace when it is zero: a consultation that
// runs over the rollover of a 24-hour desk ends normally, and a counter
// left holding a ticket overnight is free by the morning.
const DefaultHeldGrace = 4 * time.Hour

// heldGrace is the site's HeldGrace or its default.
func (s *Site) heldGrace() time.Duration {
	if s.HeldGrace > 0 {
		return s.HeldGrace
	}
	return DefaultHeldGrace
}

// HeldSinceDay is the oldest service day whose tickets a counter may still
// hold at t: tickets called or served on an older day are past the grace
// and get expired by the sweep.
func (s *Site) HeldSinceDay(t time.Time) string {
	return s.Day(t.Add(-s.heldGrace()))
}

// Day is the service day of instant t at the site: the local date, shifted
// back by one day before the rollover time. It is computed on the wall clock,
// so a DST change never moves the rollover.
func (s *Site) Day(t time.Time) string {
	return ServiceDay(t, s.Location, s.Rollover)
}

// ServiceDay is the local date of t in loc, minus one day while the local
// wall clock is before rollover.
func ServiceDay(t time.Time, loc *time.Location, rollover time.Duration) string {
	l := t.In(loc)
	clock := time.Duration(l.Hour())*time.Hour + time.Duration(l.Minute())*time.Minute + time.Duration(l.Second())*time.Second
	y, m, d := l.Date()
	if clock < rollover {
		// Noon avoids DST gaps when stepping back a calendar day.
		return time.Date(y, m, d-1, 12, 0, 0, 0, loc).Format(time.DateOnly)
	}
	return time.Date(y, m, d, 12, 0, 0, 0, loc).Format(time.DateOnly)
}

// OpenAt reports whether the service takes tickets at t.
func (sv *Service) OpenAt(t time.Time, loc *time.Location) bool {
	if len(sv.Hours) == 0 {
		return true
	}
	l := t.In(loc)
	clock := time.Duration(l.Hour())*time.Hour + time.Duration(l.Minute())*time.Minute
	for _, h := range sv.Hours {
		if clock < h.Open || clock >= h.Close {
			continue
		}
		if len(h.Days) == 0 {
			return true
		}
		for _, d := range h.Days {
			if d == l.Weekday() {
				return true
			}
		}
	}
	return false
}

// NextOpen is the first minute at or after t at which the service takes
// tickets, within the coming week; false when its hours never open.
func (sv *Service) NextOpen(t time.Time, loc *time.Location) (time.Time, bool) {
	if sv.OpenAt(t, loc) {
		return t, true
	}
	l := t.In(loc)
	y, m, d := l.Date()
	for day := 0; day <= 7; day++ {
		var opens []time.Duration
		for _, h := range sv.Hours {
			opens = append(opens, h.Open)
		}
		slices.Sort(opens)
		for _, o := range opens {
			at := time.Date(y, m, d+day, 0, 0, 0, 0, loc).Add(o)
			if at.After(t) && sv.OpenAt(at, loc) {
				return at, true
			}
		}
	}
	return time.Time{}, false
}

// NumberText is the display text of a sequence: prefix + zero-padded seq.
func (sv *Service) NumberText(seq int) string {
	return fmt.Sprintf("%s%0*d", sv.Prefix, sv.Width, seq)
}
