package devices_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices"
	"github.com/nowserving/nowserving/devices/led"
	"github.com/nowserving/nowserving/devices/led/ledtest"
	"github.com/nowserving/nowserving/devices/voice"
	"github.com/nowserving/nowserving/internal/testkit/logtest"
	"github.com/nowserving/nowserving/internal/testkit/parttest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/internal/testkit/record"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// newAnnouncer announces in English then Chinese into dir.
func newAnnouncer(t *testing.T, sink voice.Sink) *voice.Announcer {
	t.Helper()
	o := voice.DefaultOpts()
	o.Sink, o.Langs = sink, []string{"en", "zh"}
	a, err := voice.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// readGolden reads a led golden frame file (hex, one frame a line).
func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("led", "testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	frame, err := led.ParseHex(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

// TestKeypadCallOnPTY is the end-to-end path of issue 4: a key press on a
// wired keypad (pty) calls the next ticket, the counter board (another pty)
// receives the driver's golden frame for "A023 at counter 5", the keypad
// shows "023" and the hall zone writes a WAV announcement.
func TestKeypadCallOnPTY(t *testing.T) {
	eng, clk := newEngine(t)
	tickets := issue(t, eng, "A", 23)
	for _, tk := range tickets[:22] {
		if _, err := eng.Cancel(context.Background(), queue.NumberRequest{Request: queue.Request{Site: "hospital", Device: "console"}, Number: tk.Number}); err != nil {
			t.Fatal(err)
		}
	}

	board := ledtest.NewLine(t)
	port := newPort(t, board.Name(), counterDriver(t), nil)

	keys := ledtest.NewLine(t)
	pads := ledtest.NewKeypads(7)
	keys.Serve(t.Context(), pads.Serve)
	ko := led.KeypadOpts{Addrs: []int{7}, PollInterval: 5 * time.Millisecond}
	ko.PortOpts = led.DefaultPortOpts()
	ko.Name = keys.Name()
	bus, err := led.NewKeypadBus(ko)
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	sink, err := voice.NewDirSink(dir, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	ann := newAnnouncer(t, sink)

	d := newDispatcher(t, eng, devices.Opts{
		Ports:   []*led.Port{port},
		Boards:  []devices.Board{{Port: port, Addr: 3, Site: "hospital", Counter: "5"}},
		Zones:   []devices.Zone{{Name: "hall", Site: "hospital", Announcer: ann}},
		Keypads: []devices.Keypad{{Bus: bus, Site: "hospital", Counters: map[int]string{7: "5"}, Name: "keys"}},
	})
	run(t, d)

	// The idle counter shows "---" once the dispatcher has restored it.
	pads.WaitDisplay(t, 7, "---")
	pads.Press(7, led.KeyCallNext)
	board.WaitBytes(t, readGolden(t, "template_01_07.hex"))
	pads.WaitDisplay(t, 7, "023")
	if got := ticketStatus(t, eng, "A023"); got.Status != queue.StatusCalled || got.Counter != "5" {
		t.Fatalf("A023 is %s at counter %q, want CALLED at 5", got.Status, got.Counter)
	}

	var wav string
	poll.Until(t, "a WAV announcement", func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "[0-9]*.wav"))
		if len(m) > 0 {
			wav = m[0]
		}
		return wav != ""
	})
	if !strings.Contains(filepath.Base(wav), "A023-5") {
		t.Errorf("announcement file %s does not name A023-5", wav)
	}
	b, err := os.ReadFile(wav)
	if err != nil {
		t.Fatal(err)
	}
	clip, err := voice.DecodeWAV(b)
	if err != nil {
		t.Fatalf("announcement is not a valid WAV: %v", err)
	}
	if d := clip.Duration(); d < 500*time.Millisecond || d > 30*time.Second {
		t.Errorf("announcement lasts %s, want 0.5 s .. 30 s", d)
	}
	var peak int16
	for _, s := range clip.Samples {
		peak = max(peak, s, -s)
	}
	if peak < 1000 {
		t.Errorf("announcement is silent: peak %d", peak)
	}
}

