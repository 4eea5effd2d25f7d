package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/nowserving/nowserving/follow"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/view"
)

// DisplayState is what the hall display shows; it is sent as the event
// "state" on every (re)connect and after every batch of changes.
type DisplayState struct {
	Site     string `json:"site"`
	Name     string `json:"name"`
	TimeZone string `json:"tz"`
	Lang     string `json:"lang"` // the site's main language, for the page's own words
	// Langs are the site's languages, the main one first: the page
	// rotates through them (or keeps the one its ?lang= names).
	Langs []string `json:"langs"`
	// Names is the site's name in each of Langs.
	Names map[string]string `json:"names"`
	// HeartbeatS is how often, at most, the stream is silent: it sends an
	// event "ping" after that much quiet, so a page that hears nothing for
	// longer knows its connection is dead even when no error came.
	HeartbeatS float64          `json:"heartbeat_s"`
	Version    int64            `json:"version"`
	Now        time.Time        `json:"now"`
	Services   []DisplayService `json:"services"`
	Calls      []Call           `json:"calls"` // newest first
}

// DisplayService is the waiting count of one service, and whether its
// hours let it take tickets now.
type DisplayService struct {
	Code    string            `json:"code"`
	Name    string            `json:"name"`
	Names   map[string]string `json:"names"` // in each of the site's languages
	Waiting int               `json:"waiting"`
	// Open is whether kiosks take tickets for it now (its hours).
	Open bool `json:"open"`
	// Opens is when it opens next (when closed, or after Closes); absent
	// when its hours never open again.
	Opens *time.Time `json:"opens,omitempty"`
	// Closes is when it closes next, when open with hours: the page
	// turns the service to closed then, without waiting for an event.
	Closes *time.Time `json:"closes,omitempty"`
}

// hoursOf is whether sv's hours take tickets at now, when they next
// close (nil: always open) and when they next open (nil when open and
// never closing, or when they never open again).
func hoursOf(sv *queue.Service, loc *time.Location, now time.Time) (open bool, opens, closes *time.Time) {
	open = sv.OpenAt(now, loc)
	from := now
	if at, ok := sv.NextClose(now, loc); ok {
		closes, from = &at, at
	}
	if open && closes == nil {
		return open, nil, nil // always open
	}
	if at, ok := sv.NextOpen(from, loc); ok {
		opens = &at
	}
	return open, opens, closes
}

// Call is one number called to a counter; it is also sent alone as the
// event "call" (the display chimes and highlights it).
type Call struct {
	Version     int64  `json:"version"`
	Number      string `json:"number"`
	Service     string `json:"service"`
	Counter     string `json:"counter"`
	CounterName string `json:"counter_name"`
	// CounterNames is the counter's name in each of the site's languages.
	CounterNames map[string]string `json:"counter_names"`
	Recall       bool              `json:"recall"`
	// Calling is true while the counter still waits for the number: it
	// turns false when the ticket is started, completed, timed out,
	// marked no-show, transferred or cancelled, so "now calling" shows
	// only numbers that are really being called.
	Calling bool      `json:"calling"`
	At      time.Time `json:"at"`
}

func counterName(site *queue.Site, id string) string { return site.CounterName(id, "", id) }

// siteLangs are the site's languages, the main one first ("en" when none
// is configured).
func siteLangs(site *queue.Site) []string {
	if len(site.Languages) == 0 {
		return []string{"en"}
	}
	return site.Languages
}

// perLang is name(lang) for each of the site's languages.
func perLang(site *queue.Site, name func(lang string) string) map[string]string {
	m := map[string]string{}
	for _, l := range siteLangs(site) {
		m[l] = name(l)
	}
	return m
}

func counterNames(site *queue.Site, id string) map[string]string {
	return perLang(site, func(l string) string { return site.CounterName(id, l, id) })
}

// callScan is how many recent events are read to list the last calls.
const callScan = 2000

