package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/internal/testkit/parttest"
)

// testConfig writes yaml to site.yaml in a new temporary folder and loads
// it, the environment holding only env. yaml is a format: its first verb
// is the SQLite file (q.db in that folder), args fill the others.
func testConfig(t *testing.T, yaml string, env map[string]string, args ...any) *config.Config {
	t.Helper()
	return loadTestConfig(t, writeConfig(t, yaml, args...), env)
}

// writeConfig writes yaml, formatted as testConfig says, and returns the
// file's name.
func writeConfig(t *testing.T, yaml string, args ...any) string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "site.yaml")
	if err := os.WriteFile(file, fmt.Appendf(nil, yaml, append([]any{filepath.Join(dir, "q.db")}, args...)...), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// branchYAML is one site, branch, in a zone (the second verb) with one
// service (its code and English name, the third and fourth) at counter
// "1", on the SQLite file (the first).
const branchYAML = `store:
  driver: sqlite
  dsn: %q
sites:
  - id: branch
    timezone: %s
    services:
      - code: %s
        name: {en: %s}
    counters:
      - id: "1"
        services: [%[3]s]
`

// migratedBranch writes branchYAML, runs `nowserving migrate` on it and
// returns the file and its configuration.
func migratedBranch(t *testing.T, zone, service, name string) (string, *config.Config) {
	t.Helper()
	file := writeConfig(t, branchYAML, zone, service, name)
	if out, err := runCmd(t, "migrate", "--config", file); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	return file, loadTestConfig(t, file, nil)
}

// loadTestConfig loads the configuration file with env: its NOWSERVING_*
// overrides set in the process environment for the test (viper reads them
// there), the variables *_env keys name read from env alone.
func loadTestConfig(t *testing.T, file string, env map[string]string) *config.Config {
	t.Helper()
	for k, v := range env {
		if strings.HasPrefix(k, config.EnvPrefix) {
			t.Setenv(k, v)
		}
	}
	cfg, err := config.Load(config.Opts{File: file, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatalf("load config: %v", err)
	}
	return cfg
}

// runDaemon starts the daemon of cfg, silent, and stops it when the test
// ends (after the test's own defers), failing the test if run fails.
func runDaemon(t *testing.T, cfg *config.Config) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d, err := newDaemon(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		t.Fatalf("new daemon: %v", err)
	}
	t.Cleanup(cancel) // after run has ended
	parttest.Until(t, ctx, d.run)
	return d
}