// TestKeypadKeys checks each key of a wired keypad against the engine and
// what the keypad's display answers.
func TestKeypadKeys(t *testing.T) {
	tests := []struct {
		name    string
		keys    []led.Key
		status  queue.Status // of A001 after the keys
		display string
	}{
		{"call", []led.Key{led.KeyCallNext}, queue.StatusCalled, "001"},
		{"call start", []led.Key{led.KeyCallNext, led.KeyStart}, queue.StatusServing, "001"},
		{"call no-show", []led.Key{led.KeyCallNext, led.KeyNoShow}, queue.StatusNoShow, "---"},
		{"call redirect", []led.Key{led.KeyCallNext, led.KeyRedirect}, queue.StatusWaiting, "---"},
		{"start while idle", []led.Key{led.KeyStart}, queue.StatusWaiting, "---"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng, _ := newEngine(t)
			issue(t, eng, "A", 2)
			rec := ledtest.New()
			pads := ledtest.NewKeypads(2)
			rec.Reply(pads.Answer)
			ko := led.KeypadOpts{Addrs: []int{2}, PollInterval: time.Millisecond}
			ko.PortOpts = led.DefaultPortOpts()
			ko.Name, ko.Dial = "keys", rec.Dial
			bus, err := led.NewKeypadBus(ko)
			if err != nil {
				t.Fatal(err)
			}
			d := newDispatcher(t, eng, devices.Opts{Keypads: []devices.Keypad{{Bus: bus, Site: "hospital", Counters: map[int]string{2: "1"}, Name: "keys"}}})
			run(t, d)
			pads.WaitDisplay(t, 2, "---")
			want := []queue.Status{queue.StatusCalled, queue.StatusServing}
			for i, k := range tt.keys {
				pads.Press(2, k)
				if i < len(tt.keys)-1 {
					poll.Until(t, "A001 "+string(want[i]), func() bool { return ticketStatus(t, eng, "A001").Status == want[i] })
				}
			}
			poll.Until(t, "A001 "+string(tt.status), func() bool {
				tk := ticketStatus(t, eng, "A001")
				return tk.Status == tt.status && (tt.status != queue.StatusWaiting || len(tt.keys) == 1 || tk.CallCount == 1)
			})
			pads.WaitDisplay(t, 2, tt.display)
			if tt.name == "call redirect" {
				// Back at the head of its queue: called again next.
				if tk := callNext(t, eng, "5"); tk.Number != "A001" {
					t.Errorf("after a redirect counter 5 called %s, want A001", tk.Number)
				}
			}
		})
	}
}

// stuckLink is a line whose writes never return until it is closed: a
// jammed serial port.
type stuckLink struct {
	once   sync.Once
	closed chan struct{}
}

func (l *stuckLink) Write(p []byte) (int, error) {
	<-l.closed
	return 0, errors.New("stuck line closed")
}

func (l *stuckLink) ReadTimeout(p []byte, d time.Duration) (int, error) { return 0, nil }

func (l *stuckLink) Close() error { l.once.Do(func() { close(l.closed) }); return nil }

