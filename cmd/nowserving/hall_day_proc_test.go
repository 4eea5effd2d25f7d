package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// linkTestBinary links this test binary as dir/nowserving, which runs as
// the real binary does (TestMain runs main for argv[0] "nowserving"), and
// returns its path.
func linkTestBinary(t *testing.T, dir string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "nowserving")
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// dayBinary returns a nowserving for the busy day's daemon and its tmux
// consoles, as dir/nowserving. Without the race detector it is this test
// binary (TestMain runs main for argv[0] "nowserving"). With it, it is
// nowserving built once without it: under the race detector the daemon
// goes about twenty times slower, and a day of 20,000 tickets would take
// most of an hour; the daemon's own races are the business of the
// package tests, the day checks what the hall shows. `make test` has
// compiled every package for go vet first, so this is a link.
func dayBinary(t *testing.T, dir string) string {
	t.Helper()
	if !raceDetector {
		return linkTestBinary(t, dir)
	}
	bin := filepath.Join(dir, "nowserving")
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	start := time.Now()
	cmd := exec.Command(gobin, "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "GOFLAGS=") // no -race from the environment
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build nowserving without the race detector: %v\n%s", err, out)
	}
	t.Logf("built %s without the race detector in %s", bin, time.Since(start).Round(100*time.Millisecond))
	return bin
}

// dayDaemon is the busy day's daemon, a process of its own.
type dayDaemon struct {
	protocol, http string // the addresses it listens on
	log            string // its standard error: warnings and errors
}

// serving is the line `serve` writes once it listens, at log level warn.
var serving = regexp.MustCompile(`^nowserving: serving, protocol (\S+), http (\S+) `)

// startDayDaemon runs `bin serve --config file` until the test ends, its
// warnings and errors in log (kept with the artifacts); at the end it is
// stopped with SIGTERM and must exit 0 within its drain time.
func startDayDaemon(t *testing.T, bin, file, log string) *dayDaemon {
	t.Helper()
	d := &dayDaemon{log: log}
	lf, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--config", file)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the daemon: %v", err)
	}
	pw.Close()
	exited, copied := make(chan error, 1), make(chan struct{})
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		stopDayDaemon(t, cmd, exited, log)
		<-copied
		lf.Close()
	})
	found := make(chan [2]string, 1)
	go func() { // the first line tells the addresses; all of it goes to log
		defer close(copied)
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if m := serving.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- [2]string{m[1], m[2]}:
				default:
				}
			}
			fmt.Fprintln(lf, sc.Text())
		}
	}()
	select {
	case a := <-found:
		d.protocol, d.http = a[0], a[1]
	case err := <-exited:
		exited <- err
		t.Fatalf("the daemon exited at its start: %v\n%s", err, logTail(log))
	case <-time.After(2 * time.Minute):
		t.Fatalf("the daemon did not say where it listens in 2 minutes\n%s", logTail(log))
	}
	return d
}

func stopDayDaemon(t *testing.T, cmd *exec.Cmd, exited chan error, log string) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the daemon: %v\n%s", err, logTail(log))
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-exited
		t.Errorf("the daemon did not stop within a minute of SIGTERM\n%s", logTail(log))
	}
}

// logTail is the end of the daemon's log, for a failure message.
func logTail(name string) string {
	b, _ := os.ReadFile(name)
	return tail(b, 4000)
}
