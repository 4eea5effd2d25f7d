package postgres_test

import (
	"context"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
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

// TestMigrateConcurrent: four daemons starting together on an empty
// database; the schema ends at 0005_event_context.
func TestMigrateConcurrent(t *testing.T) {
	storetest.MigrateConcurrently(t, storetest.PostgresDSN(t), func(ctx context.Context, dsn string, n int) (*sqlstore.Store, error) {
		s, err := postgres.Open(ctx, dsn, postgres.Opts{MaxConns: n})
		if err != nil {
			return nil, err
		}
		return s.Store, nil
	}, 5)
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
