package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/nowserving/nowserving/queue/store/sqlite"
)

func newBenchRawCmd() *cobra.Command {
	var o rawOpts
	cmd := &cobra.Command{
		Use:   "raw",
		Short: "Measure raw SQLite with synchronous=FULL at one transaction per ticket, the floor bench issue is read against",
		Long: `raw runs no daemon: --clients goroutines take tickets for --duration straight
in the SQLite file --db (created and migrated: the store's own schema and
connections, WAL, synchronous=FULL, one writer), each ticket one transaction
of the minimal SQL of an issue (the day counter's upsert and the ticket's
insert). It prints one line, which bench/compare.sh sets beside the daemon's
rate on the same file system:

  sqlite-full clients 64 tx 12345 seconds 10.0 tx/s 1234.5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return benchRaw(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.file, "db", "raw.db", "SQLite file (created and migrated)")
	fl.IntVar(&o.clients, "clients", 64, "concurrent clients")
	fl.DurationVar(&o.duration, "duration", 10*time.Second, "how long to run")
	return cmd
}

// rawOpts are bench raw's flags.
type rawOpts struct {
	file     string
	clients  int
	duration time.Duration
}

// benchRaw runs o.clients clients taking tickets in o.file for o.duration
// and prints their rate to w.
func benchRaw(ctx context.Context, o rawOpts, w io.Writer) error {
	s, err := sqlite.Open(ctx, o.file, sqlite.Opts{})
	if err != nil {
		return fmt.Errorf("bench raw: %w", err)
	}
	defer s.Close()
	var n atomic.Int64
	g, ctx := errgroup.WithContext(ctx)
	start := time.Now()
	deadline := start.Add(o.duration)
	for c := range o.clients {
		g.Go(func() error {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if err := rawTicket(ctx, s.DB(), fmt.Sprintf("kiosk-%d", c)); err != nil {
					return fmt.Errorf("bench raw: %w", err)
				}
				n.Add(1)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	el := time.Since(start).Seconds()
	_, err = fmt.Fprintf(w, "sqlite-full clients %d tx %d seconds %.1f tx/s %.1f\n", o.clients, n.Load(), el, float64(n.Load())/el)
	return err
}

// rawTicket takes one ticket for device in one transaction: the day
// counter's upsert, then the ticket's insert.
func rawTicket(ctx context.Context, db *sql.DB, device string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	var last int64
	err = tx.QueryRowContext(ctx, `INSERT INTO day_counters (site, service, day, last) VALUES ('bench', 'A', '2026-11-30', 1)
		ON CONFLICT (site, service, day) DO UPDATE SET last = last + 1 RETURNING last`).Scan(&last)
	if err != nil {
		return fmt.Errorf("count: %w", err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO tickets (site, service, queue, day, seq, number, class, status, rnk, sort_key,
		counter, target_counter, call_count, noshow_count, issued_at, waiting_since, called_at, serving_at, finished_at, device, idem_key)
		VALUES ('bench', 'A', 'A', '2026-11-30', ?, ?, 'normal', 'WAITING', 20, ?, '', '', 0, 0, 1764464400000, 1764464400000, 0, 0, 0, ?, ?)`,
		last, fmt.Sprintf("A%06d", last), last<<20, device, fmt.Sprint(last))
	if err != nil {
		return fmt.Errorf("insert ticket: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}
