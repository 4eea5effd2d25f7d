package web

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/nowserving/nowserving/follow"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/report"
	"github.com/nowserving/nowserving/staff"
	"github.com/nowserving/nowserving/view"
)

// The supervisor's live dashboard, /dashboard/{site}: a page for the
// supervisor and admin roles (a session of /login) that follows the site
// over SSE (/dashboard/{site}/events). On connect the stream sends "dash",
// today's whole picture with the waiting line so far; after each batch of
// events a "dash" without the line but with its newest point, which the
// page adds to arrays of a fixed length, so a wall screen runs all day on
// a flat heap.

// dashStep is the time between two points of the waiting line.
const dashStep = 5 * time.Minute

// dashPoints bounds the waiting line: a service day of points, and one.
const dashPoints = int(24*time.Hour/dashStep) + 1

// dashWaitEdges are the lower edges, in minutes, of the bars of the
// distribution of today's waits; the last is open-ended.
var dashWaitEdges = []int{0, 5, 10, 15, 20, 30, 45, 60, 90, 120}

func (s *Server) dashboardRoutes() []route {
	return []route{
		{"GET", "/dashboard/{site}", s.supervisorPage("static/dashboard.html")},
		{"GET", "/dashboard/{site}/events", s.staffSession(s.dashboardEvents)},
		{"GET", "/static/vendor/{file}", s.vendor},
		{"GET", "/reports/{site}", s.reportsPage},
		{"GET", "/reports/{site}/csv", s.staffSession(s.reportsCSV)},
	}
}

// vendor serves the vendored chart library (static/vendor/VERSIONS).
func (s *Server) vendor(w http.ResponseWriter, r *http.Request) { s.serveFile(w, r, "static/vendor/") }

// Dash is what the dashboard shows, sent as the event "dash".
type Dash struct {
	Site    string            `json:"site"`
	Names   map[string]string `json:"names"`
	Lang    string            `json:"lang"`
	Langs   []string          `json:"langs"`
	TZ      string            `json:"tz"`
	Day     string            `json:"day"`
	Version int64             `json:"version"`
	Now     time.Time         `json:"now"`
	// HeartbeatS: the stream sends an event "ping" after that much quiet.
	HeartbeatS float64 `json:"heartbeat_s"`
	// StepS is the time between points of the waiting line; MaxPoints
	// the most points the page keeps.
	StepS     float64 `json:"step_s"`
	MaxPoints int     `json:"max_points"`
	// Series is today's waiting line so far (the first "dash" only);
	// Point its newest point.
	Series   []DashPoint    `json:"series,omitempty"`
	Point    DashPoint      `json:"point"`
	Services []DashService  `json:"services"`
	Counters []DashCounter  `json:"counters"`
	Arrivals [24]int        `json:"arrivals"` // tickets issued per local hour today
	Waits    DashWaits      `json:"waits"`
	Bookings []DashResource `json:"bookings"`
	Served   int            `json:"served"` // tickets done today, all services
}

// DashPoint is the waiting count of each service (in Services' order) at
// T, a Unix time in seconds.
type DashPoint struct {
	T int64 `json:"t"`
	W []int `json:"w"`
}

// DashService is one service now.
type DashService struct {
	Code    string            `json:"code"`
	Names   map[string]string `json:"names"`
	Waiting int               `json:"waiting"`
	// LongestS is how long the one waiting longest has waited; the page
	// counts it on from Oldest.
	LongestS float64    `json:"longest_s"`
	Oldest   *time.Time `json:"oldest,omitempty"`
	TargetS  float64    `json:"target_s"` // 0: none
	AvgWaitS float64    `json:"avg_wait_s"`
	Served   int        `json:"served"`
	Issued   int        `json:"issued"`
	// Breach: the longest wait now is beyond the target.
	Breach bool `json:"breach"`
}

// DashCounter is one counter now: its mode, the ticket in hand and since
// when it is in that state (idle, paused or with the ticket).
type DashCounter struct {
	ID     string            `json:"id"`
	Names  map[string]string `json:"names"`
	Mode   string            `json:"mode"`
	Number string            `json:"number,omitempty"`
	Status string            `json:"status,omitempty"`
	Since  *time.Time        `json:"since,omitempty"`
	Served int               `json:"served"`
}

// DashWaits is the distribution of today's waits (issue to first call):
// per bar of EdgesMin, the waits within their service's target and those
// beyond it (a service without target counts within).
type DashWaits struct {
	EdgesMin []int `json:"edges_min"`
	Within   []int `json:"within"`
	Over     []int `json:"over"`
}

