package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// key applies one key press: to the open question or prompt, else the
// action bound to it.
func (m *Model) key(msg tea.KeyMsg) tea.Cmd {
	switch {
	case m.confirm != nil:
		return m.confirmKey(msg)
	case m.prompt != nil:
		return m.promptKey(msg)
	case msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste:
		// Keys typed quickly can arrive together: take them one by one.
		var cmds []tea.Cmd
		for _, r := range msg.Runes {
			cmds = append(cmds, m.key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}))
		}
		return tea.Batch(cmds...)
	}
	s, c := m.site(), m.selected()
	for _, a := range actions {
		if !key.Matches(msg, a.binding(m.keys)) {
			continue
		}
		if a.counter && c == nil {
			return nil
		}
		return a.run(m, s, c)
	}
	return nil
}

// confirmKey answers the yes/no question.
func (m *Model) confirmKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "y", "Y", "enter":
		run := m.confirm.run
		m.confirm = nil
		m.status, m.statusOK = m.t("sent…"), true
		return run
	case "n", "N", "esc", "ctrl+c", "q":
		m.confirm = nil
		m.status, m.statusOK = m.t("not sent"), true
	}
	return nil
}

// maxAnswer is how many characters a prompt's answer may have.
const maxAnswer = 64

// askFor opens a prompt: label, then value (the cursor after it) to edit;
// enter hands the answer, trimmed, to submit.
func (m *Model) askFor(label, value string, submit func(m *Model, value string) tea.Cmd) {
	in := textinput.New()
	in.Prompt = ""
	in.CharLimit = maxAnswer
	in.Cursor.SetMode(cursor.CursorStatic)
	in.Cursor.Style = m.st.sel
	in.KeyMap.Paste.SetEnabled(false) // ctrl+v would read the daemon host's clipboard; a terminal's paste still comes
	in.SetValue(value)
	in.Focus()
	m.prompt = &prompt{label: label, in: in, submit: submit}
	m.prompt.fit(m.width)
}

// fit gives the answer the width the label leaves on a line of width
// cells: a longer answer scrolls within it.
func (p *prompt) fit(width int) {
	p.in.Width = max(width-lipgloss.Width(p.label+": ")-1, 1)
}

// promptKey edits the prompt's line (as text inputs do: arrows, home,
// end, backspace, delete, ctrl+u, ctrl+w, pasted text); enter submits it,
// esc drops it.
func (m *Model) promptKey(msg tea.KeyMsg) tea.Cmd {
	p := m.prompt
	switch msg.Type {
	case tea.KeyEnter:
		m.prompt = nil
		return p.submit(m, strings.TrimSpace(p.in.Value()))
	case tea.KeyEsc, tea.KeyCtrlC:
		m.prompt = nil
		return nil
	}
	var cmd tea.Cmd
	p.in, cmd = p.in.Update(msg)
	return cmd
}

// action is what a key does. Counter actions apply to the selected counter
// (the counter of counter mode) and do nothing when there is none.
type action struct {
	binding func(keyMap) key.Binding
	counter bool
	run     func(m *Model, s *site, c *counter) tea.Cmd
}

