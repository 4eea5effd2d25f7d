package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices/led/ledtest"
	"github.com/nowserving/nowserving/internal/testkit/cdptest"
	"github.com/nowserving/nowserving/internal/testkit/golden"
	"github.com/nowserving/nowserving/internal/testkit/need"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/load"
	"github.com/nowserving/nowserving/sim"
)

// hallDevicesYAML is what the busy day adds to testdata/busyday.yaml: the
// LED boards of the ten counters on one serial line and a hall board on
// another (both pseudo-terminals: %[1]s and %[2]s), and one voice zone
// writing its announcements into the folder %[3]s.
const hallDevicesYAML = `
led:
  ports:
    - name: %[1]q
      driver: { kind: template, header: "01", addr_format: byte, template: "{number} {counter}", trailer: "07" }
    - name: %[2]q
      driver: { kind: template, header: "02", addr_format: byte, template: "{lines}", line_sep: "|", trailer: "03" }
  boards:
%[4]s    - { port: %[2]q, addr: 1, site: hospital, hall: true, lines: 4 }

voice:
  zones:
    - { name: hall, site: hospital, engine: pack, output: "dir:%[3]s", langs: [zh, en], chime: false, repeat: 1 }
`

// testDayTickets is the busy day's size in make test: a busy hall's
// morning at ten counters, about 8,000 events (some four a ticket), over
// twice what a session's send queue holds (512 KiB, some 3,500 EVENT
// frames; 6,500 with the socket buffers), played as fast as the daemon
// goes for a minute or more, six times the 10 s a frame may wait in that
// queue (SendLag): a console, display or board that stopped, or read at
// less than about four fifths of the daemon's pace, would be dropped
// before the end. (4,000 tickets caught a reader at nine tenths of the
// pace, in twice the time; make test paid two minutes of a loaded
// machine for it.) make soak plays the full day of 20,000
// (SOAK_TICKETS), where a slower leak, or a reader that falls behind by
// a little per event, shows too.
const testDayTickets = 2000

// hallDayTickets is the busy day's size: testDayTickets, or
// $NOWSERVING_HALL_DAY_TICKETS (at least 100), as make soak sets it.
func hallDayTickets(t *testing.T) int {
	n := testDayTickets
	if s := os.Getenv("NOWSERVING_HALL_DAY_TICKETS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 100 {
			t.Fatalf("NOWSERVING_HALL_DAY_TICKETS=%q: want a count of at least 100", s)
		}
	}
	return n
}

// TestBenchDay plays a busy day on the demo hospital with 10 counters
// (testdata/busyday.yaml), with everything people look at attached the
// whole day: 2,000 tickets (hallDayTickets; 20,000 in make soak) issued,
// called, served, transferred and marked no-show by `bench day`'s kiosks
// and keypads, as fast as the daemon goes.
// Attached are the supervisor console in tmux (from the start) and a
// counter-mode console in a second tmux pane (from the halfway
// checkpoint), the hall display in headless Chromium at 1920×1080 and
// 1080×1920, three ticket status pages, the LED boards of the ten counters
// and a hall board on pseudo-terminals, and a voice zone writing WAV files.
// At three checkpoints the day pauses (kiosks and counters wait; nothing
// is timed) and at the end:
//   - both consoles of the bench and both tmux consoles are connected, not
//     STALE, and show the daemon's figures;
//   - the display shows every service with people waiting (on every page
//     of its cycle) with the daemon's counts, and the log's last call;
//   - each LED board shows its counter's ticket, and its frames followed
//     the counter's calls in the log's order; the hall board the last call;
//   - the voice announcements followed the calls in order, the queue
//     stayed bounded, and every call was announced or counted as dropped;
//   - the ticket pages show their ticket's status from the log;
//   - no session was closed as a slow consumer, and the daemon's
//     goroutines stay bounded.
//
// Screenshots of the display at each checkpoint, and the consoles'
// screens as text, go to $NOWSERVING_ARTIFACTS.
func TestBenchDay(t *testing.T) {
	tmux := need.Program(t, "tmux", "tmux")
	tickets := hallDayTickets(t)
	h := newHallDay(t, tmux)
	h.openPages()
	var out bytes.Buffer
	logw := &lineLogger{t: t}
	e, err := sim.New(sim.Opts{Addr: h.d.protocol, Config: h.file, Timeout: 10 * time.Second, Retries: 3})
	if err != nil {
		t.Fatal(err)
	}
	o := load.DefaultDayOpts()
	o.Tickets, o.Kiosks, o.Transfer, o.NoShow = tickets, 8, 0.1, 0.1
	o.Every = 5 * time.Second
	o.Metrics, o.Hall = h.metrics, "http://"+h.d.http
	o.Checkpoints = load.EvenCheckpoints(tickets, 3)
	o.AtCheckpoint = h.checkpoint
	start := time.Now()
	_, err = load.Day(context.Background(), e, o, io.MultiWriter(&out, logw))
	t.Logf("bench day: %s", time.Since(start).Round(time.Second))
	if err != nil {
		t.Fatalf("bench day: %v", err)
	}
	checkDayOutput(t, out.String(), tickets)
}

