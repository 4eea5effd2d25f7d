package postgres_test

import (
	"context"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/postgres"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

func open(t testing.TB) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), storetest.PostgresDSN(t), postgres.Opts{MaxConns: 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) queue.Store { return open(t) })
}

func TestMigrateConcurrent(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := postgres.Open(context.Background(), dsn, postgres.Opts{MaxConns: 2})
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
	s, err := postgres.Open(t.Context(), dsn, postgres.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.Version(t.Context()); err != nil || v != 3 {
		t.Errorf("schema version %d, %v; want 3 (0001_init, 0002_event_call_count, 0003_target_index)", v, err)
	}
}

func TestUnreachable(t *testing.T) {
	_, err := postgres.Open(t.Context(), "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2", postgres.Opts{})
	if err == nil {
		t.Fatal("Open of a closed port succeeded")
	}
	if !errorsIs(err, queue.ErrUnavailable) {
		t.Errorf("Open of a closed port: %v, want ErrUnavailable", err)
	}
}

func TestErrorsHideDriver(t *testing.T) {
	storetest.ErrorsHideDriver(t, open(t), (*pgconn.PgError)(nil))
}