// DashResource is one bookable resource today.
type DashResource struct {
	ID        string            `json:"id"`
	Names     map[string]string `json:"names"`
	Booked    int               `json:"booked"`
	CheckedIn int               `json:"checked_in"`
	Missed    int               `json:"missed"`
	Cancelled int               `json:"cancelled"`
}

// dashDay is the dashboard's picture of today: the live view of the site
// and what the view does not keep (arrivals per hour, the waits, the
// waiting line), all of fixed size but the line, which is bounded.
type dashDay struct {
	site     *queue.Site
	v        *view.Site
	arrivals [24]int
	within   []int
	over     []int
	series   []DashPoint
}

func newDashDay(site *queue.Site, v *view.Site) *dashDay {
	return &dashDay{site: site, v: v, within: make([]int, len(dashWaitEdges)), over: make([]int, len(dashWaitEdges))}
}

// apply folds one event in: the view, and when it is of today, the
// arrivals, waits and the line's point of its time.
func (d *dashDay) apply(e *queue.Event) {
	if !d.v.Apply(e) {
		return
	}
	if queue.ServiceDay(e.At, d.site.Location, d.site.Rollover) != d.v.Day {
		return
	}
	if e.Type == queue.EventIssued {
		d.arrivals[e.At.In(d.site.Location).Hour()]++
	}
	if w, ok := view.FirstCall(e); ok {
		i := 0
		for i+1 < len(dashWaitEdges) && w >= time.Duration(dashWaitEdges[i+1])*time.Minute {
			i++
		}
		if t := d.target(view.Issuer(e)); t > 0 && w > t {
			d.over[i]++
		} else {
			d.within[i]++
		}
	}
	d.mark(e.At)
}

func (d *dashDay) target(code string) time.Duration {
	for i := range d.site.Services {
		if d.site.Services[i].Code == code {
			return d.site.Services[i].WaitTarget
		}
	}
	return 0
}

// point is the waiting count of each configured service at t.
func (d *dashDay) point(t time.Time) DashPoint {
	p := DashPoint{T: t.Truncate(dashStep).Unix(), W: make([]int, 0, len(d.site.Services))}
	for _, sv := range d.site.Services {
		n := 0
		if vs := d.v.Service(sv.Code); vs != nil {
			n = vs.Waiting
		}
		p.W = append(p.W, n)
	}
	return p
}

// mark sets the line's point of t's step to the counts now, dropping the
// oldest point beyond dashPoints.
func (d *dashDay) mark(t time.Time) {
	p := d.point(t)
	if n := len(d.series); n > 0 && d.series[n-1].T >= p.T {
		d.series[n-1].W = p.W
		return
	}
	if len(d.series) == dashPoints {
		d.series = slices.Delete(d.series, 0, 1)
	}
	d.series = append(d.series, p)
}

// loadDashDay builds today's picture at the snapshot sn: today's events up
// to its version read page by page (report.DayStart finds where the day
// starts) for the arrivals, waits and line, then the snapshot's figures,
// which are the truth for what is now.
func (s *Server) loadDashDay(ctx context.Context, site *queue.Site, sn *queue.Snapshot) (*dashDay, error) {
	day := site.Day(s.o.Clock())
	after, err := report.DayStart(ctx, s.o.Engine, site.ID, day)
	if err != nil {
		return nil, err
	}
	d := newDashDay(site, view.New(*site, view.Opts{}))
read:
	for evs, err := range s.o.Engine.EventPages(ctx, site.ID, after, 1000) {
		if err != nil {
			return nil, err
		}
		for i := range evs {
			if evs[i].Version > sn.Version {
				break read
			}
			d.apply(&evs[i])
		}
	}
	series := d.series
	d.v = view.FromSnapshot(*site, view.Opts{}, *sn)
	d.series = series
	d.mark(s.o.Clock())
	return d, nil
}