// picture is the site's picture at the snapshot of u, with the last calls
// of the day read from the recent events that came with it (view's call
// list: one per number, newest first, cleared when the day changes).
func (s *Server) picture(site *queue.Site, u follow.Update) *view.Site {
	o := view.Opts{Calls: s.o.RecentCalls}
	recent := view.New(*site, o)
	for i := range u.Recent {
		recent.Apply(&u.Recent[i])
	}
	v := view.FromSnapshot(*site, o, *u.Snapshot)
	if recent.Day == v.Day {
		v.Calls = recent.Calls
	}
	return v
}

// call is c as the display shows it; calling tells whether the counter
// still holds the number in CALLED.
func (s *Server) call(site *queue.Site, v *view.Site, c view.Call) Call {
	cc := v.Counter(c.Counter)
	calling := cc != nil && cc.Number == c.Number && cc.Status == queue.StatusCalled
	return Call{Version: c.Version, Number: c.Number, Service: c.Service, Counter: c.Counter,
		CounterName: counterName(site, c.Counter), CounterNames: counterNames(site, c.Counter),
		Recall: c.Recall, Calling: calling, At: c.At}
}

func (s *Server) displayState(site *queue.Site, v *view.Site) DisplayState {
	st := DisplayState{Site: site.ID, Name: site.Name(""), TimeZone: site.Location.String(), Lang: site.Lang(),
		Langs: siteLangs(site), Names: perLang(site, site.Name), HeartbeatS: s.o.Heartbeat.Seconds(),
		Version: v.Version, Now: s.o.Clock(), Services: []DisplayService{}, Calls: []Call{}}
	for _, c := range v.Calls {
		st.Calls = append(st.Calls, s.call(site, v, c))
	}
	for i := range site.Services {
		sv := &site.Services[i]
		waiting := 0
		if vs := v.Service(sv.Code); vs != nil {
			waiting = vs.Waiting
		}
		ds := DisplayService{Code: sv.Code, Name: site.PickName(sv.Names, "", sv.Code),
			Names: perLang(site, func(l string) string { return site.PickName(sv.Names, l, sv.Code) }), Waiting: waiting}
		ds.Open, ds.Opens, ds.Closes = hoursOf(sv, site.Location, st.Now)
		st.Services = append(st.Services, ds)
	}
	return st
}

// displayEvents is the public, read-only stream of the hall display: a
// "state" on connect (so a reconnect needs nothing else), then a "call" per
// call or recall and a fresh "state" after each batch. The picture is a
// view.Site following the events; it is read again from a snapshot after a
// gap in the feed or when the service day changes.
func (s *Server) displayEvents(w http.ResponseWriter, r *http.Request) {
	wake := s.o.Engine.SitesChanged()
	site := s.pathSite(w, r)
	if site == nil {
		return
	}
	f := s.follower(site.ID, follow.Opts{Recent: callScan})
	first, err := f.Poll(r.Context()) // a snapshot: the follower does not resume
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	v := s.picture(site, first)
	s.serveEvents(w, r, f, &page{"state", s.displayState(site, v), wake}, func(ctx context.Context, st *stream, u follow.Update) error {
		if s.reread(st, &site) {
			// A reload: the picture is read again under the new names,
			// services and counters, at once.
			st.fol.Refresh()
			return nil
		}
		if u.Snapshot != nil {
			v = s.picture(site, u)
		}
		for i := range u.Events {
			v.Apply(&u.Events[i])
			if e := &u.Events[i]; e.Type == queue.EventCalled || e.Type == queue.EventRecalled {
				if len(v.Calls) > 0 && v.Calls[0].Version == e.Version {
					if err := st.send(e.Version, "call", s.call(site, v, v.Calls[0])); err != nil {
						return err
					}
				}
			}
		}
		if u.Snapshot == nil && site.Day(s.o.Clock()) != v.Day {
			st.fol.Refresh() // a new day: the next update is its snapshot
			return nil
		}
		return st.send(v.Version, "state", s.displayState(site, v))
	})
}

