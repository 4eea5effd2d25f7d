package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/load"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/view"
)

// hallShown is what a display page shows: its version, connection, the
// waiting page on screen (of n), the big call and the waiting rows.
type hallShown struct {
	V, P, N int
	C, Cur  string
	Rows    [][2]string // code, count
	Calls   []string
	Cut     []string // names cut short: wider than their box, not scrolling
}

const hallShownJS = `(function () {
  var d = document.body.dataset;
  return JSON.stringify({V: +d.version || 0, C: d.connected || "", P: +d.waitingPage || 0, N: +d.waitingPages || 1,
    Cur: document.getElementById('current-number').textContent.trim(),
    Rows: Array.from(document.querySelectorAll('#waiting li')).map(function (li) {
      var c = li.querySelector('.count'); return [li.dataset.code || "", c ? c.textContent.trim() : ""] }),
    Calls: Array.from(document.querySelectorAll('#calls .number')).map(function (e) { return e.textContent.trim() }),
    Cut: Array.from(document.querySelectorAll('.calls .counter, .waiting .name, #current-counter')).filter(function (e) {
      return e.scrollWidth > e.clientWidth + 1 && !e.classList.contains('scroll') }).map(function (e) { return e.textContent })});
})()`

// lastCall is the number called last: the big one while its counter
// still waits for it, else the first of the list.
func (s *hallShown) lastCall() string {
	if s.Cur != "" && s.Cur != "\u2014" {
		return s.Cur
	}
	if len(s.Calls) > 0 {
		return s.Calls[0]
	}
	return ""
}

func (h *hallDay) shown(session string) (hallShown, error) {
	var s hallShown
	v, err := h.b.Eval(session, hallShownJS)
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal([]byte(v), &s)
}

// lastNumber is the number of the log's last call, "" before any.
func lastNumber(cp *load.Checkpoint) string {
	if len(cp.Calls) == 0 {
		return ""
	}
	return strings.Fields(cp.Calls[len(cp.Calls)-1])[0]
}

// checkDisplays: each display page reaches the checkpoint's version,
// connected, with the log's last call; then every page of its waiting
// cycle is read: every service with people waiting is on one, with the
// daemon's count.
func (h *hallDay) checkDisplays(cp *load.Checkpoint, name string) string {
	var bad []string
	last := lastNumber(cp)
	for _, p := range h.pages {
		why := within(func() string {
			s, err := h.shown(p.session)
			switch {
			case err != nil:
				return err.Error()
			case s.V < int(cp.Version):
				return fmt.Sprintf("at version %d, want %d", s.V, cp.Version)
			case s.C != "1":
				return "not connected"
			case last != "" && s.lastCall() != last:
				return fmt.Sprintf("last call %q, the log's is %s", s.lastCall(), last)
			case len(s.Cut) > 0:
				return fmt.Sprintf("names cut short: %q", s.Cut)
			}
			return ""
		})
		h.b.Shot(h.t, p.session, h.art, name+"-display-"+p.name+".png")
		if why == "" {
			why = h.waitingShown(p, cp.Site)
		}
		if why != "" {
			bad = append(bad, "display "+p.name+": "+why)
		}
	}
	return strings.Join(bad, "; ")
}

// waitingShown reads every page of a display's waiting cycle (turning it
// with the arrow key, as a test may) and compares the rows with site.
func (h *hallDay) waitingShown(p hallPage, site *view.Site) string {
	got := map[string]string{}
	seen := map[int]bool{}
	var failed string // an error reading or turning the page
	n := 0            // pages in the cycle
	all := poll.Within(time.Minute, 50*time.Millisecond, func() bool {
		s, err := h.shown(p.session)
		if err != nil {
			failed = err.Error()
			return true
		}
		if n = s.N; !seen[s.P] {
			seen[s.P] = true
			for _, r := range s.Rows {
				got[r[0]] = r[1]
			}
		}
		if len(seen) >= s.N {
			return true
		}
		if _, err := h.b.Eval(p.session, "document.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight'}))"); err != nil {
			failed = err.Error()
			return true
		}
		return false
	})
	switch {
	case failed != "":
		return failed
	case !all:
		return fmt.Sprintf("saw pages %v of %d", seen, n)
	}
	var bad []string
	for _, sv := range site.Services {
		if sv.Waiting == 0 {
			continue
		}
		c, ok := got[sv.Code]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("service %s (%d waiting) not shown", sv.Code, sv.Waiting))
		case digits(c) != strconv.Itoa(sv.Waiting):
			bad = append(bad, fmt.Sprintf("service %s shows %q waiting, the daemon %d", sv.Code, c, sv.Waiting))
		}
	}
	return strings.Join(bad, "; ")
}

