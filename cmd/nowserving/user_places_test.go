package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runWithInput runs the root command with args and stdin as its standard
// input, and returns what it wrote.
func runWithInput(t testing.TB, stdin string, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// TestUserAddChecksPlaces: `user add --config` refuses a site or counter
// the configuration does not have, naming the ones it has, before it asks
// for the password or opens the database; one it has is accepted.
func TestUserAddChecksPlaces(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join("..", "..", "testdata", "hospital.yaml")
	db := filepath.Join(t.TempDir(), "users.db")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"counter", []string{"--counter", "9"}, `staff: counter "9": no such counter at the account's sites (counters at hospital: 1, 2, 3, 4, 5)`},
		{"counter at the site", []string{"--site", "hospital", "--counter", "9"}, `counter "9": no such counter`},
		{"site", []string{"--site", "bank", "--counter", "1"}, `staff: site "bank": no such site (sites: hospital)`},
	} {
		args := append([]string{"user", "add", "zhou", "--config", cfg, "--db", db}, c.args...)
		out, err := runWithInput(t, "zhou-pass-1\n", args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one containing %q", c.name, err, c.want)
		}
		if strings.Contains(out, "Password") {
			t.Errorf("%s: asked for the password before refusing:\n%s", c.name, out)
		}
		if _, err := os.Stat(db); err == nil {
			t.Fatalf("%s: the database was created for a refused account", c.name)
		}
	}
	out, err := runWithInput(t, "zhou-pass-1\n", "user", "add", "zhou", "--site", "hospital", "--counter", "5", "--config", cfg, "--db", db)
	if err != nil || !strings.Contains(out, "account zhou (counter) created") {
		t.Fatalf("a counter the configuration has: err %v\n%s", err, out)
	}
}
