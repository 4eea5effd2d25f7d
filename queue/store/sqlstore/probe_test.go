package sqlstore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/postgres"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// probeStore is a store of one driver: dsns names a new database and the
// read-only form of the same one; open opens a DSN.
type probeStore struct {
	name string
	dsns func(t *testing.T) (dsn, readOnly string)
	open func(ctx context.Context, dsn string, opts sqlstore.Opts) (*sqlstore.Store, error)
}

// opener is a driver's Open giving the sqlstore.Store its store wraps.
func opener[S any](open func(context.Context, string, sqlstore.Opts) (*S, error), inner func(*S) *sqlstore.Store) func(context.Context, string, sqlstore.Opts) (*sqlstore.Store, error) {
	return func(ctx context.Context, dsn string, opts sqlstore.Opts) (*sqlstore.Store, error) {
		s, err := open(ctx, dsn, opts)
		if err != nil {
			return nil, err
		}
		return inner(s), nil
	}
}

func probeStores() []probeStore {
	return []probeStore{
		{"sqlite", func(t *testing.T) (string, string) {
			path := filepath.Join(t.TempDir(), "probe.db")
			return path, "file:" + path + "?mode=ro"
		}, opener(sqlite.Open, func(s *sqlite.Store) *sqlstore.Store { return s.Store })},
		{"postgres", func(t *testing.T) (string, string) {
			dsn := storetest.PostgresDSN(t)
			return dsn, dsn + "&default_transaction_read_only=on"
		}, opener(postgres.Open, func(s *postgres.Store) *sqlstore.Store { return s.Store })},
		{"mysql", func(t *testing.T) (string, string) {
			dsn := storetest.MySQLDSN(t)
			sep := "?"
			if strings.Contains(dsn, "?") {
				sep = "&"
			}
			return dsn, dsn + sep + "tx_read_only=1"
		}, opener(mysql.Open, func(s *mysql.Store) *sqlstore.Store { return s.Store })},
	}
}

// TestProbe: the probe writes its daemon's row; on a database that can
// only be read it fails while the schema check (a read) still passes.
func TestProbe(t *testing.T) {
	for _, ps := range probeStores() {
		t.Run(ps.name, func(t *testing.T) {
			ctx := t.Context()
			dsn, readOnly := ps.dsns(t)
			s, err := ps.open(ctx, dsn, sqlstore.Opts{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.CheckSchema(ctx); err != nil {
				t.Fatalf("check schema: %v", err)
			}
			for range 2 { // the second one updates the row
				if err := s.Probe(ctx, "host-a 0.0.0.0:7400"); err != nil {
					t.Fatalf("probe: %v", err)
				}
			}
			var n int
			var at int64
			if err := s.DB().QueryRowContext(ctx, s.Dialect().Rebind("SELECT COUNT(*), MAX(probed_ms) FROM health WHERE daemon = ?"),
				"host-a 0.0.0.0:7400").Scan(&n, &at); err != nil {
				t.Fatal(err)
			}
			if since := time.Since(time.UnixMilli(at)); n != 1 || since < 0 || since > time.Minute {
				t.Errorf("health rows %d, probed %s ago; want 1, just now", n, since)
			}

			ro, err := ps.open(ctx, readOnly, sqlstore.Opts{NoMigrate: true})
			if err != nil {
				t.Fatalf("open read-only: %v", err)
			}
			defer ro.Close()
			if err := ro.CheckSchema(ctx); err != nil {
				t.Errorf("read-only: check schema: %v", err)
			}
			if err := ro.Probe(ctx, "host-a 0.0.0.0:7400"); err == nil {
				t.Error("read-only: probe succeeded")
			} else {
				t.Logf("read-only: %v", err)
			}
		})
	}
}

// TestProbeLocked: on SQLite another process holding the write lock makes
// the probe fail at its deadline, not after the store's 10 s busy timeout.
func TestProbeLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locked.db")
	s := storetest.At(t, sqlite.Open, path, sqlite.Opts{})
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")

	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = s.Probe(ctx, "d")
	if took := time.Since(start); err == nil || took > 2*time.Second {
		t.Errorf("probe with the write lock held elsewhere: %v after %s; want an error within its deadline", err, took)
	}
}
