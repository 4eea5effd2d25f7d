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

// probeStore opens a store of one driver: migrated on dsn, then again on
// the read-only form of the same database.
type probeStore struct {
	name string
	// open returns a migrated store and the DSN of the same database
	// opened read-only.
	open func(t *testing.T) (s *sqlstore.Store, readOnly string)
	// reopen opens dsn without migrating.
	reopen func(ctx context.Context, dsn string) (*sqlstore.Store, error)
}

func probeStores() []probeStore {
	noMigrate := sqlstore.Opts{NoMigrate: true}
	return []probeStore{
		{"sqlite", func(t *testing.T) (*sqlstore.Store, string) {
			path := filepath.Join(t.TempDir(), "probe.db")
			s, err := sqlite.Open(t.Context(), path, sqlite.Opts{})
			if err != nil {
				t.Fatal(err)
			}
			return s.Store, "file:" + path + "?mode=ro"
		}, func(ctx context.Context, dsn string) (*sqlstore.Store, error) {
			s, err := sqlite.Open(ctx, dsn, noMigrate)
			if err != nil {
				return nil, err
			}
			return s.Store, nil
		}},
		{"postgres", func(t *testing.T) (*sqlstore.Store, string) {
			dsn := storetest.PostgresDSN(t)
			s, err := postgres.Open(t.Context(), dsn, postgres.Opts{})
			if err != nil {
				t.Fatal(err)
			}
			return s.Store, dsn + "&default_transaction_read_only=on"
		}, func(ctx context.Context, dsn string) (*sqlstore.Store, error) {
			s, err := postgres.Open(ctx, dsn, noMigrate)
			if err != nil {
				return nil, err
			}
			return s.Store, nil
		}},
		{"mysql", func(t *testing.T) (*sqlstore.Store, string) {
			dsn := storetest.MySQLDSN(t)
			s, err := mysql.Open(t.Context(), dsn, mysql.Opts{})
			if err != nil {
				t.Fatal(err)
			}
			sep := "?"
			if strings.Contains(dsn, "?") {
				sep = "&"
			}
			return s.Store, dsn + sep + "tx_read_only=1"
		}, func(ctx context.Context, dsn string) (*sqlstore.Store, error) {
			s, err := mysql.Open(ctx, dsn, noMigrate)
			if err != nil {
				return nil, err
			}
			return s.Store, nil
		}},
	}
}

// TestProbe: the probe writes its daemon's row; on a database that can
// only be read it fails while the schema check (a read) still passes.
func TestProbe(t *testing.T) {
	for _, ps := range probeStores() {
		t.Run(ps.name, func(t *testing.T) {
			s, readOnly := ps.open(t)
			defer s.Close()
			ctx := t.Context()
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

			ro, err := ps.reopen(ctx, readOnly)
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
	s, err := sqlite.Open(t.Context(), path, sqlite.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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
