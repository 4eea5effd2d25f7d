package tui

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/nowserving/nowserving/internal/testkit/screen"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// daemon is a real nowserving daemon on a loopback port: SQLite store,
// queue engine, protocol server.
type daemon struct{ *protocoltest.Daemon }

var secret = protocoltest.Secret

func startDaemon(t *testing.T) *daemon {
	cs := []queue.CounterService{{Service: "A", Weight: 1}, {Service: "B", Weight: 1}}
	site := queue.Site{
		ID: "hq", Location: time.UTC,
		Services: []queue.Service{
			{Code: "A", Prefix: "A", Width: 3, AvgService: 5 * time.Minute, Names: map[string]string{"en": "General"}},
			{Code: "B", Prefix: "B", Width: 3, AvgService: time.Minute, Names: map[string]string{"en": "Business"}},
		},
		Counters: []queue.Counter{{ID: "1", Services: cs}, {ID: "2", Services: cs}},
	}
	var devs []protocol.Device
	for id, role := range map[string]wire.Role{"kiosk-1": wire.RoleKiosk, "display-1": wire.RoleDisplay, "console-1": wire.RoleConsole} {
		devs = append(devs, protocol.Device{ID: id, Role: role, Site: "hq", Secret: secret(id)})
	}
	d := protocoltest.New(t, site, devs)
	d.Batch = 16
	d.Start()
	t.Cleanup(d.Stop)
	return &daemon{d}
}

