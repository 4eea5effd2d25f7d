//go:build unix

package notify

import (
	"os/exec"
	"syscall"
)

// killGroup runs cmd in a process group of its own and, when its context
// ends, kills the whole group: the shell and whatever it started.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
