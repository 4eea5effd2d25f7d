package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Probe proves that the store can write now, as /readyz needs: in one
// read-write transaction on the writer connection it upserts daemon's row
// of the health table (migration 0004) with the probe time, and commits.
// A read-only database file or server, a full disk and a server that does
// not answer within ctx all fail it, where a read would succeed. Its error
// wraps the queue error the driver's is classified as (queue.ErrUnavailable
// for most of these) or the context's.
//
// On SQLite the probe shares the one writer connection with the engine:
// give ctx a short deadline (the store timeout) so a slow probe cannot hold
// the writer, and do not probe more often than readiness needs.
func (s *Store) Probe(ctx context.Context, daemon string) error {
	return s.inTx(ctx, plainTx{write: true, begin: "probe: begin", commit: "probe: commit"}, func(stx *sql.Tx) error {
		q := s.d.upsert("health", []string{"daemon"}, []string{"probed_ms"})
		_, err := stx.ExecContext(ctx, q, daemon, time.Now().UnixMilli())
		return s.wrap("probe: write health row", err)
	})
}

// CheckSchema returns an error unless the database's schema is at the
// newest migration this binary embeds (or past it, written by a newer
// daemon that kept it compatible).
func (s *Store) CheckSchema(ctx context.Context) error {
	v, err := s.Version(ctx)
	if err != nil {
		return err
	}
	ms, err := s.d.Schema()
	if err != nil {
		return err
	}
	if n := len(ms); n > 0 && v < ms[n-1].Version {
		return fmt.Errorf("%s: schema at version %d, this binary wants %d", s.d.Name, v, ms[n-1].Version)
	}
	return nil
}
