package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// styles are the console's styles, made on one renderer.
type styles struct {
	title, head, key, dim, stale, alert, ok, sel, big, warn lipgloss.Style
}

func newStyles(r *lipgloss.Renderer) styles {
	return styles{
		title: r.NewStyle().Bold(true).Foreground(lipgloss.Color("12")),
		head:  r.NewStyle().Bold(true),
		key:   r.NewStyle().Bold(true).Foreground(lipgloss.Color("14")),
		dim:   r.NewStyle().Foreground(lipgloss.Color("8")),
		stale: r.NewStyle().Foreground(lipgloss.Color("8")).Faint(true),
		alert: r.NewStyle().Bold(true).Foreground(lipgloss.Color("9")),
		ok:    r.NewStyle().Foreground(lipgloss.Color("10")),
		sel:   r.NewStyle().Reverse(true),
		big:   r.NewStyle().Bold(true).Foreground(lipgloss.Color("11")),
		warn:  r.NewStyle().Foreground(lipgloss.Color("11")),
	}
}

// fit pads or cuts s (which may hold styles) to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if lipgloss.Width(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	if n := lipgloss.Width(s); n < w {
		s += strings.Repeat(" ", w-n)
	}
	return s
}

// pad pads s with spaces to w cells, as %-*s does for one-cell letters
// (a wider text is kept whole).
func pad(s string, w int) string {
	if n := lipgloss.Width(s); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// rfit right-aligns s in w cells.
func rfit(s string, w int) string {
	if lipgloss.Width(s) >= w {
		return fit(s, w)
	}
	return strings.Repeat(" ", w-lipgloss.Width(s)) + s
}

// dur formats a duration for a table cell: 45s, 12m05s, 1h05m.
func dur(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// count shows a count of tickets. The view counts what the daemon's
// events say; one that makes no sense (a ticket leaving a queue it was not
// counted in) could take a count below zero, which is shown as 0.
func count(n int) string { return strconv.Itoa(max(n, 0)) }

// holdWord is the status of the ticket a counter holds: called or
// serving.
func holdWord(st queue.Status) string { return strings.ToLower(string(st)) }

// header is the first line: site, day, address, connection.
func (m *Model) header() string {
	s := m.site()
	wide := m.width >= 100
	var parts []string
	if wide {
		parts = append(parts, m.st.title.Render("nowserving"))
	}
	name := s.code
	if s.name != "" && s.name != s.code {
		name = s.name
		if wide {
			name = fmt.Sprintf("%s (%s)", s.name, s.code)
		}
	}
	if name == "" {
		name = "(site)"
	}
	if len(m.sites) > 1 {
		name = fmt.Sprintf("[%d/%d] %s", m.cur+1, len(m.sites), name)
	}
	day := orDash(s.day)
	if wide {
		day = m.t("day") + " " + day
	}
	parts = append(parts, m.st.title.Render(name), day, m.link(s), orDash(m.addr))
	return fit(strings.Join(parts, " │ "), m.width)
}

func (m *Model) link(s *site) string {
	switch s.state {
	case LinkConnected:
		return m.st.ok.Render(m.t("● connected"))
	case LinkReconnecting:
		if s.attempt > 0 {
			return m.st.alert.Render(m.tf("○ reconnecting (attempt %d)", s.attempt))
		}
		return m.st.alert.Render(m.t("○ reconnecting"))
	case LinkAuthRefused:
		return m.st.alert.Render(m.t("✕ auth refused"))
	case LinkClosed:
		return m.st.alert.Render(m.t("✕ closed"))
	}
	if s.attempt > 0 {
		// A first dial that failed: nothing answers yet.
		return m.st.alert.Render(m.tf("✕ cannot reach (attempt %d)", s.attempt))
	}
	return m.st.warn.Render(m.t("○ connecting"))
}

// idleLine is the status line when there is no answer to show: "ready"
// once connected, else what stands in the way.
func (m *Model) idleLine() string {
	s := m.site()
	switch {
	case s == nil || s.state == LinkConnected:
		return m.st.dim.Render(m.t("ready"))
	case s.state == LinkConnecting && s.attempt > 0:
		return m.st.alert.Render(m.tf("cannot reach the daemon at %s: is `nowserving serve` running? trying again", orDash(m.addr)))
	case s.state == LinkReconnecting:
		return m.st.alert.Render(m.t("connection lost: reconnecting; the figures are stale until it is back"))
	case s.state == LinkAuthRefused:
		return m.st.alert.Render(m.t("the daemon refused this console device: check --device and its secret"))
	case s.state == LinkClosed:
		return m.st.alert.Render(m.t("connection closed"))
	}
	return m.st.dim.Render(m.t("connecting..."))
}

// staleNote is the marker shown after title on tables whose numbers may
// be old: title and the longest of its forms that fits in room columns
// (" STALE since 10:42:13", " STALE 10:42:13", " STALE"), so that a
// longer language keeps the time where it can.
func (m *Model) staleNote(s *site, title string, room int) string {
	if !s.stale() {
		return title
	}
	forms := []string{m.t(" STALE: no data yet"), m.t(" STALE")}
	if !s.updated.IsZero() {
		at := s.updated.In(s.loc).Format("15:04:05")
		forms = []string{m.t(" STALE since ") + at, m.t(" STALE") + " " + at, m.t(" STALE")}
	}
	note := forms[len(forms)-1]
	for _, f := range forms {
		if lipgloss.Width(title)+lipgloss.Width(f) <= room {
			note = f
			break
		}
	}
	return title + m.st.alert.Render(note)
}

// View draws the screen.
func (m *Model) View() string {
	if m.counter != 0 {
		return m.counterView()
	}
	s := m.site()
	w := m.width
	var lines []string
	lines = append(lines, m.header())
	lines = append(lines, m.serviceLines(s, w)...)
	_, n := m.counterRows()
	lines = append(lines, m.counterLines(s, w, n)...)
	lines = append(lines, m.resourceLines(s, w)...)
	foot := m.footer()
	evh := m.height - len(lines) - len(foot)
	lines = append(lines, m.eventLines(s, w, evh)...)
	lines = append(lines, foot...)
	if len(lines) > m.height && m.height > 0 {
		lines = lines[:m.height]
	}
	return strings.Join(lines, "\n")
}

// footer is the offline line, the status or prompt line and the help.
func (m *Model) footer() []string {
	s := m.site()
	var out []string
	if m.counter == 0 {
		out = append(out, fit(m.offlineLine(s), m.width))
	}
	out = append(out, m.statusLines()...)
	for _, l := range strings.Split(m.help.View(m.keys), "\n") {
		out = append(out, fit(l, m.width))
	}
	return out
}

// maxStatusLines is how many lines a long answer or refusal may take, so
// that at 80 columns "counter busy: counter 5 is calling A040: start,
// recall or mark it no-show first" is read whole: the useful part of a
// refusal is at its end.
const maxStatusLines = 3

// statusLines is the status line wrapped at the screen's width onto at
// most maxStatusLines lines (a prompt or a question stays on one).
func (m *Model) statusLines() []string {
	s := m.statusLine()
	if m.confirm != nil || m.prompt != nil || m.width <= 0 || lipgloss.Width(s) <= m.width {
		return []string{fit(s, m.width)}
	}
	lines := strings.Split(ansi.Wrap(s, m.width, " "), "\n")
	if len(lines) > maxStatusLines {
		lines[maxStatusLines-1] = strings.Join(lines[maxStatusLines-1:], " ")
		lines = lines[:maxStatusLines]
	}
	for i := range lines {
		lines[i] = fit(strings.TrimRight(lines[i], " "), m.width)
	}
	return lines
}

func (m *Model) statusLine() string {
	switch {
	case m.confirm != nil:
		return m.st.warn.Render(m.confirm.question)
	case m.prompt != nil:
		return m.st.key.Render(m.prompt.label+": ") + m.prompt.in.View()
	case m.status == "":
		return m.idleLine()
	case m.statusOK:
		return m.status
	}
	return m.st.alert.Render(m.status)
}

func (m *Model) offlineLine(s *site) string {
	var parts []string
	keys := make([]string, 0, len(s.offline))
	for k := range s.offline {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		parts = append(parts, k+": "+m.offlineText(s.offline[k]))
	}
	if len(parts) == 0 {
		return m.st.dim.Render(m.t("offline devices: none reported"))
	}
	return m.st.alert.Render(m.t("offline devices: ") + strings.Join(parts, ", "))
}

// offlineText is what the offline line says of a device, "KIND DETAIL"
// (site.offline), in the console's language: the kind in its words
// (device:KIND), the detail too when it is one of the daemon's fixed
// words (detail:DETAIL: "not connected", a printer's "paper_out"), else
// the daemon's own text, as a refusal's is ("2 dropped, 0 failed").
// English has spaces for underscores.
func (m *Model) offlineText(what string) string {
	kind, detail, _ := strings.Cut(what, " ")
	word := func(prefix, s string) string {
		if w := m.t(prefix + s); !strings.HasPrefix(w, prefix) {
			return w
		}
		return strings.ReplaceAll(s, "_", " ")
	}
	return strings.TrimSpace(word("device:", kind) + " " + word("detail:", detail))
}

// column is a table column: its title and width.
type column struct {
	h string
	w int
}

// numTable is a table of a name and right-aligned figures, w cells wide:
// the name takes what the columns leave.
type numTable struct {
	cols  []column
	nw, w int
}

func newNumTable(cols []column, w int) numTable {
	fixed := 0
	for _, c := range cols {
		fixed += c.w + 1
	}
	return numTable{cols: cols, nw: max(w-fixed, 8), w: w}
}

// row is one line of the table: name, then cells under the columns.
func (t numTable) row(name string, cells []string) string {
	line := fit(name, t.nw)
	for i, c := range t.cols {
		line += " " + rfit(cells[i], c.w)
	}
	return fit(line, t.w)
}

// colHeads are the titles of cols, in the words of t.
func colHeads(cols []column, t func(string) string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = t(c.h)
	}
	return out
}

// serviceLines is the services table, its title row first.
func (m *Model) serviceLines(s *site, w int) []string {
	wide := w >= 100
	cols := []column{{"WAIT", 5}, {"LONGEST", 8}, {"AVG", 7}, {"SERVED", 7}, {"NO-SHOW", 8}, {"STATE", 7}}
	if wide {
		cols = append(cols, column{"ISSUED", 7}, column{"LAST", 6}, column{"TARGET", 7})
	}
	t := newNumTable(cols, w)
	out := []string{m.st.head.Render(t.row(m.staleNote(s, m.t("SERVICES"), t.nw), colHeads(cols, m.t)))}
	for _, sv := range s.services {
		cells, breach := m.serviceCells(s, sv, wide)
		line := t.row(sv.code+"  "+sv.name, cells)
		switch {
		case s.stale():
			line = m.st.stale.Render(line)
		case breach:
			line = m.st.alert.Render(line)
		}
		out = append(out, line)
	}
	return out
}

// serviceCells are the cells of service sv's row, and whether its longest
// wait is over its target.
func (m *Model) serviceCells(s *site, sv *service, wide bool) ([]string, bool) {
	f := s.figures(sv)
	longest, lower := s.longest(sv, m.now)
	lt := "-"
	if longest > 0 || lower {
		lt = dur(longest)
		if lower {
			lt = "≥" + lt
		}
	}
	breach := sv.target > 0 && longest > sv.target && !s.stale()
	if breach {
		lt += "!"
	}
	avg := "-"
	if f.Called > 0 {
		avg = dur(f.AvgWait())
	}
	state := "open"
	switch {
	case sv.full:
		state = "full"
	case !sv.open:
		state = "closed"
	}
	cells := []string{count(f.Waiting), lt, avg, count(f.Served), count(f.NoShows), m.t(state)}
	if !wide {
		return cells, breach
	}
	tgt := "-"
	if sv.target > 0 {
		tgt = dur(sv.target)
	}
	last := f.LastCalled
	if last == "" {
		last = sv.lastCalled
	}
	return append(cells, count(f.Issued), orDash(last), tgt), breach
}

// counterRows returns the screen row of the first counter row and how many
// counter rows are shown (the rest of the layout depends on it).
func (m *Model) counterRows() (top, n int) {
	s := m.site()
	top = 1 + 1 + len(s.services) + 1 // header, services title, rows, counters title
	helpLines := strings.Count(m.help.View(m.keys), "\n") + 1
	fixed := top + 1 + 1 + 1 + helpLines // events title, offline, status, help
	if r := len(s.v.Resources()); r > 0 {
		fixed += 1 + r // appointments title and rows
	}
	n = len(s.counters)
	if room := m.height - fixed - 1; n > room { // keep one event line
		n = max(room, 1)
	}
	return top, n
}

// counterLines is the counters table (title row first), n rows of it,
// scrolled to keep the selection in view.
func (m *Model) counterLines(s *site, w, n int) []string {
	cols := []column{{"STATE", 7}, {"TICKET", 7}, {"STATUS", 8}, {"FOR", 7}, {"SERVED", 7}, {"KEYPAD", m.keypadWidth(s)}}
	fixed := 0
	for _, c := range cols {
		fixed += c.w + 1
	}
	nw := max(w-fixed-2, 8)
	title := m.t("COUNTERS")
	if s.stale() {
		title += m.st.alert.Render(m.t(" STALE"))
	}
	head := "  " + fit(title, nw)
	for _, c := range cols {
		head += " " + fit(m.t(c.h), c.w)
	}
	out := []string{m.st.head.Render(fit(head, w))}
	first := 0
	if m.sel >= n {
		first = m.sel - n + 1
	}
	stale := s.stale()
	for i := first; i < len(s.counters) && i < first+n; i++ {
		c := s.counters[i]
		mark := "  "
		if i == m.sel {
			mark = "> "
		}
		h := s.holds(c)
		num, st, since := "-", "", ""
		if h.Number != "" {
			num, st = h.Number, m.t(holdWord(h.Status))
			if !h.Since.IsZero() && !m.now.IsZero() {
				since = dur(m.now.Sub(h.Since))
			}
		}
		if stale && h.Number != "" {
			num = "~" + num
		}
		cells := []string{m.t(string(h.Mode)), num, st, since, count(h.Served), m.keypadCell(c)}
		label := fmt.Sprintf("%d  %s", c.id, c.name)
		if c.person != "" {
			label += " · " + c.person // who is at it, from the counter page
		}
		line := mark + fit(label, nw)
		for j, col := range cols {
			line += " " + fit(cells[j], col.w)
		}
		line = fit(line, w)
		switch {
		case i == m.sel:
			line = m.st.sel.Render(line)
		case stale:
			line = m.st.stale.Render(line)
		case h.Mode == queue.CounterPaused:
			line = m.st.warn.Render(line)
		}
		out = append(out, line)
	}
	return out
}

// resourceLines is the appointments table of the site's day, one row per
// bookable resource (title row first); nothing for a site without
// resources. Booked is the bookings still to come or to check in.
func (m *Model) resourceLines(s *site, w int) []string {
	rs := s.v.Resources()
	if len(rs) == 0 {
		return nil
	}
	cols := []column{{"BOOKED", 7}, {"CHECKED IN", 11}, {"MISSED", 7}, {"CANCELLED", 10}}
	t := newNumTable(cols, w)
	out := []string{m.st.head.Render(t.row(m.staleNote(s, m.t("APPOINTMENTS"), t.nw), colHeads(cols, m.t)))}
	for _, r := range rs {
		name := r.ID
		if n := s.resourceNames[r.ID]; n != "" && n != r.ID {
			name += "  " + n
		}
		line := t.row(name, []string{count(r.Booked), count(r.CheckedIn), count(r.Missed), count(r.Cancelled)})
		if s.stale() {
			line = m.st.stale.Render(line)
		}
		out = append(out, line)
	}
	return out
}

// keypadWidth is the width of the KEYPAD column: 12, or as wide as the
// longest health report ("connected led offline") up to 21, so the LED
// board's health shows in 80 columns too (the counter's name gives way).
func (m *Model) keypadWidth(s *site) int {
	w := 12
	for _, c := range s.counters {
		w = max(w, min(lipgloss.Width(m.keypadCell(c)), 21))
	}
	return w
}

// keypadCell says what the console knows of a counter's devices: its
// keypad's connection and LED board from the last snapshot, else the last
// event the keypad caused.
func (m *Model) keypadCell(c *counter) string {
	if c.keypadHealth != "" || c.boardHealth != "" {
		out := m.t(c.keypadHealth)
		if out == "" {
			out = "-"
		}
		if c.boardHealth != "" {
			out += " " + m.t("led") + " " + m.t(c.boardHealth)
		}
		return out
	}
	switch {
	case c.keypad == "":
		return "-"
	case c.seen.IsZero():
		return m.t("not seen")
	case m.now.IsZero():
		return m.t("seen")
	}
	return m.t("seen") + " " + dur(m.now.Sub(c.seen))
}

// matches reports whether e passes the event filter f.
func matches(e *wire.Event, f string) bool {
	if f == "" {
		return true
	}
	f = strings.ToUpper(strings.TrimSpace(f))
	if n := queue.CounterNumber(strings.TrimPrefix(f, "C")); n > 0 {
		return e.Counter == n
	}
	return strings.EqualFold(e.Service, f) || strings.Contains(strings.ToUpper(e.Number), f) || strings.EqualFold(e.Actor, f)
}

// eventLine is one line of the event stream.
func (m *Model) eventLine(s *site, e *wire.Event) string {
	t := "--:--:--"
	if e.TimeMS != 0 {
		t = time.UnixMilli(e.TimeMS).In(s.loc).Format("15:04:05")
	}
	what := e.Number
	switch e.Kind {
	case wire.EventCalled, wire.EventRecalled:
		what = fmt.Sprintf("%s → %d", e.Number, e.Counter)
	case wire.EventIssued, wire.EventReentered, wire.EventTransferred:
		what = m.tf("%s in %s", e.Number, e.Service)
		if e.ToCounter != 0 { // transferred to one counter
			what += fmt.Sprintf(" → %d", e.ToCounter)
		}
	case wire.EventServing, wire.EventDone, wire.EventNoShow:
		what = m.tf("%s at %d", e.Number, e.Counter)
	case wire.EventCounterOpened, wire.EventCounterPaused, wire.EventCounterClosed:
		what = m.tf("counter %d", e.Counter)
	}
	kind := e.Kind.String()
	if b, ok := strings.CutPrefix(kind, "booking_"); ok {
		// "booked dr-li 09:30", "checked_in dr-li 09:30 A024": the
		// slot, with its day when it is not today.
		kind, what = b, e.Resource
		if e.SlotMS != 0 {
			slot := time.UnixMilli(e.SlotMS).In(s.loc)
			f := "15:04"
			if e.TicketDay != "" && e.TicketDay != e.ServiceDay {
				f = "01-02 15:04"
			}
			what += " " + slot.Format(f)
		}
		if e.Number != "" {
			what += " " + e.Number
		}
	}
	if k := m.t("event:" + kind); !strings.HasPrefix(k, "event:") {
		kind = k
	}
	return fmt.Sprintf("%s v%-5d %s %s %s", t, e.Version, pad(kind, 14), pad(what, 16), e.Actor)
}

// eventLines is the event stream: its title and the last h-1 events that
// pass the filter, newest last.
func (m *Model) eventLines(s *site, w, h int) []string {
	if h <= 0 {
		return nil
	}
	title := m.t("EVENTS")
	if m.filter != "" {
		title += m.tf(" (filter: %s, / to change)", m.filter)
	} else {
		title += m.t(" (/ to filter)")
	}
	out := []string{m.st.head.Render(fit(title, w))}
	var pick []string
	for i := len(s.events) - 1; i >= 0 && len(pick) < h-1; i-- {
		if matches(&s.events[i], m.filter) {
			pick = append(pick, fit(m.eventLine(s, &s.events[i]), w))
		}
	}
	slices.Reverse(pick)
	out = append(out, pick...)
	for len(out) < h {
		out = append(out, strings.Repeat(" ", max(w, 0)))
	}
	return out
}

// counterView is the software keypad of one counter.
func (m *Model) counterView() string {
	s := m.site()
	c := s.counter(m.counter)
	h := s.holds(c)
	w := m.width
	var lines []string
	lines = append(lines, m.header(), "")
	title := m.tf("Counter %d · %s · %s", c.id, c.name, m.t(string(h.Mode)))
	lines = append(lines, fit(m.staleNote(s, m.st.head.Render(title), w), w), "")
	num := h.Number
	if num == "" {
		num = "---"
	}
	big := bigText(num)
	style := m.st.big
	if s.stale() {
		style = m.st.stale
	}
	for _, l := range strings.Split(big, "\n") {
		lines = append(lines, fit(lipgloss.PlaceHorizontal(w, lipgloss.Center, style.Render(l)), w))
	}
	lines = append(lines, "")
	info := m.t("no ticket")
	if h.Number != "" {
		info = fmt.Sprintf("%s %s", h.Number, m.t(holdWord(h.Status)))
		if h.Queue != "" {
			info += m.t(" · service ") + h.Queue
		}
		if !h.Since.IsZero() && !m.now.IsZero() {
			info += m.t(" · for ") + dur(m.now.Sub(h.Since))
		}
	}
	if s.stale() {
		info += m.t(" (stale)")
	}
	lines = append(lines, fit(lipgloss.PlaceHorizontal(w, lipgloss.Center, info), w))
	wait := m.tf("waiting for this counter: %s · served here today: %s", count(s.waitingFor(c)), count(h.Served))
	lines = append(lines, fit(lipgloss.PlaceHorizontal(w, lipgloss.Center, wait), w), "")
	keys := [][2]string{{"n", "next"}, {"r", "recall"}, {"s", "start"}, {"d", "done"}, {"x", "no-show"}, {"t", "transfer"}, {"p", "pause/resume"}}
	var kb []string
	for _, k := range keys {
		kb = append(kb, m.st.key.Render(k[0])+" "+m.t(k[1]))
	}
	lines = append(lines, fit(lipgloss.PlaceHorizontal(w, lipgloss.Center, strings.Join(kb, "   ")), w))
	foot := m.footer()
	for len(lines)+len(foot) < m.height {
		lines = append(lines, "")
	}
	lines = append(lines, foot...)
	if len(lines) > m.height && m.height > 0 {
		lines = lines[len(lines)-m.height:]
	}
	return strings.Join(lines, "\n")
}