// reread replaces *site by the engine's definition when a reload changed
// it, and watches for the next change; it reports whether it changed. A
// site the reload removed keeps its last definition (its page shows what
// it showed).
func (s *Server) reread(st *stream, site **queue.Site) bool {
	st.wake = s.o.Engine.SitesChanged() // before Site: a change after it closes this one
	ns, err := s.o.Engine.Site((*site).ID)
	if err != nil || ns == *site {
		return false
	}
	*site = ns
	return true
}

// TicketStatus is what the ticket page shows; sent as the event "status".
type TicketStatus struct {
	Site     string `json:"site"`
	SiteName string `json:"site_name"`
	Lang     string `json:"lang"`
	// Langs are the site's languages, the main one first; the names below
	// are given in each.
	Langs        []string          `json:"langs"`
	SiteNames    map[string]string `json:"site_names"`
	ServiceName  string            `json:"service_name"`
	ServiceNames map[string]string `json:"service_names"`
	CounterName  string            `json:"counter_name,omitempty"`
	CounterNames map[string]string `json:"counter_names,omitempty"`
	Position     `json:"position"`
}

func (s *Server) ticketStatus(ctx context.Context, site *queue.Site, number string) (TicketStatus, error) {
	p, err := s.o.Engine.Position(ctx, site.ID, number)
	if err != nil {
		return TicketStatus{}, err
	}
	q := p.Ticket.Queue
	ts := TicketStatus{Site: site.ID, SiteName: site.Name(""), Lang: site.Lang(), Langs: siteLangs(site),
		SiteNames: perLang(site, site.Name), ServiceName: site.ServiceName(q, ""),
		ServiceNames: perLang(site, func(l string) string { return site.ServiceName(q, l) }),
		Position:     toPosition(p, s.o.Clock())}
	if p.Ticket.Counter != "" {
		ts.CounterName = counterName(site, p.Ticket.Counter)
		ts.CounterNames = counterNames(site, p.Ticket.Counter)
	}
	return ts, nil
}

// ticketEvents is the public stream of one ticket's page: a "status" on
// connect and after every batch of changes that may move it.
func (s *Server) ticketEvents(w http.ResponseWriter, r *http.Request) {
	wake := s.o.Engine.SitesChanged()
	site := s.pathSite(w, r)
	if site == nil {
		return
	}
	number := r.PathValue("number")
	if day := r.URL.Query().Get("day"); day != "" {
		// The QR code names the day: a number is reused every day.
		if today := site.Day(s.o.Clock()); day != today {
			writeProblem(w, http.StatusNotFound, "ticket_not_found", "no such ticket today",
				fmt.Sprintf("ticket %s was for %s; today is %s", number, day, today))
			return
		}
	}
	sn, err := s.o.Engine.Snapshot(r.Context(), site.ID)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	ts, err := s.ticketStatus(r.Context(), site, number)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	s.serveEvents(w, r, s.follower(site.ID, follow.Opts{Resume: true, After: sn.Version}), &page{"status", ts, wake}, func(ctx context.Context, st *stream, u follow.Update) error {
		moved := s.reread(st, &site) || u.Snapshot != nil
		for _, e := range u.Events {
			// Counters opening or pausing change the estimate too.
			moved = moved || e.Service == ts.Ticket.Queue || e.Number == number || e.TicketID == 0
		}
		if !moved {
			return nil
		}
		var err error
		if ts, err = s.ticketStatus(ctx, site, number); err != nil {
			return err
		}
		return st.send(st.fol.Version(), "status", ts)
	})
}

// TicketURL is the address of a ticket's status page under base (the
// daemon's public HTTP address, e.g. https://queue.example.org), for the QR
// code printed on the ticket. It names the service day, so yesterday's
// A023 does not show today's.
func TicketURL(base, site, number, day string) string {
	u := strings.TrimRight(base, "/") + "/t/" + url.PathEscape(site) + "/" + url.PathEscape(number)
	if day != "" {
		u += "?day=" + url.QueryEscape(day)
	}
	return u
}
