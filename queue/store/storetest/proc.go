package storetest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// serverProc is a database server the harness runs (a mariadbd of a Galera
// cluster, a postgres of a primary and standby pair), in its own process
// group: a signal to the group reaches every process the server forked,
// as a crash or a freeze of its host would.
type serverProc struct {
	name string
	cmd  *exec.Cmd
	done chan error // the process's exit, put back by whoever reads it
}

// start runs bin with args as the user cred names (nil: this process's
// user), its output in logFile.
func (p *serverProc) start(t testing.TB, bin string, args []string, logFile string, cred *syscall.Credential) {
	t.Helper()
	out, err := os.Create(logFile)
	if err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	if err := p.cmd.Start(); err != nil {
		out.Close()
		t.Fatalf("%s: start: %v", p.name, err)
	}
	p.done = make(chan error, 1)
	go func() { p.done <- p.cmd.Wait(); out.Close() }()
}

// running reports whether the server process has not exited.
func (p *serverProc) running() bool {
	if p.cmd == nil || p.cmd.Process == nil {
		return false
	}
	select {
	case err := <-p.done:
		p.done <- err
		return false
	default:
		return true
	}
}

// exited returns the server's exit error once it has exited.
func (p *serverProc) exited() <-chan error { return p.done }

// signal sends sig to the server and every process it forked: its process
// group and, since PostgreSQL makes each backend the leader of a group of
// its own, every descendant of the server's process. Before a SIGSTOP or
// SIGKILL the server is stopped, so that it forks no more and its
// children are not handed to init before they are found.
func (p *serverProc) signal(sig syscall.Signal) error {
	if !p.running() {
		return nil
	}
	pid := p.cmd.Process.Pid
	if sig == syscall.SIGSTOP || sig == syscall.SIGKILL {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			return err
		}
		waitStopped(pid)
	}
	for _, c := range descendants(pid) {
		_ = syscall.Kill(c, sig)
	}
	return syscall.Kill(-pid, sig)
}

// waitStopped waits a little for pid to be stopped: kill only queues
// the signal.
func waitStopped(pid int) {
	for range 100 {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return
		}
		if i := bytes.LastIndexByte(b, ')'); i < 0 || i+2 >= len(b) || b[i+2] == 'T' || b[i+2] == 't' {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// descendants lists the processes below pid, read from /proc (none where
// there is no /proc).
func descendants(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	children := map[int][]int{}
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		c, err1 := strconv.Atoi(filepath.Base(filepath.Dir(st)))
		pp, err2 := strconv.Atoi(f[1])
		if err1 == nil && err2 == nil {
			children[pp] = append(children[pp], c)
		}
	}
	var all []int
	for next := []int{pid}; len(next) > 0; {
		p := next[0]
		next = append(next[1:], children[p]...)
		all = append(all, children[p]...)
	}
	return all
}

// kill9 ends every process of the server at once (kill -9: no shutdown,
// no goodbye to clients or peers), as a crash of its host would, and waits
// for the server to be reaped.
func (p *serverProc) kill9() {
	if !p.running() {
		return
	}
	_ = p.signal(syscall.SIGKILL)
	err := <-p.done
	p.done <- err
}

// stop wakes the server if it was frozen, asks it to shut down with sig
// and kills its process group if it has not within wait.
func (p *serverProc) stop(t testing.TB, sig syscall.Signal, wait time.Duration) {
	if !p.running() {
		return
	}
	_ = p.signal(syscall.SIGCONT)
	_ = p.cmd.Process.Signal(sig)
	select {
	case err := <-p.done:
		p.done <- err
	case <-time.After(wait):
		t.Errorf("%s did not stop within %s: killed", p.name, wait)
		p.kill9()
	}
}

// ServerUser is the user a server the harness (or a test, StartServer)
// starts runs as: none (this process's) unless the tests run as root,
// which mariadbd and initdb refuse; then name, with dir, t's temporary
// directory, opened to it.
func ServerUser(t testing.TB, dir, name string) (string, *syscall.Credential) {
	t.Helper()
	if os.Geteuid() != 0 {
		return "", nil
	}
	// t.TempDir is a numbered directory in a per-test one, both 0700.
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatalf("open %s to the %s user: %v", d, name, err)
		}
	}
	uid, gid := userIDs(t, name)
	return name, &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

func userIDs(t testing.TB, name string) (int, int) {
	t.Helper()
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("user %s: %v", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return uid, gid
}

// ChownTree gives dir and everything under it to the user name.
func ChownTree(t testing.TB, dir, name string) {
	t.Helper()
	uid, gid := userIDs(t, name)
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
	if err != nil {
		t.Fatalf("chown %s: %v", dir, err)
	}
}