// actions binds the keys of keyMap to what they do.
var actions = []action{
	{binding: func(k keyMap) key.Binding { return k.Quit }, run: func(*Model, *site, *counter) tea.Cmd { return tea.Quit }},
	{binding: func(k keyMap) key.Binding { return k.Help }, run: (*Model).toggleHelp},
	{binding: func(k keyMap) key.Binding { return k.Up }, run: (*Model).selectUp},
	{binding: func(k keyMap) key.Binding { return k.Down }, run: (*Model).selectDown},
	{binding: func(k keyMap) key.Binding { return k.NextSite }, run: func(m *Model, _ *site, _ *counter) tea.Cmd { return m.switchSite(1) }},
	{binding: func(k keyMap) key.Binding { return k.PrevSite }, run: func(m *Model, _ *site, _ *counter) tea.Cmd { return m.switchSite(-1) }},
	{binding: func(k keyMap) key.Binding { return k.Filter }, run: (*Model).askFilter},
	{binding: func(k keyMap) key.Binding { return k.Issue }, run: (*Model).askIssue},
	{binding: func(k keyMap) key.Binding { return k.Reenter }, run: (*Model).askReenter},
	{binding: func(k keyMap) key.Binding { return k.Reprint }, run: (*Model).askReprint},
	{binding: func(k keyMap) key.Binding { return k.CheckIn }, run: (*Model).askCheckIn},
	{binding: func(k keyMap) key.Binding { return k.Cancel }, run: (*Model).askCancel},
	{binding: func(k keyMap) key.Binding { return k.Next }, counter: true, run: (*Model).callNext},
	{binding: func(k keyMap) key.Binding { return k.CallNumber }, counter: true, run: (*Model).askCallNumber},
	{binding: func(k keyMap) key.Binding { return k.Recall }, counter: true, run: (*Model).recall},
	{binding: func(k keyMap) key.Binding { return k.Start }, counter: true, run: (*Model).start},
	{binding: func(k keyMap) key.Binding { return k.Done }, counter: true, run: (*Model).done},
	{binding: func(k keyMap) key.Binding { return k.NoShow }, counter: true, run: (*Model).askNoShow},
	{binding: func(k keyMap) key.Binding { return k.Transfer }, counter: true, run: (*Model).askTransfer},
	{binding: func(k keyMap) key.Binding { return k.Pause }, counter: true, run: (*Model).pauseOrResume},
}

func (m *Model) toggleHelp(*site, *counter) tea.Cmd {
	m.help.ShowAll = !m.help.ShowAll
	return nil
}

func (m *Model) selectUp(*site, *counter) tea.Cmd {
	m.sel = max(m.sel-1, 0)
	return nil
}

func (m *Model) selectDown(s *site, _ *counter) tea.Cmd {
	m.sel = min(m.sel+1, max(len(s.counters)-1, 0))
	return nil
}

// switchSite shows the site step places on, wrapping around.
func (m *Model) switchSite(step int) tea.Cmd {
	m.cur = (m.cur + len(m.sites) + step) % len(m.sites)
	m.sel = 0
	return nil
}

func (m *Model) askFilter(*site, *counter) tea.Cmd {
	m.askFor(m.t("filter events (service code, counter number or ticket; empty: all)"), m.filter,
		func(m *Model, v string) tea.Cmd { m.filter = v; return nil })
	return nil
}

// askNumber prompts for a ticket number (upper-cased) and sends what
// request makes of it.
func (m *Model) askNumber(label, def string, request func(m *Model, number string) tea.Cmd) {
	m.askFor(label, def, func(m *Model, v string) tea.Cmd {
		if v == "" {
			m.status, m.statusOK = "nothing typed: "+label+" not sent", false
			return nil
		}
		return request(m, strings.ToUpper(v))
	})
}

func (m *Model) askIssue(s *site, _ *counter) tea.Cmd {
	codes := make([]string, 0, len(s.services))
	for _, sv := range s.services {
		codes = append(codes, sv.code)
	}
	label := m.t("issue a ticket of service")
	if len(codes) > 0 {
		label += " (" + strings.Join(codes, ", ") + ")"
	}
	m.askNumber(label, "", func(m *Model, v string) tea.Cmd {
		return m.send(m.tf("issue a ticket of %s", v), &wire.TakeTicket{Service: v, Site: s.code})
	})
	return nil
}

// askCheckIn prompts for a booking code (as printed or sent at booking;
// case, spaces and dashes do not matter) and checks the booking in: its
// ticket joins the queue of the resource's service, as at a kiosk.
func (m *Model) askCheckIn(s *site, _ *counter) tea.Cmd {
	m.askNumber("check in the booking with code", "", func(m *Model, v string) tea.Cmd {
		return m.send("check in booking "+v, &wire.CheckIn{Code: v, Site: s.code})
	})
	return nil
}

func (m *Model) askReenter(s *site, _ *counter) tea.Cmd {
	m.askNumber("re-enter the no-show ticket", "", func(m *Model, v string) tea.Cmd {
		return m.send("re-enter "+v, &wire.Reenter{Number: v, Site: s.code})
	})
	return nil
}

