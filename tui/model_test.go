package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/nowserving/nowserving/internal/testkit/screen"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/view"
)

// recConn records the requests the console sends and answers them.
type recConn struct {
	mu     sync.Mutex
	sent   []wire.Message
	answer func(wire.Message) (wire.Message, error)
}

func (c *recConn) Do(_ context.Context, m wire.Message) (wire.Message, error) {
	return c.record(&c.sent, m)
}

// record appends m to the list to (sent, or once for DoOnce) and answers it.
func (c *recConn) record(to *[]wire.Message, m wire.Message) (wire.Message, error) {
	c.mu.Lock()
	*to = append(*to, m)
	answer := c.answer
	c.mu.Unlock()
	if answer != nil {
		return answer(m)
	}
	return &wire.OK{}, nil
}

func (c *recConn) requests() []wire.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]wire.Message(nil), c.sent...)
}

// t0 is the tests' clock: 10:00 in Shanghai on the service day below.
var t0 = time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)

const day = "2026-11-30"

func asciiRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	return r
}

func testSiteOpts(conn Conn) SiteOpts {
	loc := time.FixedZone("CST", 8*3600)
	return SiteOpts{
		Code: "hospital", Name: "City Hospital", Location: loc, Conn: conn,
		Services: []ServiceOpts{
			{Code: "A", Name: "First visit", WaitTarget: 30 * time.Minute},
			{Code: "R", Name: "Revisit", WaitTarget: 20 * time.Minute},
			{Code: "E", Name: "Emergency", WaitTarget: 5 * time.Minute},
		},
		Counters: []CounterOpts{
			{ID: 1, Name: "Counter 1", Services: []string{"A"}, Keypad: "keypad-1"},
			{ID: 2, Name: "Counter 2", Services: []string{"A", "R"}, Keypad: "keypad-2"},
			{ID: 3, Name: "Counter 3", Services: []string{"R", "A"}},
			{ID: 5, Name: "Emergency counter 5", Services: []string{"E", "A"}, Keypad: "keypad-5"},
		},
	}
}

// newTestModel is a connected console of the test site at t0, 80x24.
func newTestModel(t *testing.T, conn Conn, counter uint32) *Model {
	t.Helper()
	m := New(Opts{Sites: []SiteOpts{testSiteOpts(conn)}, Addr: "127.0.0.1:7400", Counter: counter, Renderer: asciiRenderer()})
	feed(m, tea.WindowSizeMsg{Width: 80, Height: 24}, TickMsg(t0), StateMsg{State: LinkConnected})
	return m
}

func feed(m *Model, msgs ...tea.Msg) {
	for _, msg := range msgs {
		m.Update(msg)
	}
}

// named are the keys press takes by name; any other string is typed.
var named = map[string]tea.KeyType{
	"enter": tea.KeyEnter, "esc": tea.KeyEsc, "backspace": tea.KeyBackspace, "tab": tea.KeyTab,
	"down": tea.KeyDown, "left": tea.KeyLeft, "home": tea.KeyHome, "ctrl+u": tea.KeyCtrlU,
}

// press types keys one by one and runs the commands they return (not the
// clock), feeding their results back; it returns the messages the commands
// produced.
func press(m *Model, keys ...string) []tea.Msg {
	var out []tea.Msg
	for _, k := range keys {
		msg := tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		if kt, ok := named[k]; ok {
			msg = tea.KeyMsg{Type: kt}
		}
		_, cmd := m.Update(msg)
		out = append(out, run(m, cmd)...)
	}
	return out
}

// run executes cmd (and batches) and feeds the results to m.
func run(m *Model, cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, run(m, c)...)
		}
		return out
	}
	if msg == nil {
		return nil
	}
	if _, ok := msg.(tea.QuitMsg); ok {
		return []tea.Msg{msg}
	}
	_, next := m.Update(msg)
	return append([]tea.Msg{msg}, run(m, next)...)
}

func snapshot() *wire.Snapshot {
	return &wire.Snapshot{
		Version: 10, Site: "hospital", ServiceDay: day, TimeMS: t0.UnixMilli(),
		Services: []wire.ServiceInfo{
			{Code: "A", Name: "First visit", Waiting: 3, Served: 4, Issued: 9, Open: true},
			{Code: "R", Name: "Revisit", Waiting: 1, Served: 1, Issued: 2, Open: true},
			{Code: "E", Name: "Emergency", Open: false},
		},
		Counters: []wire.CounterInfo{
			{ID: 1, Name: "Counter 1", State: wire.CounterOpen, Number: "A005", Status: wire.StatusServing, Service: "A",
				TicketID: ticketID("A005"), SinceMS: t0.Add(-10 * time.Minute).UnixMilli()},
			{ID: 2, Name: "Counter 2", State: wire.CounterOpen},
			{ID: 3, Name: "Counter 3", State: wire.CounterPaused},
			{ID: 5, Name: "Emergency counter 5", State: wire.CounterOpen},
		},
	}
}

// ticketID is the test daemon's id of a ticket number: A005 is 65005.
func ticketID(number string) uint64 {
	n, _ := strconv.Atoi(number[1:])
	return uint64(number[0])*1000 + uint64(n)
}

// ev is an EVENT as the daemon sends it of a ticket called once (not yet,
// when issued), without what the ticket was before (see from).
func ev(v uint64, kind wire.EventKind, number, service string, counter uint32, status wire.TicketStatus, at time.Time, actor string) *wire.Event {
	e := &wire.Event{Version: v, Site: "hospital", Kind: kind, Number: number, Service: service, Counter: counter,
		Status: status, TimeMS: at.UnixMilli(), Actor: actor, ServiceDay: day}
	if number != "" {
		e.TicketID = ticketID(number)
	}
	if number != "" && kind != wire.EventIssued {
		e.CallCount = 1
	}
	return e
}

// from sets what the ticket of e was before it: status, queue, counter.
func from(e *wire.Event, st wire.TicketStatus, queue string, counter uint32) *wire.Event {
	e.From, e.FromService, e.FromCounter = st, queue, counter
	return e
}

