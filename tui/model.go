package tui

import (
	"errors"
	"fmt"
	"time"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/protocol/wire"
)

// Opts configures a Model.
type Opts struct {
	// Sites are the sites the console watches, at least one; tab, [ and ]
	// switch between them.
	Sites []SiteOpts
	// Addr is the daemon's address, shown in the header.
	Addr string
	// Counter, when not 0, turns the console into the software keypad of
	// that counter (of the first site).
	Counter uint32
	// Now is the clock; nil means time.Now. Only Init's ticker reads it:
	// the model's time comes in TickMsg.
	Now func() time.Time
	// Renderer renders the styles; nil means lipgloss's default. Tests pass
	// one with the Ascii profile for plain, stable screens.
	Renderer *lipgloss.Renderer
	// Tick is how often durations on screen are refreshed (default 1 s).
	Tick time.Duration
	// Lang is the language of the console's own words (zh, en, pt; others
	// are English); the names come in SiteOpts, in that language too.
	Lang string
}

// SiteOpts describes one site; everything but Code may be left empty (the
// snapshot names services and counters), but wait targets, the services a
// counter serves and its keypad only come from the configuration.
type SiteOpts struct {
	// Code is the site code; empty: the console device's own site (filled
	// in from the first snapshot).
	Code string
	// Name is the site's display name.
	Name string
	// Location is the site's time zone for clock times and service days;
	// nil: guessed from the daemon's snapshots, clock times in UTC.
	Location *time.Location
	// Rollover is when the site's service day starts, after local
	// midnight (queue.Site.Rollover).
	Rollover time.Duration
	// Conn is the connection to act on; nil until a ConnMsg brings it.
	Conn Conn
	// Services lists the services in display order.
	Services []ServiceOpts
	// Counters lists the counters in display order.
	Counters []CounterOpts
	// Resources names the bookable resources (id: name) in the console's
	// language; the snapshot's names (the daemon's main language) do not
	// replace them.
	Resources map[string]string
}

// ServiceOpts is what the configuration says of a service.
type ServiceOpts struct {
	Code, Name string
	// WaitTarget highlights the service when its longest wait exceeds it.
	WaitTarget time.Duration
}

// CounterOpts is what the configuration says of a counter.
type CounterOpts struct {
	ID   uint32
	Name string
	// Services are the codes of the services it calls from.
	Services []string
	// Keypad is the id of its keypad device; empty: none configured.
	Keypad string
}

// SnapshotMsg brings a SNAPSHOT of site Site (an index into Opts.Sites).
type SnapshotMsg struct {
	Site     int
	Snapshot *wire.Snapshot
}

// EventMsg brings one EVENT of site Site.
type EventMsg struct {
	Site  int
	Event *wire.Event
}

// StateMsg reports a change of the connection of site Site.
type StateMsg struct {
	Site  int
	State LinkState
	// Attempt counts the failed redials since the connection was lost.
	Attempt int
	// Err is why the connection is not up, if known.
	Err error
}

// ConnMsg hands the model the connection of site Site once it is made,
// with the site code the daemon welcomed it to.
type ConnMsg struct {
	Site int
	Conn Conn
	Code string
	Day  string
}

// TickMsg moves the model's clock (durations on screen).
type TickMsg time.Time

// prompt is a one-line question at the bottom of the screen, its answer
// edited in a bubbles text input.
type prompt struct {
	label  string
	in     textinput.Model
	submit func(m *Model, value string) tea.Cmd
}

// confirmation is a yes/no question before an action that cannot be undone.
type confirmation struct {
	question string
	run      tea.Cmd
}

// Model is the console: pure state, updated by messages, drawn by View.
// The daemon's updates arrive as SnapshotMsg, EventMsg, StateMsg and
// ConnMsg (see RunSite); actions are commands that call Conn.Do.
type Model struct {
	sites    []*site
	cur      int
	addr     string
	counter  uint32 // counter mode
	now      time.Time
	clock    func() time.Time
	tick     time.Duration
	t        func(string) string // the console's words in its language (words.go)
	width    int
	height   int
	sel      int // selected counter row
	filter   string
	prompt   *prompt
	confirm  *confirmation
	status   string
	statusOK bool
	keys     keyMap
	help     help.Model
	st       styles
}

// New returns the console model for o.
func New(o Opts) *Model {
	m := &Model{addr: o.Addr, counter: o.Counter, clock: o.Now, tick: o.Tick, width: 80, height: 24, t: translator(o.Lang)}
	if m.clock == nil {
		m.clock = time.Now
	}
	m.tick = positive.Or(m.tick, time.Second)
	if len(o.Sites) == 0 {
		o.Sites = []SiteOpts{{}}
	}
	for _, so := range o.Sites {
		m.sites = append(m.sites, newSite(so))
	}
	r := o.Renderer
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	m.st = newStyles(r)
	m.keys = newKeyMap(o.Counter != 0, len(m.sites) > 1, m.t)
	m.help = help.New()
	m.help.ShortSeparator = "  "
	m.help.Styles = help.Styles{
		ShortKey: m.st.key, ShortDesc: m.st.dim, ShortSeparator: m.st.dim, Ellipsis: m.st.dim,
		FullKey: m.st.key, FullDesc: m.st.dim, FullSeparator: m.st.dim,
	}
	if o.Counter != 0 {
		m.sites[0].counter(o.Counter)
	}
	return m
}

