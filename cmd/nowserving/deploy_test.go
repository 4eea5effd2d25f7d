package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/internal/testkit/golden"
)

// TestSystemdUnit checks that every command deploy/nowserving.service runs
// is a nowserving subcommand with flags it takes, and that the unit keeps
// its hardening and its reload.
func TestSystemdUnit(t *testing.T) {
	unit := golden.Read(t, "../../deploy/nowserving.service")
	keys := map[string]bool{}
	for _, line := range strings.Split(string(unit), "\n") {
		line = strings.TrimSpace(line)
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		keys[k] = true
		if !strings.HasPrefix(k, "Exec") {
			continue
		}
		args := strings.Fields(v)
		if !strings.HasSuffix(args[0], "/nowserving") {
			continue
		}
		cmd, rest, err := newRoot().Find(args[1:])
		if err != nil || !cmd.Runnable() {
			t.Errorf("%s: %v is not a nowserving command: %v", k, args[1:], err)
			continue
		}
		if err := cmd.ParseFlags(rest); err != nil {
			t.Errorf("%s: %s: %v", k, v, err)
		}
	}
	for _, want := range []string{"ExecStart", "ExecReload", "NoNewPrivileges", "ProtectSystem", "ProtectHome",
		"PrivateTmp", "CapabilityBoundingSet", "RestrictAddressFamilies", "SystemCallFilter", "StateDirectory", "User"} {
		if !keys[want] {
			t.Errorf("deploy/nowserving.service has no %s=", want)
		}
	}
}

// TestMakeClean checks that make clean removes what the demos leave behind
// (both demo databases and out/) and that git ignores them.
func TestMakeClean(t *testing.T) {
	out, err := exec.Command("make", "-C", "../..", "-n", "clean").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n clean: %v\n%s", err, out)
	}
	ignore := golden.Read(t, "../../.gitignore")
	for _, f := range []string{"out", "nowserving-demo.db", "nowserving-bank.db"} {
		if !slices.Contains(strings.Fields(string(out)), f) {
			t.Errorf("make clean does not remove %s: %s", f, out)
		}
		if !strings.Contains(string(ignore), f) {
			t.Errorf(".gitignore does not name %s", f)
		}
	}
}