// waited sets how long the ticket of e has waited since its issue.
func waited(e *wire.Event, d time.Duration) *wire.Event {
	e.WaitedMS = uint32(d.Milliseconds())
	return e
}

// figures is what the console shows of service code.
func figures(m *Model, code string) view.Service {
	s := m.site()
	return s.figures(s.service(code))
}

// holds is what the console shows of counter id.
func holds(m *Model, id uint32) view.Counter {
	s := m.site()
	return s.holds(s.counter(id))
}

func TestSnapshotThenEvents(t *testing.T) {
	m := newTestModel(t, &recConn{}, 0)
	feed(m, SnapshotMsg{Snapshot: snapshot()},
		EventMsg{Event: ev(11, wire.EventIssued, "A010", "A", 0, wire.StatusWaiting, t0.Add(time.Minute), "kiosk-1")},
		EventMsg{Event: waited(from(ev(12, wire.EventCalled, "A010", "A", 2, wire.StatusCalled, t0.Add(3*time.Minute), "keypad-2"),
			wire.StatusWaiting, "A", 0), 2*time.Minute)},
		EventMsg{Event: from(ev(13, wire.EventDone, "A005", "A", 1, wire.StatusDone, t0.Add(4*time.Minute), "keypad-1"),
			wire.StatusServing, "A", 1)},
		EventMsg{Event: from(ev(14, wire.EventNoShow, "A010", "A", 2, wire.StatusNoShow, t0.Add(5*time.Minute), "keypad-2"),
			wire.StatusCalled, "A", 2)},
		EventMsg{Event: &wire.Event{Version: 15, Kind: wire.EventCounterOpened, Counter: 3, TimeMS: t0.Add(5 * time.Minute).UnixMilli(), ServiceDay: day}},
		EventMsg{Event: ev(12, wire.EventCalled, "A010", "A", 2, wire.StatusCalled, t0, "dup")}, // replayed: ignored
		TickMsg(t0.Add(6*time.Minute)),
	)
	a := figures(m, "A")
	if a.Waiting != 3 || a.Issued != 10 || a.Served != 5 || a.NoShows != 1 {
		t.Errorf("service A: waiting %d issued %d served %d no-shows %d, want 3 10 5 1", a.Waiting, a.Issued, a.Served, a.NoShows)
	}
	if avg := a.AvgWait(); a.Called != 1 || avg != 2*time.Minute {
		t.Errorf("average wait = %v of %d calls, want 2m of 1", avg, a.Called)
	}
	c1, c2, c3 := holds(m, 1), holds(m, 2), holds(m, 3)
	if c1.Number != "" || c1.Served != 1 {
		t.Errorf("counter 1: %q served %d, want idle, 1 served", c1.Number, c1.Served)
	}
	if c2.Number != "" {
		t.Errorf("counter 2 still has %q after the no-show", c2.Number)
	}
	if c3.Mode != queue.CounterOpen {
		t.Errorf("counter 3 mode = %v, want open", c3.Mode)
	}
	if s := m.site(); s.version != 15 || s.v.Version != 15 {
		t.Errorf("version = %d, view at %d, want 15", s.version, s.v.Version)
	}
	v := m.View()
	for _, want := range []string{"City Hospital", "● connected", "A  First visit", "v14", "no_show", "A010 at 2"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
}

// dayStart is a site's first three events and the snapshot after them,
// which does not say how long A002 has waited.
func dayStart() (*wire.Snapshot, []*wire.Event) {
	snap := &wire.Snapshot{Version: 3, Site: "hospital", ServiceDay: day, TimeMS: t0.UnixMilli(),
		Services: []wire.ServiceInfo{{Code: "A", Name: "First visit", Waiting: 1, Issued: 2, Called: 1, AvgWaitS: 480, Open: true}},
		Counters: []wire.CounterInfo{{ID: 1, Name: "Counter 1", State: wire.CounterOpen, Number: "A001", Status: wire.StatusCalled,
			Service: "A", TicketID: ticketID("A001"), SinceMS: t0.Add(-12 * time.Minute).UnixMilli()}}}
	return snap, []*wire.Event{
		ev(1, wire.EventIssued, "A001", "A", 0, wire.StatusWaiting, t0.Add(-20*time.Minute), "kiosk-1"),
		ev(2, wire.EventIssued, "A002", "A", 0, wire.StatusWaiting, t0.Add(-15*time.Minute), "kiosk-1"),
		waited(from(ev(3, wire.EventCalled, "A001", "A", 1, wire.StatusCalled, t0.Add(-12*time.Minute), "keypad-1"),
			wire.StatusWaiting, "A", 0), 8*time.Minute),
	}
}

// TestHistory: the events a snapshot counts already (the day's last
// events it carries, or a history replayed after it) never count twice;
// when they go back to the day's first event they replace the snapshot's
// figures, and the console knows how long each ticket waits. The event
// stream shows them at once.
func TestHistory(t *testing.T) {
	tests := []struct {
		name    string
		from    int  // first history event replayed
		recent  bool // in the snapshot's Recent, not as EVENTs after it
		longest string
	}{
		{"whole day", 0, false, "15m00s"},
		{"part of the day", 1, false, "≥0s"},
		{"whole day in the snapshot", 0, true, "15m00s"},
		{"part of the day in the snapshot", 1, true, "≥0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTestModel(t, &recConn{}, 0)
			snap, hist := dayStart()
			if tt.recent {
				for _, e := range hist[tt.from:] {
					snap.Recent = append(snap.Recent, *e)
				}
				feed(m, SnapshotMsg{Snapshot: snap})
				// The same events again (a client that replays too):
				// they count once.
				for _, e := range hist[tt.from:] {
					feed(m, EventMsg{Event: e})
				}
			} else {
				feed(m, SnapshotMsg{Snapshot: snap})
				for _, e := range hist[tt.from:] {
					feed(m, EventMsg{Event: e})
				}
			}
			if got := len(m.site().events); got != len(hist)-tt.from {
				t.Errorf("event stream has %d events, want %d", got, len(hist)-tt.from)
			}
			a := figures(m, "A")
			if a.Waiting != 1 || a.Issued != 2 || a.Called != 1 || a.AvgWait() != 8*time.Minute {
				t.Errorf("history changed the counts: %+v, want 1 waiting, 2 issued, 1 called, 8m", a)
			}
			c := holds(m, 1)
			if c.Number != "A001" || !c.Since.Equal(t0.Add(-12*time.Minute)) {
				t.Errorf("counter 1 = %q since %v, want A001 since %v", c.Number, c.Since, t0.Add(-12*time.Minute))
			}
			if line := screen.Line(m.View(), "A  First visit"); !strings.Contains(line, " "+tt.longest+" ") {
				t.Errorf("longest wait: %q, want %s", line, tt.longest)
			}
			if !strings.Contains(m.View(), "12m00s") {
				t.Errorf("view does not show how long counter 1 has had A001:\n%s", m.View())
			}
		})
	}
}

