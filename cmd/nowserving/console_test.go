package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/need"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/internal/testkit/screen"
)

const consoleTestConfig = `
store:
  driver: sqlite
  dsn: "q.db"
listen:
  protocol: "127.0.0.1:0"
  http: ""
  heartbeat: 2s
log:
  level: info
  format: text
sites:
  - id: clinic
    name: { en: "Test Clinic" }
    timezone: "UTC"
    rollover: "04:00"
    languages: [en]
    services:
      - { code: A, name: { en: "General" }, prefix: A, width: 3, daily_cap: 0, hours: [], avg_service: 5m, wait_target: 10m }
      - { code: F, name: { en: "Flu shots" }, prefix: F, width: 2, daily_cap: 0, hours: [], avg_service: 1m }
    counters:
      - { id: "1", services: [A, F] }
      - { id: "2", services: [A] }
  - id: annex
    timezone: "UTC"
    languages: [en]
    services:
      - { code: B, name: { en: "Billing" }, hours: [] }
    counters:
      - { id: "7", services: [B] }
devices:
  - { id: kiosk-1,   role: kiosk,   site: clinic, secret: "test-kiosk-1-secret-0123" }
  - { id: keypad-1,  role: keypad,  site: clinic, counter: "1", secret: "test-keypad-1-secret-0123" }
  - { id: display-1, role: display, site: clinic, secret: "test-display-1-secret-0123" }
  - { id: console-1, role: console, site: clinic, secret: "test-console-1-secret-0123" }
  - { id: boss,      role: console, secret: "test-boss-console-secret-0123" }
`

func writeConsoleConfig(t *testing.T) (dir, file string) {
	t.Helper()
	dir = t.TempDir()
	file = filepath.Join(dir, "site.yaml")
	if err := os.WriteFile(file, []byte(consoleTestConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, file
}

func TestResolveConsole(t *testing.T) {
	_, file := writeConsoleConfig(t)
	tests := []struct {
		name      string
		f         consoleFlags
		device    string
		sites     []string
		addr      string
		wantError string
	}{
		{"first console device", consoleFlags{config: file}, "console-1", []string{"clinic"}, defaultAddr, ""},
		{"a console of every site", consoleFlags{config: file, device: "boss"}, "boss", []string{"clinic", "annex"}, defaultAddr, ""},
		{"sites named", consoleFlags{config: file, device: "boss", sites: []string{"annex"}, addr: "127.0.0.1:9"}, "boss", []string{"annex"}, "127.0.0.1:9", ""},
		{"device and secret alone", consoleFlags{config: file, device: "other", secret: "s"}, "other", []string{"clinic", "annex"}, defaultAddr, ""},
		{"unknown device", consoleFlags{config: file, device: "nobody"}, "", nil, "", `device "nobody" is not in the configuration`},
		{"secret without device", consoleFlags{config: file, secret: "s"}, "", nil, "", "console: --secret needs --device"},
		{"unknown site", consoleFlags{config: file, sites: []string{"nosuch"}}, "", nil, "", `console: unknown site "nosuch": the configuration has clinic, annex`},
		{"counter not a number", consoleFlags{config: file, counter: "abc"}, "", nil, "", `console: --counter "abc": want a counter number, such as 5`},
		{"counter not configured", consoleFlags{config: file, counter: "9"}, "", nil, "", "console: site clinic has no counter 9 (its counters: 1, 2)"},
		{"counter configured", consoleFlags{config: file, counter: "2"}, "console-1", []string{"clinic"}, defaultAddr, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs, err := resolveConsole(&tt.f)
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var sites []string
			for _, s := range cs.sites {
				sites = append(sites, s.Code)
			}
			if cs.deviceID != tt.device || !reflect.DeepEqual(sites, tt.sites) || cs.addr != tt.addr {
				t.Errorf("device %q sites %v addr %q, want %q %v %q", cs.deviceID, sites, cs.addr, tt.device, tt.sites, tt.addr)
			}
		})
	}
	cs, err := resolveConsole(&consoleFlags{config: file})
	if err != nil {
		t.Fatal(err)
	}
	s := cs.sites[0]
	if s.Name != "Test Clinic" || len(s.Services) != 2 || s.Services[0].WaitTarget != 10*time.Minute {
		t.Errorf("site options %+v lack the configuration's names and targets", s)
	}
	if len(s.Counters) != 2 || s.Counters[0].Keypad != "keypad-1" || s.Counters[1].Keypad != "" ||
		!reflect.DeepEqual(s.Counters[0].Services, []string{"A", "F"}) {
		t.Errorf("counters %+v", s.Counters)
	}
}

// tmuxIn returns tm, which runs tmux (the binary's path) with args on a
// tmux server of the test's own, its socket in dir, no user configuration
// read, and returns what it printed, failing t if it fails. The server is
// killed when the test ends.
func tmuxIn(t *testing.T, tmux, dir string) (tm func(args ...string) string) {
	sock := filepath.Join(dir, "tmux.sock")
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })
	return func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
}

