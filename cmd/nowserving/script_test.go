package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/nowserving/nowserving/internal/testkit/poll"
)

// TestMain lets the test binary play the nowserving command inside the
// scripts (testscript puts it on their PATH). It is the only TestMain of
// this package.
//
// The processes started from here (the scripts' commands, the daemons
// and consoles of the tests that run this binary as nowserving) inherit
// GORACE=atexit_sleep_ms=0: under -race the runtime otherwise sleeps 1 s
// at exit, in case goroutines still running report a race, and the
// scripts' hundred-odd commands waited that long each. A race is reported
// as it happens and still fails its process (exit status 66); options
// already in $GORACE come after, and win.
func TestMain(m *testing.M) {
	os.Setenv("GORACE", strings.TrimSpace("atexit_sleep_ms=0 "+os.Getenv("GORACE")))
	testscript.Main(m, map[string]func(){"nowserving": main})
}

// TestScript runs the end-to-end scenarios of testdata/script: a real
// daemon on port 0 in the background and the sim devices against it.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"waitlisten": cmdWaitListen},
	})
}

// listenRE finds the protocol address in a daemon log line.
var listenRE = regexp.MustCompile(`((?:\d{1,3}\.){3}\d{1,3}|\[[0-9a-fA-F:]+\]|localhost):(\d+)`)

// listenAddr returns the protocol address announced in a daemon log: the
// first address with a non-zero port on a line that speaks of listening,
// preferring one whose key (protocol=ADDR) or line names the protocol, and
// skipping those that name http or metrics.
func listenAddr(log string) string {
	var fallback string
	for _, line := range strings.Split(log, "\n") {
		l := strings.ToLower(line)
		if !strings.Contains(l, "listen") {
			continue
		}
		for _, m := range listenRE.FindAllStringSubmatchIndex(line, -1) {
			if line[m[4]:m[5]] == "0" {
				continue
			}
			addr := line[m[0]:m[1]]
			key := strings.ToLower(line[:m[0]])
			if i := strings.LastIndexAny(key, " \t"); i >= 0 {
				key = key[i+1:]
			}
			kind := key
			if !strings.ContainsAny(strings.TrimRight(key, "=:\""), "abcdefghijklmnopqrstuvwxyz") ||
				strings.HasPrefix(key, "addr") || strings.HasPrefix(key, "listen") {
				kind = l // a generic key: the line tells what listens
			}
			switch {
			case strings.Contains(kind, "http") || strings.Contains(kind, "metrics"):
			case strings.Contains(kind, "protocol") || strings.Contains(kind, "device"):
				return addr
			case fallback == "":
				fallback = addr
			}
		}
	}
	return fallback
}

// cmdWaitListen implements "waitlisten LOGFILE [VAR]": wait up to 30 s for
// the daemon writing LOGFILE to log its protocol address, and put it in
// $VAR (default ADDR).
func cmdWaitListen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: waitlisten LOGFILE [VAR]")
	}
	name := "ADDR"
	if len(args) == 2 {
		name = args[1]
	}
	file := ts.MkAbs(args[0])
	var b []byte
	var addr string
	if !poll.Within(30*time.Second, 20*time.Millisecond, func() bool {
		b, _ = os.ReadFile(file)
		addr = listenAddr(string(b))
		return addr != ""
	}) {
		ts.Fatalf("no listening address in %s after 30s; log:\n%s", args[0], b)
	}
	ts.Setenv(name, addr)
	ts.Logf("%s=%s", name, addr)
}

func TestListenAddr(t *testing.T) {
	for _, tc := range []struct{ log, want string }{
		{`time=x level=INFO msg="listening" protocol=127.0.0.1:41234 http=127.0.0.1:7480`, "127.0.0.1:41234"},
		{"time=x level=INFO msg=\"http listening\" addr=127.0.0.1:9\ntime=x level=INFO msg=\"protocol listening\" addr=127.0.0.1:5555", "127.0.0.1:5555"},
		{`level=INFO msg=listening addr=[::1]:7400`, "[::1]:7400"},
		{`level=INFO msg=starting listen=127.0.0.1:0`, ""},
		{`level=INFO msg="store opened" dsn=q.db`, ""},
	} {
		if got := listenAddr(tc.log); got != tc.want {
			t.Errorf("listenAddr(%q) = %q, want %q", tc.log, got, tc.want)
		}
	}
}
