package tui

import (
	"regexp"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/nowserving/nowserving/protocol/wire"
)

// FuzzEvents feeds the console whatever a daemon could send as EVENT and
// SNAPSHOT payloads (decoded by protocol/wire): it must neither panic nor
// draw past the screen, whatever the numbers, kinds and order.
func FuzzEvents(f *testing.F) {
	for _, e := range []*wire.Event{
		ev(11, wire.EventIssued, "A010", "A", 0, wire.StatusWaiting, t0, "kiosk-1"),
		ev(12, wire.EventCalled, "A010", "A", 2, wire.StatusCalled, t0, "keypad-2"),
		ev(13, wire.EventTransferred, "A010", "R", 2, wire.StatusWaiting, t0, "console-1"),
		{Version: 14, Kind: wire.EventKind(200), Number: "长号码", Counter: 99999, TimeMS: -1},
	} {
		b, err := e.AppendBinary(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
	}
	snap, err := snapshot().AppendBinary(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(snap, true)
	f.Fuzz(func(t *testing.T, payload []byte, isSnapshot bool) {
		m := New(Opts{Sites: []SiteOpts{testSiteOpts(&recConn{})}, Renderer: asciiRenderer()})
		feed(m, tea.WindowSizeMsg{Width: 80, Height: 24}, TickMsg(t0), StateMsg{State: LinkConnected},
			SnapshotMsg{Snapshot: snapshot()})
		if isSnapshot {
			var s wire.Snapshot
			if s.Decode(payload) != nil {
				return
			}
			feed(m, SnapshotMsg{Snapshot: &s})
		} else {
			var e wire.Event
			if e.Decode(payload) != nil {
				return
			}
			feed(m, EventMsg{Event: &e}, EventMsg{Event: &e})
		}
		for _, mode := range []uint32{0, 5} {
			m.counter = mode
			for i, l := range splitLines(m.View()) {
				if w := lipgloss.Width(l); w > 80 {
					t.Fatalf("counter mode %d: line %d is %d wide: %q", mode, i, w, l)
				}
			}
		}
		// A nonsense event may make the view count below zero; the
		// screen never shows it.
		m.counter = 0
		for i, l := range splitLines(m.View()) {
			if negative.MatchString(l) {
				t.Fatalf("line %d shows a negative count: %q", i, l)
			}
		}
	})
}

var negative = regexp.MustCompile(`\s-\d`)

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
