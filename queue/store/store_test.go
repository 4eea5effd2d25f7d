package store_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store"
)

func TestGuess(t *testing.T) {
	cases := []struct{ dsn, driver, rest string }{
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
		d, r := store.Guess(c.dsn)
		if d != c.driver || r != c.rest {
			t.Errorf("Guess(%q) = %q, %q; want %q, %q", c.dsn, d, r, c.driver, c.rest)
		}
	}
}

func TestOpen(t *testing.T) {
	s, err := store.Open(t.Context(), "sqlite", filepath.Join(t.TempDir(), "x.db"), store.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.Version(t.Context()); err != nil || v < 1 {
		t.Errorf("Version = %d, %v", v, err)
	}
	if _, err := store.Open(t.Context(), "oracle", "x", store.Opts{}); !errors.Is(err, queue.ErrBadRequest) {
		t.Errorf("Open(oracle) error = %v, want ErrBadRequest", err)
	}
}