func (m *Model) askReprint(s *site, c *counter) tea.Cmd {
	m.askFor("reprint ticket (number, then a printer id; none: the kiosk's printer)", s.number(c),
		func(m *Model, v string) tea.Cmd {
			f := strings.Fields(v)
			if len(f) == 0 {
				m.status, m.statusOK = "nothing typed: reprint not sent", false
				return nil
			}
			r := &wire.Reprint{Number: strings.ToUpper(f[0]), Site: s.code}
			what := "reprint " + r.Number
			if len(f) > 1 {
				r.Printer = f[1]
				what += " on printer " + r.Printer
			}
			return doOnce(m.cur, m.site().conn, what, r)
		})
	return nil
}

func (m *Model) askCancel(s *site, c *counter) tea.Cmd {
	m.askNumber(m.t("cancel ticket"), s.number(c), func(m *Model, v string) tea.Cmd {
		m.ask(m.tf("Cancel ticket %s? It cannot be undone. (y/n)", v),
			m.send(m.tf("cancel %s", v), &wire.Cancel{Number: v, Site: s.code}))
		return nil
	})
	return nil
}

// at names counter c in the status line, in the console's words.
func (m *Model) at(c *counter) string { return m.tf("counter %d", c.id) }

func (m *Model) callNext(s *site, c *counter) tea.Cmd {
	return m.send(m.tf("call next at %s", m.at(c)), &wire.CallNext{Counter: c.id, Site: s.code})
}

func (m *Model) askCallNumber(s *site, c *counter) tea.Cmd {
	m.askNumber(m.tf("call number to %s", m.at(c)), "", func(m *Model, v string) tea.Cmd {
		return m.send(m.tf("call %s to %s", v, m.at(c)), &wire.CallNumber{Counter: c.id, Number: v, Site: s.code})
	})
	return nil
}

func (m *Model) recall(s *site, c *counter) tea.Cmd {
	return m.send(m.tf("recall at %s", m.at(c)), &wire.Recall{Counter: c.id, Number: s.number(c), Site: s.code})
}

func (m *Model) start(s *site, c *counter) tea.Cmd {
	return m.send(m.tf("start at %s", m.at(c)), &wire.Start{Counter: c.id, Number: s.number(c), Site: s.code})
}

func (m *Model) done(s *site, c *counter) tea.Cmd {
	return m.send(m.tf("done at %s", m.at(c)), &wire.Complete{Counter: c.id, Number: s.number(c), Site: s.code})
}

func (m *Model) askNoShow(s *site, c *counter) tea.Cmd {
	num := s.number(c)
	what := m.t("the ticket")
	if num != "" {
		what = num
	}
	m.ask(m.tf("Mark %s at %s as a no-show? (y/n)", what, m.at(c)),
		m.send(m.tf("no-show at %s", m.at(c)), &wire.NoShow{Counter: c.id, Number: num, Site: s.code}))
	return nil
}

func (m *Model) askTransfer(s *site, c *counter) tea.Cmd {
	num := s.number(c)
	if num == "" {
		m.status, m.statusOK = m.tf("transfer at %s: refused: no ticket at %s (call one first)", m.at(c), m.at(c)), false
		return nil
	}
	m.askFor(m.tf("transfer %s from %s to (service code or counter number)", orDash(num), m.at(c)), "",
		func(m *Model, v string) tea.Cmd {
			if v == "" {
				m.status, m.statusOK = m.t("nothing typed: transfer not sent"), false
				return nil
			}
			t := &wire.Transfer{Counter: c.id, Number: num, Site: s.code}
			to := ""
			if n := queue.CounterNumber(v); n > 0 {
				t.ToCounter, to = n, m.tf("counter %s", v)
			} else {
				t.ToService, to = strings.ToUpper(v), m.tf("service %s", strings.ToUpper(v))
			}
			m.ask(m.tf("Transfer %s from %s to %s? (y/n)", orDash(num), m.at(c), to),
				m.send(m.tf("transfer %s to %s", orDash(num), to), t))
			return nil
		})
	return nil
}

func (m *Model) pauseOrResume(s *site, c *counter) tea.Cmd {
	if mode := s.holds(c).Mode; mode == queue.CounterPaused || mode == queue.CounterClosed {
		return m.send(m.tf("resume %s", m.at(c)), &wire.Resume{Counter: c.id, Site: s.code})
	}
	return m.send(m.tf("pause %s", m.at(c)), &wire.Pause{Counter: c.id, Reason: "console", Site: s.code})
}