// TestConsoleTmux runs the real binary as a person would: the daemon on
// port 0, a kiosk ticket, then `nowserving console` in an 80x24 tmux pane,
// driven by send-keys and read by capture-pane.
func TestConsoleTmux(t *testing.T) {
	tmux := need.Program(t, "tmux", "tmux")
	dir, file := writeConsoleConfig(t)
	bin := linkTestBinary(t, dir)
	logPath := filepath.Join(dir, "serve.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	serve := exec.Command(bin, "serve", "--config", file)
	serve.Dir, serve.Stderr = dir, logf
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = serve.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = serve.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = serve.Process.Kill()
			<-done
		}
	})
	var addr string
	var log []byte
	if !poll.Within(30*time.Second, 50*time.Millisecond, func() bool {
		log, _ = os.ReadFile(logPath)
		addr = listenAddr(string(log))
		return addr != ""
	}) {
		t.Fatalf("daemon did not listen; log:\n%s", log)
	}
	tm := tmuxIn(t, tmux, dir)
	console := strings.Join([]string{bin, "console", "--config", file, "--addr", addr}, " ")
	tm("new-session", "-d", "-s", "console", "-x", "80", "-y", "24", "env TERM=xterm-256color "+console+"; sleep 30")
	pane := func() string { return tm("capture-pane", "-p", "-t", "console") }
	waitScreen := func(what string, ok func(string) bool) string {
		t.Helper()
		var s string
		if !poll.Within(20*time.Second, 100*time.Millisecond, func() bool { s = pane(); return ok(s) }) {
			t.Fatalf("waiting for %s; screen:\n%s", what, s)
		}
		return s
	}
	waitScreen("the console's first screen", func(s string) bool {
		return strings.Contains(s, "● connected") && strings.Contains(s, "A  General")
	})
	// A kiosk takes a ticket: the console sees it live.
	out, err := exec.Command(bin, "sim", "kiosk", "--config", file, "--addr", addr, "--service", "A").CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("ticket A001")) {
		t.Fatalf("kiosk: %v\n%s", err, out)
	}
	s := waitScreen("the kiosk's ticket", func(s string) bool { return strings.Contains(s, "A001 in A") })
	if lines := strings.Split(strings.TrimRight(s, "\n"), "\n"); len(lines) > 24 {
		t.Errorf("screen has %d lines in a 24-line pane", len(lines))
	}
	header := strings.SplitN(s, "\n", 2)[0]
	for _, want := range []string{"Test Clinic", "● connected", addr[:min(len(addr), 10)]} {
		if !strings.Contains(header, want) {
			t.Errorf("header %q lacks %q", header, want)
		}
	}
	if row := screen.Line(s, "A  General"); !strings.Contains(row, " 1 ") {
		t.Errorf("service row %q does not show the waiting ticket", row)
	}

	tm("send-keys", "-t", "console", "n")
	// The event (the counter row) and the answer (the status line) arrive
	// in either order: wait for both.
	s = waitScreen("A001 called to counter 1, and the answer on the status line", func(s string) bool {
		return strings.Contains(screen.Line(s, "1  Counter 1"), "A001") &&
			strings.Contains(s, "call next at counter 1: A001 called at counter 1")
	})
	if row := screen.Line(s, "A  General"); !strings.Contains(row, " 0 ") {
		t.Errorf("service row %q still shows the called ticket waiting", row)
	}

	// The software keypad of counter 2, in the same pane size.
	tm("send-keys", "-t", "console", "q")
	tm("new-session", "-d", "-s", "keypad", "-x", "80", "-y", "24", "env TERM=xterm-256color "+console+" --counter 2; sleep 30")
	out, err = exec.Command(bin, "sim", "kiosk", "--config", file, "--addr", addr, "--service", "A").CombinedOutput()
	if err != nil {
		t.Fatalf("kiosk: %v\n%s", err, out)
	}
	keypad := func() string { return tm("capture-pane", "-p", "-t", "keypad") }
	if !poll.Within(20*time.Second, 100*time.Millisecond, func() bool { return strings.Contains(keypad(), "waiting for this counter: 1") }) {
		t.Fatalf("keypad screen:\n%s", keypad())
	}
	tm("send-keys", "-t", "keypad", "n")
	if !poll.Within(20*time.Second, 100*time.Millisecond, func() bool { return strings.Contains(keypad(), "A002 called") }) {
		t.Fatalf("keypad did not call A002:\n%s", keypad())
	}
}

// TestConsoleLang: the console's screen is in one language: --lang, else
// the site's first language (zh for the demo hospital), names included;
// the bank (pt, en) reads without its server-only API token.
func TestConsoleLang(t *testing.T) {
	for _, tc := range []struct {
		file, lang, want, site, service, counter, resource string
	}{
		{"../../testdata/hospital.yaml", "", "zh", "市人民医院", "初诊", "1号窗口", "李医生"},
		{"../../testdata/hospital.yaml", "en", "en", "City Hospital", "First visit", "Counter 1", "Dr Li"},
		{"../../testdata/bank.yaml", "", "pt", "", "Pessoa física", "", ""},
		{"../../testdata/bank.yaml", "en", "en", "", "Personal", "", ""},
	} {
		t.Run(tc.want+"-"+filepath.Base(tc.file), func(t *testing.T) {
			t.Setenv("NOWSERVING_BANK_API_TOKEN", "") // sim and console need no server secret
			os.Unsetenv("NOWSERVING_BANK_API_TOKEN")
			cs, err := resolveConsole(&consoleFlags{config: tc.file, lang: tc.lang})
			if err != nil {
				t.Fatal(err)
			}
			s := cs.sites[0]
			if cs.lang != tc.want || s.Services[0].Name != tc.service || (tc.site != "" && s.Name != tc.site) ||
				(tc.counter != "" && s.Counters[0].Name != tc.counter) {
				t.Errorf("lang %s: site %q, service %q, counter %q; want %s %q %q %q", cs.lang, s.Name, s.Services[0].Name,
					s.Counters[0].Name, tc.want, tc.site, tc.service, tc.counter)
			}
			if tc.resource != "" && s.Resources["dr-li"] != tc.resource {
				t.Errorf("lang %s: resource dr-li named %q, want %q", cs.lang, s.Resources["dr-li"], tc.resource)
			}
		})
	}
}
