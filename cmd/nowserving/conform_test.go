package main

import (
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/conform/conformtest"
)

// TestConformDaemon runs `conform daemon` against a daemon on loopback:
// every check passes (or is skipped for want of a role) and the exit is 0.
func TestConformDaemon(t *testing.T) {
	d := conformtest.Start(t, 300*time.Millisecond)
	out, err := runCmd(t, "conform", "daemon", "--addr", d.Addr, "--device", "kiosk-1", "--secret", "kiosk-1-secret-0123456789")
	if err != nil || !strings.Contains(out, " 0 failed") || !strings.Contains(out, "\n4. Session\n") {
		t.Errorf("conform daemon: %v\n%s", err, out)
	}
	out, err = runCmd(t, "conform", "daemon", "--addr", d.Addr, "--device", "kiosk-1")
	if err == nil || !strings.Contains(err.Error(), "one --secret") {
		t.Errorf("conform daemon without --secret: %v\n%s", err, out)
	}
	if _, err := runCmd(t, "conform", "kiosk", "--listen", "127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "--secret is required") {
		t.Errorf("conform kiosk without --secret: %v", err)
	}
}