// checkDayOutput checks the summary `bench day` wrote.
func checkDayOutput(t *testing.T, out string, tickets int) {
	for _, re := range []string{
		fmt.Sprintf(`^day: %d tickets over services A,E,R, 8 kiosks, 10 counters \(1,2,3,4,5,6,7,8,9,10\), consoles console-1 from the start and halfway\n`, tickets),
		fmt.Sprintf(`\ndone: .* issued %d  called [0-9]+  served [1-9][0-9]*  no-show [1-9][0-9]*  transferred [1-9][0-9]*  errors 0  waiting at the end 0\n`, tickets),
		`\ncheckpoint [0-9]+ issued: version [0-9]+, [0-9]+ waiting, 1 consoles; consoles and display equal the daemon\n`,
		`\ncheckpoint [0-9]+ issued: version [0-9]+, [0-9]+ waiting, 2 consoles; consoles and display equal the daemon\n`,
		`\ndaemon: 0 sessions closed as slow consumers during the day; at most [0-9]+ goroutines and [0-9]+ MiB RSS \(/metrics\)\n`,
		`\ndisplay: read [1-9][0-9]* states, lost the connection 0 times; its waiting counts and last call equal the daemon's\n`,
		`\nconsole 1: joined at 0s, .* lost the connection 0 times; figures equal the daemon's\n`,
		`\nconsole 2: joined at [0-9.ms]+, figures and 50 last events in [0-9.ms]+, .* lost the connection 0 times; figures equal the daemon's\n`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks %s", re)
		}
	}
	// The daemon's goroutines stay far below one per event (a day makes
	// about four a ticket: 8,000 in make test, 80,000 in make soak), and
	// so does its memory: a day's events are in the database, not in the
	// daemon.
	if m := regexp.MustCompile(`at most ([0-9]+) goroutines and ([0-9]+) MiB RSS`).FindStringSubmatch(out); m != nil {
		if n, _ := strconv.Atoi(m[1]); n > 1500 {
			t.Errorf("%d goroutines during the day: they grow with the events", n)
		}
		if mib, _ := strconv.Atoi(m[2]); mib > 1024 {
			t.Errorf("%d MiB RSS during the day", mib)
		}
	}
}

// hallDay is the busy day's hall: the daemon and what is attached to it.
type hallDay struct {
	t       *testing.T
	dir     string
	file    string // the configuration
	bin     string // nowserving, for the daemon and the consoles in tmux (dayBinary)
	d       *dayDaemon
	metrics string
	tm      func(args ...string) string
	b       *cdptest.Browser
	art     string
	pages   []hallPage
	tickets []hallPage // ticket status pages: name is the number
	boards  *ledLine   // the counters' boards, address = counter
	hallLED *ledLine
	voice   *voiceDir
	counter bool // the counter-mode console is running
	n       int  // checkpoints so far
}

type hallPage struct{ name, session string }