func TestWaitTargetBreach(t *testing.T) {
	m := newTestModel(t, &recConn{}, 0)
	snap := snapshot()
	snap.Services[1].Waiting = 0 // R: only the ticket below
	feed(m, SnapshotMsg{Snapshot: snap},
		EventMsg{Event: ev(11, wire.EventIssued, "R003", "R", 0, wire.StatusWaiting, t0, "kiosk-1")},
		TickMsg(t0.Add(25*time.Minute)))
	line := screen.Line(m.View(), "R  Revisit")
	if !strings.Contains(line, "25m00s!") {
		t.Errorf("R over its 20m target is not marked: %q", line)
	}
	if l := screen.Line(m.View(), "A  First visit"); strings.Contains(l, "!") {
		t.Errorf("A is marked although nothing is known to wait long: %q", l)
	}
}

func TestActions(t *testing.T) {
	tests := []struct {
		name string
		keys []string
		want wire.Message
	}{
		{"call next", []string{"n"}, &wire.CallNext{Counter: 1, Site: "hospital"}},
		{"call next, second counter", []string{"j", "n"}, &wire.CallNext{Counter: 2, Site: "hospital"}},
		{"call number", []string{"j", "c", "a", "0", "0", "7", "enter"}, &wire.CallNumber{Counter: 2, Number: "A007", Site: "hospital"}},
		{"recall", []string{"r"}, &wire.Recall{Counter: 1, Number: "A005", Site: "hospital"}},
		{"start", []string{"s"}, &wire.Start{Counter: 1, Number: "A005", Site: "hospital"}},
		{"done", []string{"d"}, &wire.Complete{Counter: 1, Number: "A005", Site: "hospital"}},
		{"no-show confirmed", []string{"x", "y"}, &wire.NoShow{Counter: 1, Number: "A005", Site: "hospital"}},
		{"transfer to service", []string{"t", "r", "enter", "y"}, &wire.Transfer{Counter: 1, Number: "A005", ToService: "R", Site: "hospital"}},
		{"transfer to counter", []string{"t", "5", "enter", "y"}, &wire.Transfer{Counter: 1, Number: "A005", ToCounter: 5, Site: "hospital"}},
		{"cancel the counter's ticket", []string{"X", "enter", "y"}, &wire.Cancel{Number: "A005", Site: "hospital"}},
		{"cancel another", []string{"X", "backspace", "backspace", "backspace", "backspace", "r001", "enter", "y"}, &wire.Cancel{Number: "R001", Site: "hospital"}},
		{"pause", []string{"n", "p"}, &wire.Pause{Counter: 1, Reason: "console", Site: "hospital"}},
		{"resume a paused counter", []string{"j", "j", "p"}, &wire.Resume{Counter: 3, Site: "hospital"}},
		{"issue", []string{"i", "backspace", "e", "enter"}, &wire.TakeTicket{Service: "E", Site: "hospital"}},
		{"re-enter", []string{"e", "A010", "enter"}, &wire.Reenter{Number: "A010", Site: "hospital"}},
		{"check in a booking", []string{"b", "k7p3-x9qm", "enter"}, &wire.CheckIn{Code: "K7P3-X9QM", Site: "hospital"}},
		{"keys typed together", []string{"jn"}, &wire.CallNext{Counter: 2, Site: "hospital"}},
		{"reprint the counter's ticket", []string{"P", "enter"}, &wire.Reprint{Number: "A005", Site: "hospital"}},
		{"reprint on a printer", []string{"P", " hall-1", "enter"}, &wire.Reprint{Number: "A005", Printer: "hall-1", Site: "hospital"}},
		{"reprint another", []string{"j", "P", "r002", "enter"}, &wire.Reprint{Number: "R002", Site: "hospital"}},
		{"edit inside the answer", []string{"X", "left", "left", "backspace", "1", "enter", "y"}, &wire.Cancel{Number: "A105", Site: "hospital"}},
		{"ctrl+u clears before the cursor", []string{"P", "ctrl+u", "r002", "enter"}, &wire.Reprint{Number: "R002", Site: "hospital"}},
		{"home", []string{"X", "home", "r", "enter", "y"}, &wire.Cancel{Number: "RA005", Site: "hospital"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := &recConn{}
			m := newTestModel(t, conn, 0)
			feed(m, SnapshotMsg{Snapshot: snapshot()})
			press(m, tt.keys...)
			got := conn.requests()
			if len(got) == 0 {
				t.Fatalf("keys %q sent nothing; status %q", tt.keys, m.status)
			}
			if last := got[len(got)-1]; !reflect.DeepEqual(last, tt.want) {
				t.Errorf("keys %q sent %#v, want %#v", tt.keys, last, tt.want)
			}
		})
	}
}

