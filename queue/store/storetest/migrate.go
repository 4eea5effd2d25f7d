package storetest

import (
	"context"
	"sync"
	"testing"

	"github.com/nowserving/nowserving/queue/store"
)

// MigrateConcurrently opens four stores of driver (as store.Open names it)
// on one empty database at once, as daemons starting together do: every
// one must succeed; a fifth store opened after them migrates once more
// (nothing left to do), and the schema must end with every migration the
// store embeds recorded once.
func MigrateConcurrently(t *testing.T, driver, dsn string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			s, err := store.Open(context.Background(), driver, dsn, store.Opts{MaxConns: 2})
			if err != nil {
				errs <- err
				return
			}
			errs <- s.Close()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s, err := store.Open(t.Context(), driver, dsn, store.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	ms, err := s.Dialect().Schema()
	if err != nil || len(ms) == 0 {
		t.Fatalf("embedded migrations: %v, %v", ms, err)
	}
	want := ms[len(ms)-1].Version
	if v, err := s.Version(t.Context()); err != nil || v != want {
		t.Errorf("schema version %d, %v; want %d", v, err, want)
	}
	var n int
	if err := s.DB().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM schema_migrations").Scan(&n); err != nil || n != len(ms) {
		t.Errorf("%d migrations recorded, %v; want %d", n, err, len(ms))
	}
}
