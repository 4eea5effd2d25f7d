// Package need stops a test that lacks something from outside the
// repository — a database server, a program on PATH. By default the test
// fails, saying how to get what is missing; a developer without it may ask
// for a skip instead:
//
//	NOWSERVING_SKIP_DB=1       no PostgreSQL, MariaDB or Galera (DB)
//	NOWSERVING_SKIP_MISSING=1  no sox, espeak-ng, tmux, chromium (Program)
//
// Neither is honoured when CI is set: there a missing server or program
// always fails.
package need

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The variables that turn a failure into a skip.
const (
	SkipDB      = "NOWSERVING_SKIP_DB"
	SkipMissing = "NOWSERVING_SKIP_MISSING"
)

// DB stops a test whose database server cannot be used; why says what is
// wrong and how to get it ("PostgreSQL at …: connection refused").
func DB(t testing.TB, why string) {
	t.Helper()
	stop(t, SkipDB, why)
}

// Program returns the path of the first of names found on PATH; none
// found, it stops the test, naming deb, the Debian package that ships it.
func Program(t testing.TB, deb string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	stop(t, SkipMissing, fmt.Sprintf("%s not installed (apt-get install %s)", strings.Join(names, " or "), deb))
	return ""
}

// stop skips the test when env is 1 outside CI, and fails it otherwise.
func stop(t testing.TB, env, why string) {
	t.Helper()
	if os.Getenv(env) == "1" && os.Getenv("CI") == "" {
		t.Skipf("%s (%s=1)", why, env)
	}
	t.Fatalf("%s; set %s=1 to skip outside CI", why, env)
}
