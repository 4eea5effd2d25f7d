//go:build !unix

package notify

import "os/exec"

// killGroup leaves cmd as it is: when its context ends only the shell is
// killed.
func killGroup(*exec.Cmd) {}
