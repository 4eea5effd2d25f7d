package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/internal/testkit/golden"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue"
)

// readme returns the repository's README.
func readme(t *testing.T) string {
	t.Helper()
	return string(golden.Read(t, "../../README.md"))
}

// metricsHardwareYAML adds a printer, an LED board, a voice zone and a
// notification receiver to serveYAML.
const metricsHardwareYAML = `
printers:
  - { id: desk, addr: "127.0.0.1:1" }
led:
  ports:
    - { name: "file:%s", driver: { kind: template, template: "{number}" } }
  boards:
    - { port: "file:%[2]s", addr: 1, site: clinic, counter: "1" }
voice:
  zones:
    - { name: hall, site: clinic, output: "dir:%s", langs: [en] }
notify:
  commands:
    - { name: sink, run: "cat > /dev/null" }
`

// TestReadmeMetrics: every metric name the README mentions is on a running
// daemon's /metrics (after a ticket, so the request metrics have values); a
// name ending in * is a prefix some metric has.
func TestReadmeMetrics(t *testing.T) {
	names, _ := daemonRegistry(t)
	mentioned := regexp.MustCompile("nowserving_[a-z_]+\\*?").FindAllString(readme(t), -1)
	if len(mentioned) < 10 {
		t.Fatalf("README mentions %d metrics", len(mentioned))
	}
	for _, m := range mentioned {
		if p, ok := strings.CutSuffix(m, "*"); ok {
			found := false
			for n := range names {
				found = found || strings.HasPrefix(n, p)
			}
			if !found {
				t.Errorf("README mentions %s: no metric has that prefix", m)
			}
			continue
		}
		if strings.HasSuffix(m, "_") {
			continue // "_called_total" after a full name: a suffix, checked below
		}
		if m == "nowserving_events_poll_age_seconds" {
			continue // only where a daemon polls a shared store, not on SQLite: metrics.TestFollow has it
		}
		if base := strings.TrimSuffix(strings.TrimSuffix(m, "_sum"), "_count"); !names[m] && !names[base] {
			t.Errorf("README mentions %s, which /metrics does not have", m)
		}
	}
	for _, suffix := range regexp.MustCompile("`(_[a-z_]+_total)`").FindAllStringSubmatch(readme(t), -1) {
		if !names["nowserving_queue_tickets"+suffix[1]] {
			t.Errorf("README mentions nowserving_queue_tickets%s, which /metrics does not have", suffix[1])
		}
	}
}

// daemonRegistry runs a daemon with a printer, an LED board, a voice zone
// and a receiver, takes and calls a ticket (so the request metrics and a
// wait have values) and returns the metric names of its /metrics and its
// registry.
func daemonRegistry(t *testing.T) (map[string]bool, *prometheus.Registry) {
	t.Helper()
	dir := t.TempDir()
	cfg := testConfig(t, serveYAML+metricsHardwareYAML, map[string]string{"NOWSERVING_LISTEN_HTTP": "127.0.0.1:0"}, dir+"/led.bin", dir+"/voice")
	d := runDaemon(t, cfg)
	takeTicket(t, d.protocolAddr.String(), 1)
	if _, err := d.live.eng.CallNext(context.Background(), queue.CounterRequest{Request: queue.Request{Site: "clinic", Device: "test"}, Counter: "1"}); err != nil {
		t.Fatal(err) // a wait observed
	}
	names := map[string]bool{}
	var body string
	// Both families come once their first samples are in; the caller
	// names any that are still missing after 10 s.
	poll.Within(10*time.Second, 100*time.Millisecond, func() bool {
		resp, err := http.Get("http://" + d.httpAddr.String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = string(b)
		return strings.Contains(body, "nowserving_led_board_online{") && strings.Contains(body, "nowserving_http_requests_total{")
	})
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) > 2 && f[0] == "#" && f[1] == "HELP" {
			names[f[2]] = true
		}
	}
	return names, d.reg
}

// TestReadmeConsole: the console screen in the README is the golden screen
// the tui tests render.
func TestReadmeConsole(t *testing.T) {
	g := golden.Read(t, "../../tui/testdata/supervisor-80x24.golden")
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(g), "\n"), "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	if want := "```\n" + strings.Join(lines, "\n") + "\n```"; !strings.Contains(readme(t), want) {
		t.Errorf("the README's console screen is not tui/testdata/supervisor-80x24.golden:\n%s", want)
	}
}

// TestReadmeOverrides: the README's list of the sections whose scalar
// keys a flag or variable sets names every section config.Overrides has
// (it had left out retention and most of http).
func TestReadmeOverrides(t *testing.T) {
	_, rest, ok := strings.Cut(readme(t), "Every scalar key outside a list (")
	list, _, _ := strings.Cut(rest, ") can be overridden")
	if !ok {
		t.Fatal("the README no longer says which keys a flag or variable sets")
	}
	seen := map[string]bool{}
	for _, o := range config.Overrides() {
		section, _, _ := strings.Cut(o.Key, ".")
		if !seen[section] && !strings.Contains(list, "`"+section+".") {
			t.Errorf("the README's overridable keys (%s) leave out %s (%s)", list, section, o.Key)
		}
		seen[section] = true
	}
}

// TestReadmeCommands: every nowserving command line in the README's code
// blocks names a subcommand and flags it takes.
func TestReadmeCommands(t *testing.T) {
	in, n := false, 0
	var cont string
	for _, line := range strings.Split(readme(t), "\n") {
		if strings.HasPrefix(line, "```") {
			in = !in
			continue
		}
		if !in {
			continue
		}
		line = cont + strings.TrimSpace(line)
		cont = ""
		if c, ok := strings.CutSuffix(line, "\\"); ok {
			cont = c + " "
			continue
		}
		line = strings.TrimPrefix(line, "$ ")
		if i := strings.Index(line, "  #"); i >= 0 {
			line = line[:i]
		}
		args := shellWords(line)
		if len(args) == 0 || (args[0] != "nowserving" && args[0] != "./bin/nowserving") {
			continue
		}
		n++
		cmd, rest, err := newRoot().Find(args[1:])
		if err != nil || !cmd.Runnable() {
			t.Errorf("README: %s: not a nowserving command (%v)", line, err)
			continue
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Errorf("README: %s: %v", line, err)
		}
	}
	if n < 20 {
		t.Errorf("found %d nowserving command lines in the README, want the walkthrough's", n)
	}
}

// shellWords splits a command line on spaces, keeping quoted words whole.
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	quote, word := byte(0), false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			quote, word = c, true
		case c == ' ' || c == '\t':
			if word {
				out = append(out, cur.String())
				cur.Reset()
				word = false
			}
		default:
			cur.WriteByte(c)
			word = true
		}
	}
	if word {
		out = append(out, cur.String())
	}
	return out
}