func newHallDay(t *testing.T, tmux string) *hallDay {
	h := &hallDay{t: t, dir: t.TempDir(), art: cdptest.Artifacts(t)}
	busy := golden.Read(t, "../../testdata/busyday.yaml")
	m1, s1 := ledtest.OpenPTY(t)
	m2, s2 := ledtest.OpenPTY(t)
	t.Cleanup(func() { m1.Close(); m2.Close(); s1.Close(); s2.Close() })
	var boards strings.Builder
	for c := 1; c <= 10; c++ {
		fmt.Fprintf(&boards, "    - { port: %q, addr: %d, site: hospital, counter: \"%d\" }\n", s1.Name(), c, c)
	}
	voiceDir := memDir(t, h.dir, "voice")
	y := strings.NewReplacer(`dsn: "nowserving-busyday.db"`, fmt.Sprintf("dsn: %q", filepath.Join(h.dir, "q.db")),
		`protocol: "127.0.0.1:7410"`, `protocol: "127.0.0.1:0"`, `http: "127.0.0.1:7490"`, `http: "127.0.0.1:0"`,
		"level: info", "level: warn").Replace(string(busy))
	y += fmt.Sprintf(hallDevicesYAML, s1.Name(), s2.Name(), voiceDir, boards.String())
	h.file = filepath.Join(h.dir, "hall.yaml")
	if err := os.WriteFile(h.file, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
	h.boards, h.hallLED = readLED(t, m1, 0x01, 0x07), readLED(t, m2, 0x02, 0x03)
	loadTestConfig(t, h.file, nil) // a config the daemon refuses fails here, plainly
	h.bin = dayBinary(t, h.dir)
	h.d = startDayDaemon(t, h.bin, h.file, filepath.Join(h.art, "hall-day-daemon.log"))
	h.metrics = "http://" + h.d.http + "/metrics"
	h.voice = watchVoice(t, voiceDir, h.metrics)
	h.startTmux(tmux)
	h.b = cdptest.Start(t)
	return h
}

// memDir is a new folder for the voice zone's files: in memory
// (/dev/shm) where there is one. A day writes about 340 KB of WAV per
// call, 7 GB for 20,000 tickets; on disk that is a stream of writes that
// every fsync of the daemon's database then waits behind.
func memDir(t *testing.T, dir, name string) string {
	if d, err := os.MkdirTemp("/dev/shm", "nowserving-"+name+"-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	d := filepath.Join(dir, name)
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// startTmux starts the tmux server and the supervisor console in it.
func (h *hallDay) startTmux(tmux string) {
	h.tm = tmuxIn(h.t, tmux, h.dir)
	h.tm("new-session", "-d", "-s", "supervisor", "-x", "120", "-y", "40", "env TERM=xterm-256color "+h.console("--lang", "en")+"; sleep 600")
}

// console is the command line of a console attached to the daemon.
func (h *hallDay) console(args ...string) string {
	return strings.Join(append([]string{h.bin, "console", "--config", h.file, "--addr", h.d.protocol}, args...), " ")
}

// openPages takes the first ticket of each service and opens its status
// page, and the hall display at both sizes.
func (h *hallDay) openPages() {
	t, base := h.t, "http://"+h.d.http
	for _, svc := range []string{"A", "R", "E"} {
		out, err := runCmd(t, "sim", "kiosk", "--config", h.file, "--addr", h.d.protocol, "--service", svc)
		num := svc + "00001"
		if err != nil || !strings.Contains(out, "ticket "+num) {
			t.Fatalf("kiosk: %v\n%s", err, out)
		}
		s := h.b.OpenAt(t, base+"/t/hospital/"+num, 390, 844)
		h.b.WaitFor(t, s, "document.body.dataset.status", "WAITING", 60*time.Second)
		h.tickets = append(h.tickets, hallPage{num, s})
	}
	for _, sz := range [][2]int{{1920, 1080}, {1080, 1920}} {
		s := h.b.OpenAt(t, base+"/display/hospital?rotate=0", sz[0], sz[1])
		h.b.WaitFor(t, s, "document.body.dataset.ready", "1", 60*time.Second)
		if err := h.b.Still(s); err != nil { // the day checks what it shows, not how it flashes
			t.Fatal(err)
		}
		h.pages = append(h.pages, hallPage{fmt.Sprintf("%dx%d", sz[0], sz[1]), s})
	}
}

// checkpoint is DayOpts.AtCheckpoint: the day is paused (or over), the
// bench's consoles and its display stream are compared already; compare
// all that is attached and keep the screens.
func (h *hallDay) checkpoint(ctx context.Context, cp *load.Checkpoint) error {
	h.n++
	name := fmt.Sprintf("hall-day-%d", h.n)
	if cp.End {
		name = "hall-day-end"
	}
	h.t.Logf("%s: %d issued, version %d", name, cp.Issued, cp.Version)
	var bad []string
	if ok, why := cp.OK(); !ok {
		bad = append(bad, why)
	}
	for _, check := range []func(*load.Checkpoint, string) string{h.checkDisplays, h.checkTickets, h.checkConsoles, h.checkLED, h.checkVoice} {
		if why := check(cp, name); why != "" {
			bad = append(bad, why)
		}
	}
	if !h.counter && cp.Issued >= int64(hallDayTickets(h.t)/2) {
		// A counter's console started mid-day, in the site's first language.
		h.tm("new-session", "-d", "-s", "counter", "-x", "80", "-y", "24", "env TERM=xterm-256color "+h.console("--counter", "5")+"; sleep 600")
		h.counter = true
		if why := h.checkCounterConsole(cp, name); why != "" {
			bad = append(bad, why)
		}
	}
	if len(bad) > 0 {
		h.t.Errorf("%s (%d issued): %s", name, cp.Issued, strings.Join(bad, "\n"))
		return errors.New(name + ": the hall differs from the daemon")
	}
	return nil
}

// within polls check (it returns "" when satisfied, else why not) until it
// holds or a minute passes, and returns its last answer: the hall catches
// up with a paused day at its own pace, the test does not time it.
func within(check func() string) string {
	var why string
	poll.Within(time.Minute, 100*time.Millisecond, func() bool { why = check(); return why == "" })
	return why
}

// lineLogger logs each line written to it, as it comes.
type lineLogger struct {
	t   *testing.T
	buf []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.t.Log(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
}