func TestConfirmation(t *testing.T) {
	for _, key := range []string{"n", "esc"} {
		conn := &recConn{}
		m := newTestModel(t, conn, 0)
		feed(m, SnapshotMsg{Snapshot: snapshot()})
		press(m, "x")
		if got := screen.Line(m.View(), "no-show?"); !strings.Contains(got, "Mark A005 at counter 1 as a no-show? (y/n)") {
			t.Errorf("no confirmation question on screen:\n%s", m.View())
		}
		if n := len(conn.requests()); n != 0 {
			t.Fatalf("no-show sent before confirmation (%d requests)", n)
		}
		press(m, key)
		if n := len(conn.requests()); n != 0 {
			t.Errorf("answering %q still sent the no-show", key)
		}
		if !strings.Contains(m.View(), "not sent") {
			t.Errorf("status does not say the action was dropped:\n%s", m.View())
		}
	}
}

// TestCheckInByHand: the check-in key asks for the code and the status
// line tells the ticket with its appointment time, or why it was refused,
// with what the operator can do.
func TestCheckInByHand(t *testing.T) {
	appt := time.Date(2026, 12, 1, 1, 30, 0, 0, time.UTC) // 09:30 in Shanghai
	for _, tc := range []struct {
		name   string
		answer wire.Message
		err    error
		want   string
	}{
		{"on time", &wire.Ticket{Number: "A007", Status: wire.StatusWaiting, Service: "A", PeopleAhead: 2, Class: wire.ClassAppointment, AppointmentMS: appt.UnixMilli()}, nil,
			"check in booking K7P3X9QM: A007 waiting in A, 2 ahead, appointment 09:30"},
		{"late", &wire.Ticket{Number: "A008", Status: wire.StatusWaiting, Service: "A", PeopleAhead: 5, Class: wire.ClassNormal, AppointmentMS: appt.UnixMilli()}, nil,
			"A008 waiting in A, 5 ahead, appointment 09:30 (late: a normal ticket)"},
		{"unknown", nil, wire.ErrUnknownBooking, "refused: unknown booking (no booking of this site has that code"},
		{"early", nil, wire.ErrCheckInEarly.WithMsg("too early to check in: come back from 09:00"), "refused: too early to check in: come back from 09:00 (the patient comes back when the window opens)"},
		{"late refused", nil, wire.ErrCheckInLate, "refused: too late to check in (the window is over"},
		{"not active", nil, wire.ErrBookingNotActive.WithMsg("booking not active: booking 4 is CANCELLED"), "refused: booking not active: booking 4 is CANCELLED (cancelled, expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn := &recConn{answer: func(wire.Message) (wire.Message, error) { return tc.answer, tc.err }}
			m := newTestModel(t, conn, 0)
			feed(m, SnapshotMsg{Snapshot: snapshot()})
			press(m, "b")
			if !strings.Contains(m.View(), "check in the booking with code") {
				t.Fatalf("no prompt for the code:\n%s", m.View())
			}
			press(m, "K7P3X9QM", "enter")
			if !strings.Contains(m.status, tc.want) { // the screen cuts it at its width
				t.Errorf("status %q lacks %q", m.status, tc.want)
			}
		})
	}
}

func TestStatusLine(t *testing.T) {
	conn := &recConn{answer: func(m wire.Message) (wire.Message, error) {
		if _, ok := m.(*wire.CallNext); ok {
			return nil, wire.ErrNoTicketWaiting.WithMsg("no ticket waiting for counter 2")
		}
		return &wire.Ticket{Number: "A005", Status: wire.StatusDone, Service: "A"}, nil
	}}
	m := newTestModel(t, conn, 0)
	feed(m, SnapshotMsg{Snapshot: snapshot()})
	press(m, "j", "n")
	if want := "call next at counter 2: refused: no ticket waiting for counter 2"; !strings.Contains(m.View(), want) {
		t.Errorf("status line lacks %q:\n%s", want, m.View())
	}
	press(m, "k", "d")
	if want := "done at counter 1: A005 done"; !strings.Contains(m.View(), want) {
		t.Errorf("status line lacks %q:\n%s", want, m.View())
	}
	conn.answer = func(wire.Message) (wire.Message, error) { return nil, errors.New("client: no answer in time") }
	press(m, "s")
	if want := "start at counter 1: failed: client: no answer in time"; !strings.Contains(m.View(), want) {
		t.Errorf("status line lacks %q:\n%s", want, m.View())
	}
}

// onceRecConn is a recConn that can also send without resending, as
// *client.Client can.
type onceRecConn struct {
	recConn
	once []wire.Message
}

func (c *onceRecConn) DoOnce(_ context.Context, m wire.Message) (wire.Message, error) {
	return c.record(&c.once, m)
}

// A reprint is sent once (DoOnce), and the status line says how it went.
func TestReprint(t *testing.T) {
	conn := &onceRecConn{}
	conn.answer = func(m wire.Message) (wire.Message, error) {
		if r, ok := m.(*wire.Reprint); ok && r.Printer == "jammed" {
			return nil, fmt.Errorf("client: REPRINT: %w", wire.ErrPrinterFailed.WithMsg("escpos: paper out"))
		}
		return &wire.OK{}, nil
	}
	m := newTestModel(t, conn, 0)
	feed(m, SnapshotMsg{Snapshot: snapshot()})
	press(m, "P")
	if got := screen.Line(m.View(), "reprint ticket"); !strings.Contains(got, "A005") {
		t.Errorf("reprint prompt %q does not offer the counter's ticket A005:\n%s", got, m.View())
	}
	press(m, "enter")
	if want := "reprint A005: ok"; !strings.Contains(m.View(), want) {
		t.Errorf("status line lacks %q:\n%s", want, m.View())
	}
	press(m, "P", " jammed", "enter")
	if want := "reprint A005 on printer jammed: printer failed: escpos: paper out"; !strings.Contains(m.View(), want) {
		t.Errorf("status line lacks %q:\n%s", want, m.View())
	}
	if n := len(conn.requests()); n != 0 {
		t.Errorf("%d reprints went through Do, which resends; want DoOnce only", n)
	}
	if len(conn.once) != 2 {
		t.Errorf("DoOnce sent %d requests, want 2", len(conn.once))
	}
	press(m, "P", "backspace", "backspace", "backspace", "backspace", "enter")
	if len(conn.once) != 2 {
		t.Errorf("an empty reprint prompt sent a request")
	}
}