func digits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// checkTickets: each ticket page shows its ticket's status in the log.
func (h *hallDay) checkTickets(cp *load.Checkpoint, name string) string {
	var bad []string
	for i, p := range h.tickets {
		want := string(cp.Status[p.name])
		if want == "" {
			want = "WAITING" // taken before the day, not called yet
		}
		why := within(func() string {
			got, err := h.b.Eval(p.session, "document.body.dataset.status")
			if err != nil || got != want {
				return fmt.Sprintf("ticket page %s shows %q (%v), the log %s", p.name, got, err, want)
			}
			return ""
		})
		if i == 0 {
			h.b.Shot(h.t, p.session, h.art, name+"-ticket-"+p.name+".png")
		}
		if why != "" {
			bad = append(bad, why)
		}
	}
	return strings.Join(bad, "; ")
}

// checkConsoles: the supervisor console (and the counter's, once
// started) in tmux show the daemon's figures, connected and not stale.
func (h *hallDay) checkConsoles(cp *load.Checkpoint, name string) string {
	why := h.screenCheck("supervisor", name, func(s string) string { return supervisorDiff(s, cp.Site) })
	if h.counter {
		if w := h.checkCounterConsole(cp, name); w != "" {
			why = strings.TrimPrefix(why+"; "+w, "; ")
		}
	}
	return why
}

func (h *hallDay) checkCounterConsole(cp *load.Checkpoint, name string) string {
	// Counter 5 serves E and A (testdata/busyday.yaml).
	waiting := cp.Site.Service("E").Waiting + cp.Site.Service("A").Waiting
	return h.screenCheck("counter", name, func(s string) string { return counterDiff(s, cp.Site.Counter("5"), waiting) })
}

// screenCheck waits for the tmux pane's screen to pass diff and keeps the
// screen in the artifacts.
func (h *hallDay) screenCheck(pane, name string, diff func(string) string) string {
	var screen string
	why := within(func() string {
		screen = h.tm("capture-pane", "-p", "-t", pane)
		return diff(screen)
	})
	if err := os.WriteFile(filepath.Join(h.art, name+"-"+pane+".txt"), []byte(screen), 0o644); err != nil {
		h.t.Error(err)
	}
	if why != "" {
		return fmt.Sprintf("%s console: %s; screen:\n%s", pane, why, screen)
	}
	return ""
}

// supervisorDiff compares a supervisor console's screen (120 columns, in
// English) with the daemon's picture: per service WAIT, SERVED, NO-SHOW and
// ISSUED; per counter its ticket.
func supervisorDiff(screen string, site *view.Site) string {
	var bad []string
	if !strings.Contains(screen, "● connected") || strings.Contains(screen, "STALE") || strings.Contains(screen, "reconnecting") {
		bad = append(bad, "not connected, or stale")
	}
	for _, sv := range site.Services {
		row := regexp.MustCompile(`(?m)^` + sv.Code + `  \S.*$`).FindString(screen)
		f := strings.Fields(row)
		if len(f) < 11 {
			bad = append(bad, fmt.Sprintf("no row for service %s", sv.Code))
			continue
		}
		f = f[len(f)-9:] // WAIT LONGEST AVG SERVED NO-SHOW STATE ISSUED LAST TARGET
		want := []int{sv.Waiting, sv.Served, sv.NoShows, sv.Issued}
		if got := []string{f[0], f[3], f[4], f[6]}; !slices.Equal(got, []string{strconv.Itoa(want[0]), strconv.Itoa(want[1]), strconv.Itoa(want[2]), strconv.Itoa(want[3])}) {
			bad = append(bad, fmt.Sprintf("service %s: waiting, served, no-show, issued %v, the daemon's %v", sv.Code, got, want))
		}
	}
	for _, c := range site.Counters {
		row := regexp.MustCompile(`(?m)^[ >] ` + c.ID + `  .*$`).FindString(screen)
		if row == "" || c.Number != "" && !strings.Contains(row, " "+c.Number+" ") {
			bad = append(bad, fmt.Sprintf("counter %s: row %q, the daemon's ticket %q", c.ID, row, c.Number))
		}
	}
	return strings.Join(bad, "; ")
}

