package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/config"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

func TestGuessDriver(t *testing.T) {
	cases := []struct {
		dsn    string
		driver config.Driver
		rest   string
	}{
		{"postgres://u@h/db?sslmode=disable", "postgres", "postgres://u@h/db?sslmode=disable"},
		{"postgresql://u@h/db", "postgres", "postgresql://u@h/db"},
		{"host=localhost dbname=ns", "postgres", "host=localhost dbname=ns"},
		{"root@tcp(127.0.0.1:3306)/ns", "mysql", "root@tcp(127.0.0.1:3306)/ns"},
		{"tcp(127.0.0.1:3306)/ns", "mysql", "tcp(127.0.0.1:3306)/ns"},
		{"host=/run/postgresql dbname=ns", "postgres", "host=/run/postgresql dbname=ns"},
		{"mysql://root@tcp(db:3306)/ns", "mysql", "root@tcp(db:3306)/ns"},
		{"sqlite://var/ns.db", "sqlite", "var/ns.db"},
		{"nowserving.db", "sqlite", "nowserving.db"},
		{"file:ns.db?_txlock=deferred", "sqlite", "file:ns.db?_txlock=deferred"},
	}
	for _, c := range cases {
		d, r, err := guessDriver(c.dsn)
		if err != nil || d != c.driver || r != c.rest {
			t.Errorf("guessDriver(%q) = %q, %q, %v; want %q, %q", c.dsn, d, r, err, c.driver, c.rest)
		}
	}
	// What lost its head or names another scheme is refused, not made a
	// SQLite file of that name.
	for _, dsn := range []string{"&search_path=year", "?sslmode=disable", "search_path=year", "redis://127.0.0.1:6379/0"} {
		if d, r, err := guessDriver(dsn); err == nil || !strings.Contains(err.Error(), "not a database nowserving knows") {
			t.Errorf("guessDriver(%q) = %q, %q, %v; want refused", dsn, d, r, err)
		}
	}
}

func TestOpenDriver(t *testing.T) {
	s, err := openDriver(t.Context(), "sqlite3", filepath.Join(t.TempDir(), "x.db"), sqlstore.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.Version(t.Context()); err != nil || v < 1 {
		t.Errorf("Version = %d, %v", v, err)
	}
	if _, err := openDriver(t.Context(), "oracle", "x", sqlstore.Opts{}); !errors.Is(err, queue.ErrBadRequest) {
		t.Errorf("openDriver(oracle) error = %v, want ErrBadRequest", err)
	}
}
