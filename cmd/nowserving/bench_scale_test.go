package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/config"
)

// TestScaleConfig: bench book --resources N --days D --write-config writes
// a configuration the daemon loads: site scale with N resources, nine in
// ten doctors of one place and the rest rooms of ten, D days ahead, and
// site branch for the other site's tickets.
func TestScaleConfig(t *testing.T) {
	c := scaleConfig(t, "--resources", "30", "--days", "3")
	if len(c.Sites) != 2 || c.Sites[0].ID != "scale" || c.Sites[1].ID != "branch" {
		t.Fatalf("sites %+v, want scale and branch", c.Sites)
	}
	doctors, rooms := 0, 0
	for _, r := range c.Sites[0].Resources {
		switch {
		case strings.HasPrefix(r.ID, "dr-") && r.Schedule.Capacity == 1:
			doctors++
		case strings.HasPrefix(r.ID, "room-") && r.Schedule.Capacity == 10:
			rooms++
		}
		if r.Schedule.DaysAhead != 3 {
			t.Errorf("%s: days_ahead %d, want 3", r.ID, r.Schedule.DaysAhead)
		}
	}
	if doctors != 27 || rooms != 3 {
		t.Errorf("%d doctors and %d rooms, want 27 and 3", doctors, rooms)
	}
}

// scaleConfig runs bench book with args and --write-config, in a
// temporary directory, and loads the configuration it writes as the
// daemon does, failing t if either fails.
func scaleConfig(t *testing.T, args ...string) *config.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scale.yaml")
	cmd := newBenchBookCmd()
	cmd.SetArgs(slices.Concat(args, []string{"--write-config", path, "--config-store-dsn", filepath.Join(t.TempDir(), "s.db")}))
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(config.Opts{File: path})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