// dash is the dashboard's state now; with line, the waiting line so far.
func (s *Server) dash(d *dashDay, line bool) Dash {
	site, v, now := d.site, d.v, s.o.Clock()
	out := Dash{Site: site.ID, Names: perLang(site, site.Name), Lang: site.Lang(), Langs: siteLangs(site),
		TZ: site.Location.String(), Day: v.Day, Version: v.Version, Now: now, HeartbeatS: s.o.Heartbeat.Seconds(),
		StepS: dashStep.Seconds(), MaxPoints: dashPoints, Point: d.point(now), Arrivals: d.arrivals,
		Waits:    DashWaits{EdgesMin: dashWaitEdges, Within: d.within, Over: d.over},
		Services: []DashService{}, Counters: []DashCounter{}, Bookings: []DashResource{}}
	if line {
		out.Series = d.series
	}
	for i := range site.Services {
		sv := &site.Services[i]
		ds := DashService{Code: sv.Code, TargetS: sv.WaitTarget.Seconds(),
			Names: perLang(site, func(l string) string { return site.PickName(sv.Names, l, sv.Code) })}
		if vs := v.Service(sv.Code); vs != nil {
			ds.Waiting, ds.Served, ds.Issued = vs.Waiting, vs.Served, vs.Issued
			ds.AvgWaitS = vs.AvgWait().Seconds()
			if vs.Waiting > 0 && !vs.Oldest.IsZero() {
				oldest := vs.Oldest
				ds.Oldest, ds.LongestS = &oldest, max(0, now.Sub(oldest).Seconds())
			}
		}
		ds.Breach = sv.WaitTarget > 0 && ds.LongestS > sv.WaitTarget.Seconds()
		out.Served += ds.Served
		out.Services = append(out.Services, ds)
	}
	for _, c := range v.Counters {
		dc := DashCounter{ID: c.ID, Names: counterNames(site, c.ID), Mode: string(c.Mode), Served: c.Served}
		if dc.Mode == "" {
			dc.Mode = string(queue.CounterClosed)
		}
		if c.Busy() {
			dc.Number, dc.Status = c.Number, string(c.Status)
		}
		if !c.Since.IsZero() {
			since := c.Since
			dc.Since = &since
		}
		out.Counters = append(out.Counters, dc)
	}
	for _, r := range v.Resources() {
		out.Bookings = append(out.Bookings, DashResource{ID: r.ID, Names: resourceNames(site, r.ID),
			Booked: r.Booked, CheckedIn: r.CheckedIn, Missed: r.Missed, Cancelled: r.Cancelled})
	}
	return out
}

// supervisorPage serves the embedded page name to a supervisor or admin
// of the path's site (supervisor).
func (s *Server) supervisorPage(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.supervisor(w, r) {
			return
		}
		s.staffPage(w, name, nil)
	}
}

// supervisor lets a page through for a supervisor or admin of the path's
// site; otherwise it answers: a person not logged in is sent to /login,
// anyone else refused.
func (s *Server) supervisor(w http.ResponseWriter, r *http.Request) bool {
	ss, err := s.session(w, r)
	switch {
	case err != nil:
		writeError(w, s.log, err)
	case ss == nil:
		http.Redirect(w, r, "/login", http.StatusSeeOther)
	default:
		return s.pathSite(w, r) != nil && s.maySupervise(w, r, ss)
	}
	return false
}

// maySupervise answers 403 unless ss is a supervisor's or an admin's
// session of the path's site.
func (s *Server) maySupervise(w http.ResponseWriter, r *http.Request, ss *staff.Session) bool {
	site := r.PathValue("site")
	if ss.Role != queue.RoleCounter && ss.MaySite(site) {
		return true
	}
	s.log.Warn("web: supervisor page refused", "user", ss.Name, "role", ss.Role, "site", site, "path", r.URL.Path)
	writeProblem(w, http.StatusForbidden, "forbidden_site", "not a supervisor of this site",
		"the dashboard and reports are for the supervisor and admin roles of the site")
	return false
}

// dashboardEvents is the dashboard's stream: "dash" with the line on
// connect (and after a gap, a reload or a new day), then "dash" with the
// newest point after each batch.
func (s *Server) dashboardEvents(w http.ResponseWriter, r *http.Request) {
	wake := s.o.Engine.SitesChanged()
	site := s.pathSite(w, r)
	if site == nil || !s.maySupervise(w, r, sessionOf(r)) {
		return
	}
	f := s.follower(site.ID, follow.Opts{})
	first, err := f.Poll(r.Context())
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	d, err := s.loadDashDay(r.Context(), site, first.Snapshot)
	if err != nil {
		writeError(w, s.log, err)
		return
	}
	s.serveEvents(w, r, f, &page{"dash", s.dash(d, true), wake}, func(ctx context.Context, st *stream, u follow.Update) error {
		if s.reread(st, &site) {
			st.fol.Refresh()
			return nil
		}
		line := u.Snapshot != nil
		if line {
			var err error
			if d, err = s.loadDashDay(ctx, site, u.Snapshot); err != nil {
				return err
			}
		}
		for i := range u.Events {
			d.apply(&u.Events[i])
		}
		if !line && site.Day(s.o.Clock()) != d.v.Day {
			st.fol.Refresh() // a new day: the next update is its snapshot
			return nil
		}
		d.mark(s.o.Clock())
		return st.send(d.v.Version, "dash", s.dash(d, line))
	})
}

// resourceNames is the resource's name in each of the site's languages.
func resourceNames(site *queue.Site, id string) map[string]string {
	var names map[string]string
	for _, r := range site.Resources {
		if r.ID == id {
			names = r.Names
		}
	}
	return perLang(site, func(l string) string { return site.PickName(names, l, id) })
}
