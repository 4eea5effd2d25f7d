package tui

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/nowserving/nowserving/internal/testkit/golden"
	"github.com/nowserving/nowserving/protocol/wire"
)

// busyModel is a console with a morning's worth of events, w x h.
func busyModel(t *testing.T, w, h int, counter uint32) *Model {
	t.Helper()
	return busyModelIn(t, w, h, counter, "", nil)
}

// siteIn are the test site's names in zh and pt, as console_setup picks
// them from a configuration for --lang.
var siteIn = map[string][]string{
	"zh": {"市人民医院", "初诊", "复诊", "急诊", "1号窗口", "2号窗口", "3号窗口", "5号急诊窗口"},
	"pt": {"Hospital da Cidade", "Primeira consulta", "Retorno", "Emergência", "Guichê 1", "Guichê 2", "Guichê 3", "Emergência 5"},
}

// busyModelIn is busyModel with the console's words in lang and, when
// names is set, the site named in it (site, services, counters).
func busyModelIn(t *testing.T, w, h int, counter uint32, lang string, names []string) *Model {
	t.Helper()
	so := testSiteOpts(&recConn{})
	if names != nil {
		so.Name = names[0]
		for i := range so.Services {
			so.Services[i].Name = names[1+i]
		}
		for i := range so.Counters {
			so.Counters[i].Name = names[4+i]
		}
	}
	m := New(Opts{Sites: []SiteOpts{so}, Addr: "127.0.0.1:7400", Counter: counter, Renderer: asciiRenderer(), Lang: lang})
	feed(m, tea.WindowSizeMsg{Width: 80, Height: 24}, TickMsg(t0), StateMsg{State: LinkConnected})
	feed(m, tea.WindowSizeMsg{Width: w, Height: h}, SnapshotMsg{Snapshot: snapshot()})
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	evs := []*wire.Event{
		ev(11, wire.EventIssued, "A010", "A", 0, wire.StatusWaiting, at(1), "kiosk-1"),
		ev(12, wire.EventIssued, "R003", "R", 0, wire.StatusWaiting, at(2), "kiosk-1"),
		ev(13, wire.EventIssued, "E001", "E", 0, wire.StatusWaiting, at(3), "kiosk-1"),
		waited(from(ev(14, wire.EventCalled, "E001", "E", 5, wire.StatusCalled, at(4), "keypad-5"), wire.StatusWaiting, "E", 0), time.Minute),
		from(ev(15, wire.EventServing, "E001", "E", 5, wire.StatusServing, at(5), "keypad-5"), wire.StatusCalled, "E", 5),
		from(ev(16, wire.EventDone, "A005", "A", 1, wire.StatusDone, at(6), "keypad-1"), wire.StatusServing, "A", 1),
		waited(from(ev(17, wire.EventCalled, "A006", "A", 1, wire.StatusCalled, at(7), "keypad-1"), wire.StatusWaiting, "A", 0), 20*time.Minute),
		from(ev(18, wire.EventNoShow, "A006", "A", 1, wire.StatusNoShow, at(9), "keypad-1"), wire.StatusCalled, "A", 1),
		waited(from(ev(19, wire.EventCalled, "A007", "A", 2, wire.StatusCalled, at(10), "console-1"), wire.StatusWaiting, "A", 0), 22*time.Minute),
		from(ev(20, wire.EventTransferred, "A007", "R", 2, wire.StatusWaiting, at(11), "console-1"), wire.StatusCalled, "A", 2),
		{Version: 21, Site: "hospital", Kind: wire.EventPrintFailed, Actor: "kiosk-2", TimeMS: at(12).UnixMilli(), ServiceDay: day},
		waited(from(ev(22, wire.EventCalled, "R003", "R", 2, wire.StatusCalled, at(13), "keypad-2"), wire.StatusWaiting, "R", 0), 11*time.Minute),
	}
	evs[9].Issuer = "A" // A007, moved to R
	for _, e := range evs {
		feed(m, EventMsg{Event: e})
	}
	feed(m, TickMsg(at(27)))
	return m
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name  string
		model func(t *testing.T) *Model
	}{
		{"supervisor-80x24", func(t *testing.T) *Model { return busyModel(t, 80, 24, 0) }},
		{"supervisor-120x40", func(t *testing.T) *Model { return busyModel(t, 120, 40, 0) }},
		{"help-80x24", func(t *testing.T) *Model { m := busyModel(t, 80, 24, 0); press(m, "?"); return m }},
		{"confirm-80x24", func(t *testing.T) *Model { m := busyModel(t, 80, 24, 0); press(m, "j", "x"); return m }},
		{"filter-80x24", func(t *testing.T) *Model { m := busyModel(t, 80, 24, 0); press(m, "/", "a", "enter"); return m }},
		{"stale-80x24", func(t *testing.T) *Model {
			m := busyModel(t, 80, 24, 0)
			feed(m, StateMsg{State: LinkReconnecting, Attempt: 3})
			return m
		}},
		{"refusal-80x24", func(t *testing.T) *Model {
			m := busyModel(t, 80, 24, 0)
			feed(m, ResultMsg{What: "call next at counter 5", Err: wire.ErrInvalidTransition.WithMsg(
				"invalid transition: counter 5 is calling A040: start, recall or mark it no-show first")})
			return m
		}},
		{"refusal-counter-80x24", func(t *testing.T) *Model {
			m := busyModel(t, 80, 24, 5)
			feed(m, ResultMsg{What: "call next at counter 5", Err: wire.ErrInvalidTransition.WithMsg(
				"invalid transition: counter 5 is calling A040: start, recall or mark it no-show first")})
			return m
		}},
		{"counter-80x24", func(t *testing.T) *Model { return busyModel(t, 80, 24, 5) }},
		{"supervisor-zh-80x24", func(t *testing.T) *Model { return busyModelIn(t, 80, 24, 0, "zh", siteIn["zh"]) }},
		{"supervisor-pt-120x40", func(t *testing.T) *Model { return busyModelIn(t, 120, 40, 0, "pt", siteIn["pt"]) }},
		{"counter-zh-80x24", func(t *testing.T) *Model { return busyModelIn(t, 80, 24, 5, "zh", siteIn["zh"]) }},
		{"stale-pt-80x24", func(t *testing.T) *Model {
			m := busyModelIn(t, 80, 24, 0, "pt", siteIn["pt"])
			feed(m, StateMsg{State: LinkReconnecting, Attempt: 3})
			return m
		}},
		{"counter-120x40", func(t *testing.T) *Model { return busyModel(t, 120, 40, 5) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.model(t).View() + "\n"
			golden.Assert(t, filepath.Join("testdata", tt.name+".golden"), []byte(got))
			if strings.Contains(got, "\x1b[") {
				t.Errorf("screen holds escape sequences despite the Ascii profile")
			}
		})
	}
}