func TestFilter(t *testing.T) {
	m := newTestModel(t, &recConn{}, 0)
	feed(m, SnapshotMsg{Snapshot: snapshot()},
		EventMsg{Event: ev(11, wire.EventIssued, "A010", "A", 0, wire.StatusWaiting, t0, "kiosk-1")},
		EventMsg{Event: ev(12, wire.EventIssued, "R002", "R", 0, wire.StatusWaiting, t0, "kiosk-1")},
		EventMsg{Event: ev(13, wire.EventCalled, "R002", "R", 3, wire.StatusCalled, t0, "keypad-3")},
		EventMsg{Event: ev(14, wire.EventCalled, "A010", "A", 2, wire.StatusCalled, t0, "keypad-2")},
	)
	tests := []struct {
		filter    string
		want, not []string
	}{
		{"r", []string{"v12", "v13"}, []string{"v11", "v14"}},
		{"2", []string{"v14"}, []string{"v11", "v12", "v13"}},
		{"c3", []string{"v13"}, []string{"v11", "v12", "v14"}},
		{"a010", []string{"v11", "v14"}, []string{"v12", "v13"}},
		{"", []string{"v11", "v12", "v13", "v14"}, nil},
	}
	for _, tt := range tests {
		keys := []string{"/"}
		for range m.filter {
			keys = append(keys, "backspace")
		}
		if tt.filter != "" {
			keys = append(keys, tt.filter)
		}
		press(m, append(keys, "enter")...)
		v := m.View()
		for _, w := range tt.want {
			if !strings.Contains(v, w+" ") {
				t.Errorf("filter %q hides %s:\n%s", tt.filter, w, v)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(v, w+" ") {
				t.Errorf("filter %q shows %s:\n%s", tt.filter, w, v)
			}
		}
	}
}

func TestResize(t *testing.T) {
	m := newTestModel(t, &recConn{}, 0)
	feed(m, SnapshotMsg{Snapshot: snapshot()})
	for _, size := range [][2]int{{80, 24}, {120, 40}, {60, 15}, {200, 50}, {40, 10}} {
		feed(m, tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		lines := strings.Split(m.View(), "\n")
		if len(lines) != size[1] {
			t.Errorf("%dx%d: %d lines", size[0], size[1], len(lines))
		}
		for i, l := range lines {
			if w := lipgloss.Width(l); w > size[0] {
				t.Errorf("%dx%d: line %d is %d wide: %q", size[0], size[1], i, w, l)
			}
		}
	}
}

func TestDisconnectedIsStale(t *testing.T) {
	conn := &recConn{answer: func(wire.Message) (wire.Message, error) {
		s := snapshot()
		s.Version = 20
		s.Counters[0].Number, s.Counters[0].Status = "A006", wire.StatusCalled
		return s, nil
	}}
	m := newTestModel(t, conn, 0)
	feed(m, SnapshotMsg{Snapshot: snapshot()})
	if v := m.View(); strings.Contains(v, "STALE") || strings.Contains(v, "~A005") {
		t.Fatalf("connected console marked stale:\n%s", v)
	}
	feed(m, StateMsg{State: LinkReconnecting, Attempt: 2, Err: errors.New("connection refused")})
	v := m.View()
	for _, want := range []string{"reconnecting (attempt 2)", "SERVICES STALE since 10:00:00", "COUNTERS STALE", "~A005"} {
		if !strings.Contains(v, want) {
			t.Errorf("disconnected view lacks %q:\n%s", want, v)
		}
	}
	// Back: a fresh snapshot is asked for and replaces the old numbers.
	_, cmd := m.Update(StateMsg{State: LinkConnected})
	run(m, cmd)
	if reqs := conn.requests(); len(reqs) != 1 || !reflect.DeepEqual(reqs[0], &wire.Status{Site: "hospital"}) {
		t.Fatalf("reconnect sent %#v, want one STATUS of the site", reqs)
	}
	v = m.View()
	if strings.Contains(v, "STALE") || !strings.Contains(screen.Line(v, "Counter 1"), "A006") {
		t.Errorf("after the reconnect the view is not fresh:\n%s", v)
	}
}

func TestAuthRefused(t *testing.T) {
	m := newTestModel(t, &recConn{}, 0)
	feed(m, StateMsg{State: LinkReconnecting, Err: wire.ErrAuthFailed})
	if !strings.Contains(m.View(), "auth refused") {
		t.Errorf("header does not say auth refused:\n%s", m.View())
	}
	feed(m, StateMsg{State: LinkClosed, Err: wire.ErrForbidden.WithMsg("device console-1 may not act on site annex")})
	if v := m.View(); !strings.Contains(v, "✕ closed") || !strings.Contains(v, "site hospital: forbidden") && !strings.Contains(v, "may not act on site annex") {
		t.Errorf("a refused subscription is not explained:\n%s", v)
	}
}

func TestSeveralSites(t *testing.T) {
	c1, c2 := &recConn{}, &recConn{}
	other := SiteOpts{Code: "clinic", Name: "Clinic", Conn: c2}
	m := New(Opts{Sites: []SiteOpts{testSiteOpts(c1), other}, Renderer: asciiRenderer()})
	snap2 := &wire.Snapshot{Version: 3, Site: "clinic", ServiceDay: day,
		Services: []wire.ServiceInfo{{Code: "G", Name: "General", Waiting: 7, Open: true}},
		Counters: []wire.CounterInfo{{ID: 9, Name: "Desk 9", State: wire.CounterOpen}}}
	feed(m, tea.WindowSizeMsg{Width: 80, Height: 24}, TickMsg(t0),
		StateMsg{Site: 0, State: LinkConnected}, StateMsg{Site: 1, State: LinkConnected},
		SnapshotMsg{Site: 0, Snapshot: snapshot()}, SnapshotMsg{Site: 1, Snapshot: snap2})
	if v := m.View(); !strings.Contains(v, "[1/2] City Hospital") || strings.Contains(v, "General") {
		t.Fatalf("first site not shown:\n%s", v)
	}
	press(m, "tab")
	if v := m.View(); !strings.Contains(v, "[2/2] Clinic") || !strings.Contains(v, "G  General") || !strings.Contains(v, "Desk 9") {
		t.Fatalf("tab did not switch to the clinic:\n%s", v)
	}
	press(m, "n")
	if got := c2.requests(); len(got) != 1 || !reflect.DeepEqual(got[0], &wire.CallNext{Counter: 9, Site: "clinic"}) {
		t.Errorf("call next on the clinic sent %#v", got)
	}
	if len(c1.requests()) != 0 {
		t.Errorf("the hospital's connection was used for the clinic")
	}
	press(m, "[")
	if v := m.View(); !strings.Contains(v, "[1/2] City Hospital") {
		t.Errorf("[ did not go back:\n%s", v)
	}
}

func TestMouseSelectsCounter(t *testing.T) {
	conn := &recConn{}
	m := newTestModel(t, conn, 0)
	feed(m, SnapshotMsg{Snapshot: snapshot()})
	top, _ := m.counterRows()
	feed(m, tea.MouseMsg{X: 5, Y: top + 3, Button: tea.MouseButtonLeft, Action: tea.MouseActionPress})
	press(m, "n")
	if got := conn.requests(); len(got) != 1 || got[0].(*wire.CallNext).Counter != 5 {
		t.Errorf("click on the 4th counter row then n sent %#v, want counter 5", got)
	}
	if l := screen.Line(m.View(), "> "); !strings.Contains(l, "Emergency counter 5") {
		t.Errorf("selection marker not on the clicked row: %q", l)
	}
}

func TestCounterMode(t *testing.T) {
	conn := &recConn{}
	m := newTestModel(t, conn, 5)
	feed(m, SnapshotMsg{Snapshot: snapshot()},
		EventMsg{Event: ev(11, wire.EventCalled, "E001", "E", 5, wire.StatusCalled, t0, "keypad-5")},
		TickMsg(t0.Add(90*time.Second)))
	v := m.View()
	for _, want := range []string{"Counter 5 · Emergency counter 5 · open", "E001 called · service E · for 1m30s", "waiting for this counter: 3", "n next"} {
		if !strings.Contains(v, want) {
			t.Errorf("keypad view lacks %q:\n%s", want, v)
		}
	}
	if !strings.Contains(v, bigText("E001")[:10]) {
		t.Errorf("big number missing:\n%s", v)
	}
	press(m, "n", "r", "s", "d", "p")
	want := []wire.Message{
		&wire.CallNext{Counter: 5, Site: "hospital"},
		&wire.Recall{Counter: 5, Number: "E001", Site: "hospital"},
		&wire.Start{Counter: 5, Number: "E001", Site: "hospital"},
		&wire.Complete{Counter: 5, Number: "E001", Site: "hospital"},
		&wire.Pause{Counter: 5, Reason: "console", Site: "hospital"},
	}
	if got := conn.requests(); !reflect.DeepEqual(got, want) {
		t.Errorf("keypad sent %#v, want %#v", got, want)
	}
}

func TestDayChangeAsksForSnapshot(t *testing.T) {
	conn := &recConn{answer: func(wire.Message) (wire.Message, error) {
		return &wire.Snapshot{Version: 30, Site: "hospital", ServiceDay: "2026-12-01"}, nil
	}}
	m := newTestModel(t, conn, 0)
	feed(m, SnapshotMsg{Snapshot: snapshot()})
	e := ev(21, wire.EventIssued, "A001", "A", 0, wire.StatusWaiting, t0.Add(24*time.Hour), "kiosk-1")
	e.ServiceDay = "2026-12-01"
	_, cmd := m.Update(EventMsg{Event: e})
	run(m, cmd)
	if got := conn.requests(); len(got) != 1 {
		t.Fatalf("a new service day sent %d requests, want one STATUS", len(got))
	}
	if s := m.site(); s.day != "2026-12-01" || figures(m, "A").Served != 0 {
		t.Errorf("day %s, served %d after the rollover", s.day, figures(m, "A").Served)
	}
}

func TestQuit(t *testing.T) {
	m := newTestModel(t, &recConn{}, 0)
	out := press(m, "q")
	if len(out) != 1 {
		t.Fatalf("q produced %v", out)
	}
	if _, ok := out[0].(tea.QuitMsg); !ok {
		t.Errorf("q produced %T, want tea.QuitMsg", out[0])
	}
}

func TestBigText(t *testing.T) {
	got := bigText("A1")
	want := " ██    █ \n█  █  ██ \n████   █ \n█  █   █ \n█  █  ███"
	if got != want {
		t.Errorf("bigText(A1) =\n%s\nwant\n%s", got, want)
	}
	for _, l := range strings.Split(bigText("VIP-0123?"), "\n") {
		if lipgloss.Width(l) != lipgloss.Width(strings.Split(bigText("VIP-0123?"), "\n")[0]) {
			t.Errorf("ragged line %q", l)
		}
	}
}

func TestRelayCountsAttempts(t *testing.T) {
	got := make(chan tea.Msg, 10)
	r := &relay{index: 1, send: func(m tea.Msg) { got <- m }, wake: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.run(ctx)
	last := func() StateMsg {
		t.Helper()
		var m StateMsg
		for {
			select {
			case msg := <-got:
				m = msg.(StateMsg)
			case <-time.After(200 * time.Millisecond):
				return m
			}
		}
	}
	lost := errors.New("connection reset")
	r.onState(client.StateReconnecting, lost)
	if m := last(); m.State != LinkReconnecting || m.Attempt != 0 || m.Site != 1 || m.Err != lost {
		t.Errorf("after the loss: %+v", m)
	}
	r.onState(client.StateReconnecting, errors.New("refused"))
	r.onState(client.StateReconnecting, errors.New("refused"))
	if m := last(); m.State != LinkReconnecting || m.Attempt != 2 {
		t.Errorf("after two failed redials: %+v, want attempt 2", m)
	}
	r.onState(client.StateConnected, nil)
	if m := last(); m.State != LinkConnected || m.Attempt != 0 {
		t.Errorf("after the reconnect: %+v", m)
	}
}

// TestDeviceHealth: the snapshot's device health fills the offline line
// and the counters' keypad/board column; a later snapshot where the board
// answers again clears it.
func TestDeviceHealth(t *testing.T) {
	m := newTestModel(t, &recConn{}, 0)
	snap := snapshot()
	snap.Devices = []wire.DeviceInfo{
		{ID: "keypad-1", Kind: "device", Counter: 1, Online: true},
		{ID: "keypad-2", Kind: "device", Counter: 2, Detail: "not connected"},
		{ID: "/dev/ttyUSB0#2", Kind: "led", Counter: 2, Detail: "not answering"},
		{ID: "hall-printer", Kind: "printer", Detail: "paper_out"},
	}
	feed(m, SnapshotMsg{Snapshot: snap}, TickMsg(t0.Add(time.Minute)))
	s := m.site()
	want := map[string]string{"keypad-2": "device not connected", "/dev/ttyUSB0#2": "led not answering", "hall-printer": "printer paper_out"}
	for id, what := range want {
		if s.offline[id] != what {
			t.Errorf("offline[%s] = %q, want %q (all: %v)", id, s.offline[id], what, s.offline)
		}
	}
	if len(s.offline) != len(want) {
		t.Errorf("offline = %v, want only %v", s.offline, want)
	}
	if view := m.View(); !strings.Contains(view, "offline devices: /dev/ttyUSB0#2: led not answering") {
		t.Errorf("view lacks the offline line:\n%s", view)
	}
	if c := s.counter(1); c.keypadHealth != "connected" {
		t.Errorf("counter 1 keypad %q, want connected", c.keypadHealth)
	}
	if c := s.counter(2); c.keypadHealth != "offline" || c.boardHealth != "offline" {
		t.Errorf("counter 2 keypad %q board %q, want offline offline", c.keypadHealth, c.boardHealth)
	}
	snap2 := snapshot()
	snap2.Version = 20
	snap2.Devices = []wire.DeviceInfo{{ID: "/dev/ttyUSB0#2", Kind: "led", Counter: 2, Online: true}, {ID: "hall-printer", Kind: "printer", Online: true}}
	feed(m, SnapshotMsg{Snapshot: snap2})
	if _, bad := s.offline["/dev/ttyUSB0#2"]; bad {
		t.Errorf("board still offline after it answered: %v", s.offline)
	}
	if _, bad := s.offline["hall-printer"]; bad {
		t.Errorf("printer still listed after paper came back: %v", s.offline)
	}
	if c := s.counter(2); c.boardHealth != "ok" {
		t.Errorf("counter 2 board %q, want ok", c.boardHealth)
	}
}

// TestHealthRefresh: a connected console asks for a fresh snapshot (device
// health has no events) once its snapshot is 30 s old, and not again on
// every tick.
func TestHealthRefresh(t *testing.T) {
	conn := &recConn{}
	m := newTestModel(t, conn, 0)
	feed(m, StateMsg{State: LinkConnected}, SnapshotMsg{Snapshot: snapshot()}, TickMsg(t0.Add(10*time.Second)))
	s := m.site()
	if !s.healthAt.IsZero() {
		t.Fatalf("asked for health after 10 s")
	}
	feed(m, TickMsg(t0.Add(31*time.Second)))
	if !s.healthAt.Equal(t0.Add(31 * time.Second)) {
		t.Fatalf("no health refresh after 31 s (healthAt %v)", s.healthAt)
	}
	feed(m, TickMsg(t0.Add(32*time.Second)))
	if !s.healthAt.Equal(t0.Add(31 * time.Second)) {
		t.Errorf("asked again one second later")
	}
}

// TestGuessedZone: a console without the site's configuration counts
// service days in a zone guessed from the snapshot; when its day is not
// the one the daemon names, it asks for a fresh snapshot and starts again
// from it rather than showing a day cleared too early.
func TestGuessedZone(t *testing.T) {
	later := t0.Add(13 * time.Hour) // still 2026-11-30 at the daemon
	conn := &recConn{answer: func(wire.Message) (wire.Message, error) {
		s := snapshot()
		s.Version, s.TimeMS = 11, later.UnixMilli()
		s.Services[0].Issued = 10
		return s, nil
	}}
	m := New(Opts{Sites: []SiteOpts{{Code: "hospital", Conn: conn}}, Renderer: asciiRenderer()})
	feed(m, tea.WindowSizeMsg{Width: 80, Height: 24}, TickMsg(t0), StateMsg{State: LinkConnected}, SnapshotMsg{Snapshot: snapshot()})
	_, cmd := m.Update(EventMsg{Event: ev(11, wire.EventIssued, "A010", "A", 0, wire.StatusWaiting, later, "kiosk-1")})
	run(m, cmd)
	if got := conn.requests(); len(got) != 1 || !reflect.DeepEqual(got[0], &wire.Status{Site: "hospital"}) {
		t.Fatalf("the view's day ran ahead of the daemon's and the console sent %#v, want one STATUS", got)
	}
	if s, a := m.site(), figures(m, "A"); s.v.Day != day || a.Issued != 10 || a.Served != 4 {
		t.Errorf("after the fresh snapshot: day %s, A issued %d served %d, want %s 10 4", s.v.Day, a.Issued, a.Served, day)
	}
}

// TestKeypadColumnFits: at 80 and 100 columns the counters' KEYPAD column
// shows the whole health report, the LED board's included.
func TestKeypadColumnFits(t *testing.T) {
	for _, w := range []int{80, 100} {
		m := newTestModel(t, &recConn{}, 0)
		snap := snapshot()
		snap.Devices = []wire.DeviceInfo{
			{ID: "keypad-2", Kind: "device", Counter: 2, Online: true},
			{ID: "/dev/ttyUSB0#2", Kind: "led", Counter: 2, Detail: "not answering"},
		}
		feed(m, tea.WindowSizeMsg{Width: w, Height: 24}, SnapshotMsg{Snapshot: snap}, TickMsg(t0.Add(time.Minute)))
		var row string
		for _, l := range strings.Split(m.View(), "\n") {
			if strings.HasPrefix(strings.TrimLeft(l, " >"), "2  ") {
				row = l
				break
			}
		}
		if !strings.Contains(row, "connected led offline") {
			t.Errorf("%d columns: counter 2's row %q lacks its whole health report", w, row)
		}
		if lipgloss.Width(row) > w {
			t.Errorf("%d columns: row is %d wide", w, lipgloss.Width(row))
		}
	}
}

// TestCannotReach: with no daemon answering, the header and the status
// line say it cannot be reached, not "connecting" and "ready".
func TestCannotReach(t *testing.T) {
	m := newTestModel(t, &recConn{}, 0)
	feed(m, StateMsg{Site: 0, State: LinkConnecting, Attempt: 2, Err: errors.New("client: dial: connection refused")})
	view := m.View()
	for _, want := range []string{"✕ cannot reach (attempt 2)", "cannot reach the daemon at", "is `nowserving serve` running?"} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	if strings.Contains(view, "ready") {
		t.Errorf("view says ready with no daemon:\n%s", view)
	}
}

// TestPromptLine: an answer holds at most maxAnswer characters, typed or
// pasted, and one longer than the line scrolls within it: the prompt line
// stays one line of the screen's width, the label and the end of the
// answer on it.
func TestPromptLine(t *testing.T) {
	m := newTestModel(t, &recConn{}, 0)
	feed(m, SnapshotMsg{Snapshot: snapshot()})
	press(m, "i")
	feed(m, tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(strings.Repeat("x", 60) + "0123456789"), Paste: true})
	press(m, "yz")
	if got := m.prompt.in.Value(); got != strings.Repeat("x", 60)+"0123" {
		t.Errorf("answer %q (%d characters), want the first %d", got, len(got), maxAnswer)
	}
	line := screen.Line(m.View(), "issue a ticket")
	if w := lipgloss.Width(line); w != 80 || !strings.Contains(line, "x0123") {
		t.Errorf("prompt line %q (%d cells), want 80 cells ending with the answer's end", line, w)
	}
}

// TestPromptsSayWhat: the issue prompt starts empty and names the
// services; Enter on an empty prompt says nothing was sent; a transfer at
// a counter with no ticket is refused at once, before any question.
func TestPromptsSayWhat(t *testing.T) {
	conn := &recConn{}
	m := newTestModel(t, conn, 0)
	feed(m, SnapshotMsg{Snapshot: snapshot()})
	press(m, "i")
	if m.prompt == nil || m.prompt.in.Value() != "" || !strings.Contains(m.prompt.label, "(A, R, E)") {
		t.Fatalf("issue prompt %+v, want empty and naming A, R, E", m.prompt)
	}
	press(m, "E")
	if m.prompt.in.Value() != "E" {
		t.Errorf("typing E in the issue prompt gives %q", m.prompt.in.Value())
	}
	press(m, "esc", "e", "enter")
	if !strings.Contains(m.status, "nothing typed: re-enter the no-show ticket not sent") {
		t.Errorf("enter on an empty re-enter prompt: status %q", m.status)
	}
	press(m, "j", "t") // counter 2 holds nothing
	if m.prompt != nil || m.confirm != nil {
		t.Errorf("transfer with no ticket asked a question: prompt %+v confirm %+v", m.prompt, m.confirm)
	}
	if !strings.Contains(m.status, "transfer at counter 2: refused: no ticket at counter 2") {
		t.Errorf("transfer with no ticket: status %q", m.status)
	}
	if len(conn.sent) != 0 {
		t.Errorf("sent %v, want nothing", conn.sent)
	}
}

// TestPersonAtCounter: an action from the browser counter page (actor
// user:NAME@counter-ID) shows the person on the counter's row and in the
// event stream; the counter's keypad acting after it takes the name off.
func TestPersonAtCounter(t *testing.T) {
	m := newTestModel(t, &recConn{}, 0)
	feed(m, tea.WindowSizeMsg{Width: 120, Height: 30}, SnapshotMsg{Snapshot: snapshot()},
		EventMsg{Event: ev(11, wire.EventIssued, "A010", "A", 0, wire.StatusWaiting, t0.Add(time.Minute), "kiosk-1")},
		EventMsg{Event: from(ev(12, wire.EventCalled, "A010", "A", 2, wire.StatusCalled, t0.Add(2*time.Minute), "user:li.na@counter-2"),
			wire.StatusWaiting, "A", 0)},
		TickMsg(t0.Add(3*time.Minute)))
	row := func() string {
		for _, l := range strings.Split(m.View(), "\n") {
			if strings.HasPrefix(strings.TrimLeft(l, " >"), "2  ") {
				return l
			}
		}
		return ""
	}
	if r := row(); !strings.Contains(r, "· li.na") {
		t.Errorf("counter 2's row %q does not name li.na", r)
	}
	if v := m.View(); !strings.Contains(v, "user:li.na@counter-2") {
		t.Errorf("the event stream does not name the person and place:\n%s", v)
	}
	feed(m, EventMsg{Event: from(ev(13, wire.EventNoShow, "A010", "A", 2, wire.StatusNoShow, t0.Add(4*time.Minute), "keypad-2"),
		wire.StatusCalled, "A", 2)}, TickMsg(t0.Add(5*time.Minute)))
	if r := row(); strings.Contains(r, "li.na") {
		t.Errorf("counter 2's row %q still names li.na after its keypad acted", r)
	}
}
