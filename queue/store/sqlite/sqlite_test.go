package sqlite_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	msqlite "modernc.org/sqlite"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

func open(t testing.TB) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "test.db"), sqlite.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) queue.Store { return open(t) })
}

func TestMigrateIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	// Several stores open the same new file at once, then again.
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := sqlite.Open(context.Background(), path, sqlite.Opts{})
			if err != nil {
				errs <- err
				return
			}
			errs <- s.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s, err := sqlite.Open(t.Context(), path, sqlite.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	v, err := s.Version(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if v != 5 {
		t.Errorf("schema version %d, want 5 (0001_init, 0002_event_call_count, 0003_target_index, 0004_health, 0005_event_context)", v)
	}
}

func TestOpenRefusesMemory(t *testing.T) {
	for _, dsn := range []string{"", ":memory:", "file::memory:?cache=shared", "file:x?mode=memory"} {
		if s, err := sqlite.Open(t.Context(), dsn, sqlite.Opts{}); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded", dsn)
		}
	}
}

func TestPragmas(t *testing.T) {
	s := open(t)
	for pragma, want := range map[string]string{"journal_mode": "wal", "synchronous": "2", "foreign_keys": "1", "busy_timeout": "10000"} {
		var got string
		if err := s.DB().QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %s, want %s", pragma, got, want)
		}
	}
}

func TestErrorsHideDriver(t *testing.T) {
	storetest.ErrorsHideDriver(t, open(t), (*msqlite.Error)(nil))
}