func (d *daemon) dial(t *testing.T, id string, role wire.Role) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, d.Addr, client.Opts{DeviceID: id, Secret: secret(id), Role: role,
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("dial %s: %v", id, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// liveConsole is a console model fed by RunSite against d.
type liveConsole struct {
	m    *Model
	msgs chan tea.Msg
}

func startConsole(t *testing.T, d *daemon) *liveConsole {
	lc := &liveConsole{
		m:    New(Opts{Sites: []SiteOpts{{Code: "hq", Name: "HQ"}}, Addr: d.Addr, Renderer: asciiRenderer()}),
		msgs: make(chan tea.Msg, 4096),
	}
	feed(lc.m, tea.WindowSizeMsg{Width: 100, Height: 30}, TickMsg(time.Now()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = RunSite(ctx, SiteSession{
			Site: "hq", Send: func(m tea.Msg) { lc.msgs <- m },
			Dial: func(ctx context.Context, onState func(client.State, error)) (*client.Client, error) {
				return client.Dial(ctx, d.Addr, client.Opts{DeviceID: "console-1", Secret: secret("console-1"),
					Role: wire.RoleConsole, Site: "hq", OnState: onState,
					MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
			},
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return lc
}

// waitFor feeds the console what RunSite sends until cond holds.
func (lc *liveConsole) waitFor(t *testing.T, what string, cond func(view string) bool) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for !cond(lc.m.View()) {
		select {
		case msg := <-lc.msgs:
			_, cmd := lc.m.Update(msg)
			run(lc.m, cmd)
		case <-deadline:
			t.Fatalf("waiting for %s; screen:\n%s", what, lc.m.View())
		}
	}
}

// connected starts a daemon and a console on it, waits for the console's
// first snapshot, and dials the daemon as kiosk-1.
func connected(t *testing.T) (*daemon, *liveConsole, *client.Client) {
	d := startDaemon(t)
	lc := startConsole(t, d)
	lc.waitFor(t, "the first snapshot", func(string) bool { s := lc.m.site(); return s.haveSnap && s.conn != nil })
	return d, lc, d.dial(t, "kiosk-1", wire.RoleKiosk)
}

// take takes a normal ticket of service at kiosk; what names the moment in
// the failure.
func take(t *testing.T, kiosk *client.Client, service, what string) *wire.Ticket {
	t.Helper()
	tk, err := kiosk.TakeTicket(context.Background(), service, wire.ClassNormal, client.TicketOpts{})
	if err != nil {
		t.Fatalf("take ticket %s: %v", what, err)
	}
	return tk
}

func TestEndToEnd(t *testing.T) {
	d, lc, kiosk := connected(t)
	tk := take(t, kiosk, "A", "at the start")
	lc.waitFor(t, "the kiosk's ticket on the console", func(v string) bool {
		return strings.Contains(v, tk.Number+" in A") && strings.Contains(screen.Line(v, "A  General"), " 1 ")
	})

	display := d.dial(t, "display-1", wire.RoleDisplay)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	sub, err := display.Subscribe(ctx, client.Filter{FromVersion: tk.Version})
	if err != nil {
		t.Fatalf("display subscribe: %v", err)
	}

	// The supervisor calls the next ticket to counter 1 (the selected row).
	press(lc.m, "n")
	if want := "call next at counter 1: " + tk.Number + " called at counter 1"; !strings.Contains(lc.m.View(), want) {
		t.Errorf("status line lacks %q:\n%s", want, lc.m.View())
	}
	for called := false; !called; {
		select {
		case u, ok := <-sub.Updates():
			if !ok {
				t.Fatalf("display subscription ended: %v", sub.Err())
			}
			if e := u.Event; e != nil && e.Kind == wire.EventCalled {
				if e.Number != tk.Number || e.Counter != 1 || e.Actor != "console-1" {
					t.Errorf("display saw %+v, want %s called to 1 by console-1", e, tk.Number)
				}
				called = true
			}
		case <-ctx.Done():
			t.Fatal("the display never saw the console's call")
		}
	}
	lc.waitFor(t, "counter 1 showing the call", func(v string) bool {
		return strings.Contains(screen.Line(v, "1  Counter 1"), tk.Number)
	})

	// A refusal comes back in the status line.
	press(lc.m, "j", "n")
	if want := "call next at counter 2: refused: "; !strings.Contains(lc.m.View(), want) {
		t.Errorf("status line lacks %q:\n%s", want, lc.m.View())
	}

	// REPRINT reaches the daemon, which has no printers here.
	press(lc.m, "P", tk.Number, "enter")
	if want := "reprint " + tk.Number + ": printer failed: printing not configured"; !strings.Contains(lc.m.View(), want) {
		t.Errorf("status line lacks %q:\n%s", want, lc.m.View())
	}
}

func TestEndToEndReconnect(t *testing.T) {
	d, lc, kiosk := connected(t)
	take(t, kiosk, "B", "at the start")
	lc.waitFor(t, "B001", func(v string) bool { return strings.Contains(v, "B001 in B") })

	d.Stop()
	lc.waitFor(t, "reconnecting", func(v string) bool {
		return strings.Contains(v, "reconnecting") && strings.Contains(v, "STALE")
	})
	d.Start()
	lc.waitFor(t, "connected again", func(v string) bool {
		return strings.Contains(v, "● connected") && !strings.Contains(v, "STALE")
	})
	take(t, kiosk, "B", "after the restart")
	lc.waitFor(t, "B002 after the restart", func(v string) bool {
		return strings.Contains(v, "B002 in B") && strings.Contains(screen.Line(v, "B  Business"), " 2 ")
	})
}

// TestEndToEndFigures: the console's figures are the daemon's. It starts
// on a day under way (the history it replays is the whole day, so it
// knows each waiting ticket), then follows a transfer (counted by the
// issuing service), a recall, a service and a no-show; at the end its
// figures equal the daemon's snapshot, to the millisecond.
func TestEndToEndFigures(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	n := 0
	req := func() queue.Request {
		n++
		return queue.Request{Site: "hq", Device: "console-1", Key: "k" + strconv.Itoa(n)}
	}
	cr := func(c string) queue.CounterRequest { return queue.CounterRequest{Request: req(), Counter: c} }
	step := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// The log's first event cannot be replayed (a subscription from
	// version 1 gets the events after it): let it be a counter's.
	step(d.Engine.Pause(ctx, cr("2")))
	step(d.Engine.Resume(ctx, cr("2")))
	for _, sv := range []string{"A", "A", "B", "A"} {
		step(d.Engine.Issue(ctx, queue.IssueRequest{Request: req(), Service: sv, Class: queue.ClassNormal}))
	}
	step(d.Engine.CallNext(ctx, cr("1")))

	lc := startConsole(t, d)
	last := func() int64 {
		v, err := d.Engine.LastVersion(ctx, "hq")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	caughtUp := func(string) bool { s := lc.m.site(); return s.haveSnap && s.hist == nil && s.v.Version == last() }
	lc.waitFor(t, "the day so far", caughtUp)

	step(d.Engine.Transfer(ctx, queue.TransferRequest{Request: req(), Counter: "1", ToService: "B"}))
	step(d.Engine.CallNext(ctx, cr("2")))
	step(d.Engine.Recall(ctx, cr("2")))
	step(d.Engine.Start(ctx, cr("2")))
	step(d.Engine.Complete(ctx, cr("2")))
	step(d.Engine.CallNext(ctx, cr("1")))
	step(d.Engine.NoShow(ctx, cr("1")))
	step(d.Engine.CallNext(ctx, cr("1")))
	lc.waitFor(t, "the events", caughtUp)

	snap, err := d.Engine.Snapshot(ctx, "hq")
	if err != nil {
		t.Fatal(err)
	}
	s := lc.m.site()
	near := func(a, b time.Duration) bool { return (a - b).Abs() <= 5*time.Millisecond }
	for _, want := range snap.Services {
		got := s.figures(s.service(want.Code))
		if got.Waiting != want.Waiting || got.Issued != want.Issued || got.Called != want.Called || got.Served != want.Served ||
			got.NoShows != want.NoShows || got.Cancelled != want.Cancelled ||
			!near(got.LongestWait(snap.At), want.LongestWait) || !near(got.AvgWait(), want.AvgWait) {
			t.Errorf("service %s: console %+v (longest %v, average %v), daemon %+v",
				want.Code, got, got.LongestWait(snap.At), got.AvgWait(), want)
		}
	}
	for _, want := range snap.Counters {
		got := s.holds(s.counter(uint32(must(strconv.Atoi(want.ID)))))
		var id int64
		if want.Ticket != nil {
			id = want.Ticket.ID
		}
		if got.TicketID != id || got.Mode != want.Mode || got.Served != want.Served || !near(got.Since.Sub(want.Since), 0) {
			t.Errorf("counter %s: console %+v, daemon %+v", want.ID, got, want)
		}
	}
	if a := s.figures(s.service("A")); a.Issued != 3 {
		t.Errorf("A issued %d, want 3: the ticket transferred to B counts where it was issued", a.Issued)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestEndToEndLateInABusyDay: a console started when the day has 2,000
// events gets the site's figures and its last events from one SNAPSHOT,
// without a replay and without being dropped, then follows the tail.
func TestEndToEndLateInABusyDay(t *testing.T) {
	const n = 2000
	d := startDaemon(t)
	ctx := context.Background()
	for i := 0; i < n; i += 32 {
		var wg sync.WaitGroup
		for w := i; w < min(i+32, n); w++ {
			wg.Go(func() {
				sv := []string{"A", "B"}[w%2]
				if _, err := d.Engine.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: "hq", Device: "kiosk-1", Key: "k" + strconv.Itoa(w)},
					Service: sv, Class: queue.ClassNormal}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	start := time.Now()
	lc := startConsole(t, d)
	lc.waitFor(t, "the day's figures", func(v string) bool {
		s := lc.m.site()
		return s.haveSnap && s.figures(s.service("A")).Issued == n/2 && s.figures(s.service("B")).Issued == n/2
	})
	t.Logf("console showed %d events' figures and its last events after %v", n, time.Since(start))
	s := lc.m.site()
	if len(s.events) == 0 || s.events[len(s.events)-1].Version != n {
		t.Fatalf("event stream: %d events, last %+v; want the day's last, version %d", len(s.events), s.events[len(s.events)-1:], n)
	}
	if !strings.Contains(lc.m.View(), s.events[len(s.events)-1].Number) {
		t.Errorf("the last event's ticket is not on the screen:\n%s", lc.m.View())
	}
	kiosk := d.dial(t, "kiosk-1", wire.RoleKiosk)
	tk := take(t, kiosk, "A", "after the console joined")
	lc.waitFor(t, "the tail", func(v string) bool { return strings.Contains(v, tk.Number+" in A") })
	if got := d.Server.Stats().SlowConsumers; got != 0 {
		t.Errorf("%d slow consumers, want none", got)
	}
	if st := lc.m.site().state; st != LinkConnected {
		t.Errorf("console link %v, want connected throughout", st)
	}
}