func (m *Model) tickCmd() tea.Cmd {
	clock := m.clock
	return tea.Tick(m.tick, func(time.Time) tea.Msg { return TickMsg(clock()) })
}

// Init starts the clock.
func (m *Model) Init() tea.Cmd {
	clock := m.clock
	return tea.Batch(func() tea.Msg { return TickMsg(clock()) }, m.tickCmd())
}

// site returns the site shown.
func (m *Model) site() *site { return m.sites[m.cur] }

// selected returns the counter actions apply to: the counter of counter
// mode, else the selected row.
func (m *Model) selected() *counter {
	s := m.site()
	if m.counter != 0 {
		return s.counter(m.counter)
	}
	if len(s.counters) == 0 {
		return nil
	}
	m.sel = min(max(m.sel, 0), len(s.counters)-1)
	return s.counters[m.sel]
}

// healthEvery is how often a connected console refreshes the devices'
// health from a snapshot.
const healthEvery = 30 * time.Second

// Update applies one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
		if m.prompt != nil {
			m.prompt.fit(m.width)
		}
		return m, nil
	case TickMsg:
		m.now = time.Time(msg)
		cmds := []tea.Cmd{m.tickCmd()}
		for i, s := range m.sites {
			// Device health changes without events: ask for a snapshot
			// now and then while connected.
			if s.state == LinkConnected && s.conn != nil && !s.snapAt.IsZero() &&
				m.now.Sub(s.snapAt) >= healthEvery && m.now.Sub(s.healthAt) >= healthEvery {
				s.healthAt = m.now
				cmds = append(cmds, refresh(i, s.conn, s.code))
			}
		}
		return m, tea.Batch(cmds...)
	case SnapshotMsg:
		if s := m.siteAt(msg.Site); s != nil && msg.Snapshot != nil {
			s.applySnapshot(msg.Snapshot, m.now)
			// Health is current whatever the version: take it even when the
			// counts of an older snapshot are not.
			s.applyDevices(msg.Snapshot.Devices)
		}
		return m, nil
	case EventMsg:
		s := m.siteAt(msg.Site)
		if s == nil || msg.Event == nil {
			return m, nil
		}
		s.applyEvent(msg.Event, m.now)
		if s.needsFresh {
			s.needsFresh = false
			return m, refresh(msg.Site, s.conn, s.code)
		}
		return m, nil
	case StateMsg:
		return m, m.applyState(msg)
	case ConnMsg:
		if s := m.siteAt(msg.Site); s != nil {
			s.conn = msg.Conn
			if s.code == "" {
				s.code = msg.Code
			}
			if s.day == "" {
				s.day = msg.Day
			}
		}
		return m, nil
	case ResultMsg:
		loc := time.UTC
		if msg.Site >= 0 && msg.Site < len(m.sites) {
			loc = m.sites[msg.Site].loc
		}
		m.status, m.statusOK = describe(msg, loc, m.t)
		if msg.Site != m.cur && msg.Site < len(m.sites) {
			m.status = m.sites[msg.Site].code + ": " + m.status
		}
		return m, nil
	case tea.MouseMsg:
		m.mouse(msg)
		return m, nil
	case tea.KeyMsg:
		return m, m.key(msg)
	}
	return m, nil
}

func (m *Model) siteAt(i int) *site {
	if i < 0 || i >= len(m.sites) {
		return nil
	}
	return m.sites[i]
}

// applyState follows a connection change; a connection that comes back
// asks for a fresh snapshot (the subscription itself resumes from its last
// version).
func (m *Model) applyState(msg StateMsg) tea.Cmd {
	s := m.siteAt(msg.Site)
	if s == nil {
		return nil
	}
	was := s.state
	s.state, s.attempt = msg.State, msg.Attempt
	s.lastErr = ""
	if msg.Err != nil {
		s.lastErr = msg.Err.Error()
		if errors.Is(msg.Err, wire.ErrAuthFailed) {
			s.state = LinkAuthRefused
		}
	}
	if msg.Err != nil && (s.state == LinkClosed || s.state == LinkAuthRefused) {
		m.status, m.statusOK = fmt.Sprintf("site %s: %v", orDash(s.code), msg.Err), false
	}
	if s.state == LinkConnected && (was == LinkReconnecting || was == LinkAuthRefused) {
		return refresh(msg.Site, s.conn, s.code)
	}
	return nil
}

// stale reports whether the numbers of s may be out of date.
func (s *site) stale() bool {
	return s.state != LinkConnected || !s.haveSnap
}

func (m *Model) mouse(msg tea.MouseMsg) {
	if m.counter != 0 || m.prompt != nil || m.confirm != nil {
		return
	}
	switch {
	case msg.Button == tea.MouseButtonWheelUp && msg.Action == tea.MouseActionPress:
		m.sel = max(m.sel-1, 0)
	case msg.Button == tea.MouseButtonWheelDown && msg.Action == tea.MouseActionPress:
		m.sel = min(m.sel+1, max(len(m.site().counters)-1, 0))
	case msg.Button == tea.MouseButtonLeft && msg.Action == tea.MouseActionPress:
		top, n := m.counterRows()
		if row := msg.Y - top; row >= 0 && row < n {
			m.sel = row
		}
	}
}

// ask puts a yes/no question before run.
func (m *Model) ask(q string, run tea.Cmd) {
	m.confirm = &confirmation{question: q, run: run}
}

// send returns the command sending req on the current site's connection.
func (m *Model) send(what string, req wire.Message) tea.Cmd {
	return do(m.cur, m.site().conn, what, req)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