// TestStuckBoardDoesNotDelayCalls: a jammed board neither stops counters
// from calling nor the other boards from showing the calls.
func TestStuckBoardDoesNotDelayCalls(t *testing.T) {
	eng, _ := newEngine(t)
	issue(t, eng, "A", 12)
	stuck := newPort(t, "stuck", counterDriver(t), func(led.PortOpts) (led.Link, error) {
		return &stuckLink{closed: make(chan struct{})}, nil
	})
	rec := ledtest.New()
	hall := newPort(t, "hall", textDriver(t, "{lines}"), rec.Dial)
	d := newDispatcher(t, eng, devices.Opts{
		Ports: []*led.Port{stuck, hall},
		Boards: []devices.Board{
			{Port: stuck, Addr: 1, Site: "hospital", Counter: "5"},
			{Port: hall, Addr: 9, Site: "hospital", HallLines: 2},
		},
	})
	run(t, d)
	for i := range 12 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := eng.CallNext(ctx, queue.CounterRequest{Request: queue.Request{Site: "hospital", Device: "keypad-5"}, Counter: "5"})
		cancel()
		if err != nil {
			t.Fatalf("call %d with a stuck board: %v", i+1, err)
		}
		if i < 11 {
			r := queue.CounterRequest{Request: queue.Request{Site: "hospital", Device: "keypad-5"}, Counter: "5"}
			if _, err := eng.Start(context.Background(), r); err != nil {
				t.Fatal(err)
			}
			if _, err := eng.Complete(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := rec.WaitFor(ctx, func(f []byte) bool { return string(f) == "\x09A012 -> 5|A011 -> 5\n" }); err != nil {
		t.Fatalf("hall board never showed the last calls: %v; frames %q", err, rec.Frames())
	}
	if st := d.Status(); st.Boards[0].Online {
		t.Errorf("stuck board reported online: %+v", st.Boards[0])
	}
}

// TestRestoreAfterRestart: boards show the current state from a snapshot
// when the dispatcher starts, and again after a restart with new boards.
func TestRestoreAfterRestart(t *testing.T) {
	eng, clk := newEngine(t)
	issue(t, eng, "A", 3)
	callNext(t, eng, "1") // A001
	clk.Add(time.Minute)
	callNext(t, eng, "5") // A002
	clk.Add(time.Minute)
	r1 := queue.CounterRequest{Request: queue.Request{Site: "hospital", Device: "keypad-1"}, Counter: "1"}
	if _, err := eng.Start(context.Background(), r1); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Complete(context.Background(), queue.CounterRequest{Request: queue.Request{Site: "hospital", Device: "keypad-1"}, Counter: "1"}); err != nil {
		t.Fatal(err)
	}
	callNext(t, eng, "1") // A003

	for round := range 2 {
		rec := ledtest.New()
		counters := newPort(t, "counters", textDriver(t, "{number}@{counter}"), rec.Dial)
		hall := newPort(t, "hall", textDriver(t, "{lines}"), rec.Dial)
		d := newDispatcher(t, eng, devices.Opts{
			Ports: []*led.Port{counters, hall},
			Boards: []devices.Board{
				{Port: counters, Addr: 1, Site: "hospital", Counter: "1"},
				{Port: counters, Addr: 5, Site: "hospital", Counter: "5"},
				{Port: hall, Addr: 9, Site: "hospital", HallLines: 4},
			},
		})
		errc := make(chan error, 1)
		go func() { errc <- d.Run(context.Background()) }()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		for _, want := range []string{"\x01A003@1\n", "\x05A002@5\n", "\x09A003 -> 1|A002 -> 5\n"} {
			if _, err := rec.WaitFor(ctx, func(f []byte) bool { return string(f) == want }); err != nil {
				t.Fatalf("round %d: board never showed %q: %v; frames %q", round, want, err, rec.Frames())
			}
		}
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := d.Shutdown(sctx); err != nil {
			t.Fatalf("shutdown: %v", err)
		}
		scancel()
		if err := <-errc; err != nil {
			t.Fatalf("run: %v", err)
		}
		// Shutdown blanks the boards.
		last := map[byte]string{}
		for _, f := range rec.Frames() {
			last[f[0]] = string(f)
		}
		if want := map[byte]string{1: "\x01@\n", 5: "\x05@\n", 9: "\x09\n"}; !maps.Equal(last, want) {
			t.Errorf("round %d: last frames %q, want blank boards %q", round, last, want)
		}
	}
}

// recordSink keeps the names of the announcements played.
type recordSink struct{ names record.List[string] }

func (s *recordSink) Play(_ context.Context, _ []byte, name string) error {
	s.names.Add(name)
	return nil
}

func (s *recordSink) played() []string { return s.names.All() }

// TestEventsOnBoardsAndVoice follows a ticket through call, recall and
// done: the counter board shows it then the idle text, the hall keeps it,
// and the recall is announced again.
func TestEventsOnBoardsAndVoice(t *testing.T) {
	eng, _ := newEngine(t)
	issue(t, eng, "A", 1)
	rec := ledtest.New()
	p := newPort(t, "line", textDriver(t, "{number}{text}"), rec.Dial)
	sink := &recordSink{}
	ann := newAnnouncer(t, sink)
	d := newDispatcher(t, eng, devices.Opts{
		Ports:  []*led.Port{p},
		Boards: []devices.Board{{Port: p, Addr: 1, Site: "hospital", Counter: "1", Idle: "WELCOME"}},
		Zones:  []devices.Zone{{Name: "hall", Site: "hospital", Announcer: ann}},
	})
	run(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	wait := func(want string) {
		t.Helper()
		if _, err := rec.WaitFor(ctx, func(f []byte) bool { return string(f) == want }); err != nil {
			t.Fatalf("board never showed %q: %v; frames %q", want, err, rec.Frames())
		}
		rec.Reset()
	}
	wait("\x01WELCOME\n")
	r := queue.CounterRequest{Request: queue.Request{Site: "hospital", Device: "keypad-1"}, Counter: "1"}
	callNext(t, eng, "1")
	wait("\x01A001\n")
	if _, err := eng.Recall(ctx, r); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "two announcements", func() bool { return len(sink.played()) == 2 })
	if _, err := eng.Start(ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Complete(ctx, r); err != nil {
		t.Fatal(err)
	}
	wait("\x01WELCOME\n")
	if got := sink.played(); len(got) != 2 || got[0] != "A001-1" || got[1] != "A001-1" {
		t.Errorf("announcements %q, want a call and a recall of A001-1", got)
	}
	st := d.Status()
	if len(st.Zones) != 1 || st.Zones[0].Stats.Played != 2 {
		t.Errorf("zone status %+v, want 2 played", st.Zones)
	}
}

// TestBurstAndGaps: with a tiny feed ring and replay limit, a burst of
// calls from two counters may leave the dispatcher behind (it then takes a
// snapshot); either way the boards end on the last call of each counter.
func TestBurstAndGaps(t *testing.T) {
	st := storetest.SQLite(t)
	eng := storetest.StartEngine(t, queue.Opts{Store: st, Sites: []queue.Site{testSite()}, Committers: 1, FeedSize: 2, MaxReplay: 2,
		Clock: func() time.Time { return time.Date(2026, 11, 30, 1, 30, 0, 0, time.UTC) }})
	rec := ledtest.New()
	p := newPort(t, "line", textDriver(t, "{number}{text}"), rec.Dial)
	var logs logtest.Buffer
	d := newDispatcher(t, eng, devices.Opts{
		Logger: logs.Logger(),
		Ports:  []*led.Port{p},
		Boards: []devices.Board{
			{Port: p, Addr: 1, Site: "hospital", Counter: "1", Idle: "-"},
			{Port: p, Addr: 5, Site: "hospital", Counter: "5", Idle: "-"},
		},
	})
	run(t, d)
	// Tickets taken together are committed in one transaction: their
	// events arrive at once, more than the feed keeps.
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			if _, err := eng.Issue(context.Background(), queue.IssueRequest{Request: queue.Request{Site: "hospital", Device: "kiosk-1"}, Service: "A"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	last := map[string]string{}
	var mu sync.Mutex
	for _, c := range []string{"1", "5"} {
		wg.Go(func() {
			r := queue.CounterRequest{Request: queue.Request{Site: "hospital", Device: "keypad-" + c}, Counter: c}
			// 2 x (19 + 1) calls take exactly the 40 tickets.
			for range 19 {
				tk, err := eng.CallNext(context.Background(), r)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				last[c] = tk.Number
				mu.Unlock()
				if _, err := eng.NoShow(context.Background(), r); err != nil {
					t.Error(err)
					return
				}
			}
			tk, err := eng.CallNext(context.Background(), r)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			last[c] = tk.Number
			mu.Unlock()
		})
	}
	wg.Wait()
	for addr, c := range map[byte]string{1: "1", 5: "5"} {
		want := string([]byte{addr}) + last[c] + "\n"
		// The latest frame for the address must be want: wait until it is.
		poll.Until(t, fmt.Sprintf("board %d to end on %q", addr, want), func() bool {
			var got []byte
			for _, f := range rec.Frames() {
				if len(f) > 0 && f[0] == addr {
					got = f
				}
			}
			return string(got) == want
		})
	}
	t.Logf("snapshots taken after falling behind: %d", strings.Count(logs.String(), "behind the feed"))
}

// TestRunTwice: Run may be called once; Shutdown before Run is harmless.
func TestRunTwice(t *testing.T) {
	eng, _ := newEngine(t)
	d := newDispatcher(t, eng, devices.Opts{})
	errc := make(chan error, 2)
	for range 2 {
		go func() { errc <- d.Run(context.Background()) }()
	}
	// The second Run returns at once; the first runs until Shutdown.
	if err := <-errc; !errors.Is(err, devices.ErrStarted) {
		t.Errorf("second Run: %v, want ErrStarted", err)
	}
	parttest.Stop(t, d, errc) // the first Run

	idle := newDispatcher(t, eng, devices.Opts{})
	if err := idle.Shutdown(context.Background()); err != nil {
		t.Errorf("shutdown before run: %v", err)
	}
	if err := idle.Run(context.Background()); err != nil {
		t.Errorf("run after shutdown: %v", err)
	}
}

// TestNewRefusesBadWiring: New names what is wrong with its options.
func TestNewRefusesBadWiring(t *testing.T) {
	eng, _ := newEngine(t)
	rec := ledtest.New()
	p := newPort(t, "line", counterDriver(t), rec.Dial)
	tests := []struct {
		name string
		o    devices.Opts
		want error
	}{
		{"unknown counter", devices.Opts{Engine: eng, Ports: []*led.Port{p}, Boards: []devices.Board{{Port: p, Site: "hospital", Counter: "9"}}}, queue.ErrUnknownCounter},
		{"unknown site", devices.Opts{Engine: eng, Ports: []*led.Port{p}, Boards: []devices.Board{{Port: p, Site: "bank", Counter: "1"}}}, queue.ErrUnknownSite},
		{"kiosk without printer", devices.Opts{Engine: eng, Kiosks: map[string]string{"kiosk-1": "nope"}}, devices.ErrNoPrinter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := devices.New(tt.o); !errors.Is(err, tt.want) {
				t.Errorf("New: %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := devices.New(devices.Opts{Engine: eng, Boards: []devices.Board{{Port: p, Site: "hospital", Counter: "1"}}}); err == nil {
		t.Error("New accepted a board whose port is not in Ports")
	}
}

// TestCancelStops: the end of Run's context is a shutdown: the queued
// announcements are played (within DrainTimeout) and the boards blanked.
func TestCancelStops(t *testing.T) {
	eng, _ := newEngine(t)
	issue(t, eng, "A", 3)
	rec := ledtest.New()
	p := newPort(t, "line", textDriver(t, "{number}"), rec.Dial)
	sink := &slowSink{release: make(chan struct{})}
	ann := newAnnouncer(t, sink)
	d := newDispatcher(t, eng, devices.Opts{
		Ports:  []*led.Port{p},
		Boards: []devices.Board{{Port: p, Addr: 1, Site: "hospital", Counter: "1"}},
		Zones:  []devices.Zone{{Name: "hall", Site: "hospital", Announcer: ann}},
	})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- d.Run(ctx) }()
	// The board shows the site's state once the dispatcher has read it: a
	// call made before that is in its snapshot, not announced.
	poll.Until(t, "the board to show the site", func() bool { return d.Status().Boards[0].Online && len(rec.Frames()) > 0 })
	callNext(t, eng, "1")
	poll.Until(t, "the first announcement to start", func() bool { return sink.count() == 1 })
	r := queue.CounterRequest{Request: queue.Request{Site: "hospital", Device: "keypad-1"}, Counter: "1"}
	if _, err := eng.Recall(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the recall to be queued", func() bool { return d.Status().Zones[0].Stats.Pending == 1 })
	cancel()
	close(sink.release)
	if err, _ := poll.Recv(t, errc, "Run to return after its context ended"); err != nil {
		t.Fatalf("run: %v", err)
	}
	if n := sink.count(); n != 2 {
		t.Errorf("%d announcements played, want the call and the queued recall", n)
	}
	frames := rec.Frames()
	if last := string(frames[len(frames)-1]); last != "\x01\n" {
		t.Errorf("last frame %q, want the board blanked", last)
	}
}

// slowSink holds every announcement until release is closed.
type slowSink struct {
	release chan struct{}
	mu      sync.Mutex
	n       int
}

func (s *slowSink) Play(ctx context.Context, _ []byte, _ string) error {
	s.mu.Lock()
	s.n++
	s.mu.Unlock()
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *slowSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}