// TestScreenLanguage: a zh or pt console has no English words of its own
// left: the event stream's tickets ("in" a service, "at" a counter), the
// KEYPAD column's health and the offline line's device kinds and the
// daemon's fixed details are in the screen's language; English keeps its
// words.
func TestScreenLanguage(t *testing.T) {
	for _, tc := range []struct {
		lang        string
		want, never []string
	}{
		{"zh", []string{"E001 业务 E", "A005 在1号窗口", "在线 屏 正常", "离线", "lobby-tp: 打印机 缺纸", "keypad-2: 设备 未连接", "kiosk-2: 打印失败 10:12"},
			[]string{" in ", " at ", "connected", "offline", "print", "paper", "led"}},
		{"pt", []string{"E001 em E", "A005 guichê 1", "conectado led ok", "inativo", "lobby-tp: impressora sem papel", "keypad-2: dispositivo não conectado", "kiosk-2: falha de impressão 10:12"},
			[]string{" in ", " at ", "connected", "offline", "print", "paper"}},
		{"en", []string{"E001 in E", "A005 at 1", "connected led ok", "offline", "lobby-tp: printer paper out", "keypad-2: device not connected", "kiosk-2: print failed 10:12"}, nil},
	} {
		m := busyModelIn(t, 160, 40, 0, tc.lang, siteIn[tc.lang])
		m.site().applyDevices([]wire.DeviceInfo{
			{ID: "keypad-1", Kind: "device", Counter: 1, Online: true},
			{ID: "/dev/ttyUSB0#1", Kind: "led", Counter: 1, Online: true},
			{ID: "keypad-2", Kind: "device", Counter: 2, Detail: "not connected"},
			{ID: "lobby-tp", Kind: "printer", Detail: "paper_out"},
		})
		view := m.View()
		for _, w := range tc.want {
			if !strings.Contains(view, w) {
				t.Errorf("%s: screen lacks %q:\n%s", tc.lang, w, view)
			}
		}
		for _, w := range tc.never {
			if strings.Contains(view, w) {
				t.Errorf("%s: screen holds the English %q:\n%s", tc.lang, w, view)
			}
		}
	}
}

// TestStatusLineLanguage: an action and the daemon's refusal of it read in
// the console's language, the reason too when it is the protocol's own
// (a reason the daemon worded is its own: refusal-80x24).
func TestStatusLineLanguage(t *testing.T) {
	for _, tc := range []struct{ lang, want string }{
		{"zh", "1 号窗口 叫号：被拒：无人等候"},
		{"pt", "chamar próxima no guichê 1: recusado: nenhuma senha aguardando"},
		{"en", "call next at counter 1: refused: no ticket waiting"},
	} {
		m := busyModelIn(t, 80, 24, 0, tc.lang, siteIn[tc.lang])
		m.sites[0].conn = &recConn{answer: func(wire.Message) (wire.Message, error) { return nil, wire.ErrNoTicketWaiting }}
		press(m, "n")
		if !strings.Contains(m.View(), tc.want) {
			t.Errorf("%s: status line lacks %q:\n%s", tc.lang, tc.want, m.View())
		}
	}
}

// TestEventActorColumn: in every language the actor of an event stands in
// the same column whatever the event, also for a counter of two digits
// (zh's "在 12 号窗口" pushed it one to the right).
func TestEventActorColumn(t *testing.T) {
	for _, lang := range []string{"en", "pt", "zh"} {
		m := busyModelIn(t, 80, 24, 0, lang, siteIn[lang])
		s := m.site()
		col := -1
		for _, e := range []wire.Event{
			{Kind: wire.EventCalled, Number: "A123", Counter: 12},
			{Kind: wire.EventServing, Number: "A123", Counter: 12},
			{Kind: wire.EventDone, Number: "A123", Counter: 5},
			{Kind: wire.EventNoShow, Number: "A123", Counter: 12},
			{Kind: wire.EventIssued, Number: "A123", Service: "A"},
		} {
			e.Version, e.TimeMS, e.Actor = 99, t0.UnixMilli(), "keypad-12"
			line := m.eventLine(s, &e)
			at := strings.Index(line, "keypad-12")
			if at < 0 {
				t.Fatalf("%s: %q has no actor", lang, line)
			}
			c := lipgloss.Width(line[:at])
			if col < 0 {
				col = c
			}
			if c != col {
				t.Errorf("%s: %q: actor at column %d, want %d", lang, line, c, col)
			}
		}
	}
}