// counterDiff compares the counter-mode console (in the site's first
// language, zh) with the daemon's picture of its counter.
func counterDiff(screen string, c *view.Counter, waiting int) string {
	switch {
	case !strings.Contains(screen, "● 已连接"):
		return "not connected"
	case strings.Contains(screen, "过时") || strings.Contains(screen, "重新连接"):
		return "stale or reconnecting"
	case c == nil:
		return "no counter 5 at the daemon"
	case c.Number != "" && !strings.Contains(screen, c.Number+" "):
		return fmt.Sprintf("does not show the counter's ticket %s", c.Number)
	case !strings.Contains(screen, fmt.Sprintf("本窗口等候：%d · 今日已办：%d", waiting, c.Served)):
		return fmt.Sprintf("does not say %d waiting for the counter, %d served there", waiting, c.Served)
	}
	return ""
}

// subsequence reports whether seq appears in all, in order (not
// necessarily next to each other).
func subsequence(seq, all []string) bool {
	i := 0
	for _, s := range seq {
		for i < len(all) && all[i] != s {
			i++
		}
		if i == len(all) {
			return false
		}
		i++
	}
	return true
}

// ledLine reads the frames of one serial line (the far end of a pty):
// header byte, one address byte, the text, trailer byte.
type ledLine struct {
	mu     sync.Mutex
	frames map[byte][]string
}

func readLED(t *testing.T, master *os.File, header, trailer byte) *ledLine {
	l := &ledLine{frames: map[byte][]string{}}
	go func() {
		r := bufio.NewReader(master)
		for {
			if b, err := r.ReadByte(); err != nil {
				return
			} else if b != header {
				continue
			}
			addr, err := r.ReadByte()
			if err != nil {
				return
			}
			text, err := r.ReadString(trailer)
			if err != nil {
				return
			}
			l.mu.Lock()
			l.frames[addr] = append(l.frames[addr], strings.TrimSpace(strings.TrimSuffix(text, string(trailer))))
			l.mu.Unlock()
		}
	}()
	return l
}

// shown are the numbers a board showed, in order, each run of the same
// number once, blank frames left out; and the last frame.
func (l *ledLine) shown(addr byte) (nums []string, last string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.frames[addr] {
		last = f
		if n := strings.Fields(f); len(n) > 0 && (len(nums) == 0 || nums[len(nums)-1] != n[0]) {
			nums = append(nums, n[0])
		}
	}
	return nums, last
}

// checkLED: each counter's board shows the counter's ticket (blank when
// idle) and showed its calls in the log's order; the hall board's first
// line is the last call.
func (h *hallDay) checkLED(cp *load.Checkpoint, _ string) string {
	byCounter := map[string][]string{}
	for _, c := range cp.Calls {
		f := strings.Fields(c)
		byCounter[f[1]] = append(byCounter[f[1]], f[0])
	}
	var bad []string
	for _, c := range cp.Site.Counters {
		n, _ := strconv.Atoi(c.ID)
		why := within(func() string {
			nums, last := h.boards.shown(byte(n))
			if got := strings.Fields(last + " "); c.Number != "" && (len(got) == 0 || got[0] != c.Number) || c.Number == "" && len(got) > 0 && got[0] != "" {
				return fmt.Sprintf("counter %s's board shows %q, the counter holds %q", c.ID, last, c.Number)
			}
			if !subsequence(nums, byCounter[c.ID]) {
				return fmt.Sprintf("counter %s's board showed %d numbers not in the order of its %d calls", c.ID, len(nums), len(byCounter[c.ID]))
			}
			return ""
		})
		if why != "" {
			bad = append(bad, why)
		}
	}
	live := liveCalls(cp)
	if why := within(func() string {
		_, frame := h.hallLED.shown(1)
		var lines []string
		if frame != "" {
			lines = strings.Split(frame, "|")
		}
		if len(lines) > 4 || len(lines) > 0 != (len(live) > 0) || len(lines) > 0 && lines[0] != live[0] || !subsequence(lines, live) {
			return fmt.Sprintf("hall board shows %q, the log's calls still on it are %q…", frame, live[:min(len(live), 4)])
		}
		return ""
	}); why != "" {
		bad = append(bad, why)
	}
	return strings.Join(bad, "; ")
}

// liveCalls are the log's calls a hall board may show ("A00042 -> 5",
// newest first, each number at its last call): not those marked no-show,
// cancelled, expired or transferred since (the board takes them off and
// keeps the rest). The newest of them is always on top.
func liveCalls(cp *load.Checkpoint) []string {
	var lines []string
	seen := map[string]bool{}
	for i := len(cp.Calls) - 1; i >= 0; i-- {
		f := strings.Fields(cp.Calls[i])
		if seen[f[0]] {
			continue
		}
		seen[f[0]] = true
		switch cp.Status[f[0]] {
		case queue.StatusCalled, queue.StatusServing, queue.StatusDone:
			lines = append(lines, f[0]+" -> "+f[1])
		}
	}
	return lines
}

// voiceDir follows the voice zone's folder: it notes each WAV file's name
// (time, number, counter) and removes the file, so a day of thousands of
// announcements takes no room; it also samples the zone's queue.
type voiceDir struct {
	mu      sync.Mutex
	names   []string // "number counter" in the files' time order
	times   []string
	pending float64 // the most announcements waiting seen
}

func watchVoice(t *testing.T, dir, metrics string) *voiceDir {
	v := &voiceDir{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			v.scan(dir)
			if i%5 == 0 {
				if m, err := scrapeMetrics(metrics); err == nil {
					v.mu.Lock()
					v.pending = max(v.pending, m[`nowserving_voice_announcements_pending{zone="hall"}`])
					v.mu.Unlock()
				}
			}
			sleep := time.NewTimer(100 * time.Millisecond)
			select {
			case <-ctx.Done():
			case <-sleep.C:
			}
		}
	}()
	return v
}

var voiceName = regexp.MustCompile(`^(\d{8}-\d{6}\.\d{3})-([A-Z]\d+)-(\d+)(-\d+)?\.wav$`)

func (v *voiceDir) scan(dir string) {
	ents, _ := os.ReadDir(dir) // sorted by name: by time
	for _, e := range ents {
		m := voiceName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		v.mu.Lock()
		v.times, v.names = append(v.times, m[1]), append(v.names, m[2]+" "+m[3])
		v.mu.Unlock()
		_ = os.Remove(filepath.Join(dir, e.Name()))
	}
}

// last returns how many announcements were written, and the numbers of
// the last millisecond's (files of the same millisecond sort by number,
// not by the order they were written in).
func (v *voiceDir) last() (n int, nums []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	n = len(v.names)
	for i := n - 1; i >= 0 && v.times[i] == v.times[n-1]; i-- {
		nums = append(nums, strings.Fields(v.names[i])[0])
	}
	return n, nums
}

// inOrder reports whether the announcements follow calls: files of the
// same millisecond may be in either order among themselves.
func (v *voiceDir) inOrder(calls []string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	at := 0 // calls[:at] are behind the announcements of earlier milliseconds
	for i := 0; i < len(v.names); {
		j := i
		for j < len(v.names) && v.times[j] == v.times[i] {
			j++
		}
		next := at
		for _, n := range v.names[i:j] {
			k := slices.Index(calls[at:], n)
			if k < 0 {
				return false
			}
			next = max(next, at+k+1)
		}
		at, i = next, j
	}
	return true
}

// checkVoice: once the zone's queue is empty, every announcement accepted
// was written or counted as dropped, in the order of the calls, the last
// call last; the queue never held more than its bound.
func (h *hallDay) checkVoice(cp *load.Checkpoint, _ string) string {
	var queued, dropped, pending float64
	why := within(func() string {
		m, err := scrapeMetrics(h.metrics)
		if err != nil {
			return err.Error()
		}
		queued, dropped, pending = m[`nowserving_voice_announcements_queued_total{zone="hall"}`], m[`nowserving_voice_announcements_dropped_total{zone="hall"}`], m[`nowserving_voice_announcements_pending{zone="hall"}`]
		n, last := h.voice.last()
		if pending != 0 || float64(n) != queued-dropped || !slices.Contains(last, lastNumber(cp)) {
			return fmt.Sprintf("%d announcements written, the last %q; %v queued, %v dropped, %v pending; the last call is %s", n, last, queued, dropped, pending, lastNumber(cp))
		}
		return ""
	})
	h.voice.mu.Lock()
	most := h.voice.pending
	h.voice.mu.Unlock()
	h.t.Logf("voice: %v announcements queued, %v dropped as stale, at most %v waiting", queued, dropped, most)
	switch {
	case why != "":
		return "voice: " + why
	case !h.voice.inOrder(cp.Calls):
		return "voice: the announcements are not in the order of the calls"
	case most > 16:
		return fmt.Sprintf("voice: %v announcements waiting at once", most)
	}
	return ""
}

// scrapeMetrics reads the daemon's /metrics into a map of "name{labels}"
// to value.
func scrapeMetrics(url string) (map[string]float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
				m[line[:i]] = v
			}
		}
	}
	return m, sc.Err()
}
