// Command sqliteraw measures the raw rate of SQLite with synchronous=FULL
// at "one transaction per ticket": CLIENTS goroutines, each transaction the
// day-counter upsert and the ticket insert (the minimal SQL of an issue),
// on the store's own schema and connection (queue/store/sqlite: WAL, FULL,
// one writer connection), for a duration. It prints one line:
//
//	sqlite-full clients 64 tx 12345 seconds 10.0 tx/s 1234.5
//
// bench/compare.sh runs it beside the daemon.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nowserving/nowserving/queue/store/sqlite"
)

func main() {
	file := flag.String("db", "sqliteraw.db", "SQLite file (created and migrated)")
	clients := flag.Int("clients", 64, "concurrent clients")
	d := flag.Duration("duration", 10*time.Second, "how long to run")
	flag.Parse()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, *file, sqlite.Opts{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	db := s.DB()
	var n atomic.Int64
	var wg sync.WaitGroup
	deadline := time.Now().Add(*d)
	start := time.Now()
	for c := 0; c < *clients; c++ {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				tx, err := db.BeginTx(ctx, nil)
				if err != nil {
					log.Fatal(err)
				}
				var last int64
				err = tx.QueryRowContext(ctx, `INSERT INTO day_counters (site, service, day, last) VALUES ('bench', 'A', '2026-11-30', 1)
					ON CONFLICT (site, service, day) DO UPDATE SET last = last + 1 RETURNING last`).Scan(&last)
				if err == nil {
					_, err = tx.ExecContext(ctx, `INSERT INTO tickets (site, service, queue, day, seq, number, class, status, rnk, sort_key,
						counter, target_counter, call_count, noshow_count, issued_at, waiting_since, called_at, serving_at, finished_at, device, idem_key)
						VALUES ('bench', 'A', 'A', '2026-11-30', ?, ?, 'normal', 'WAITING', 20, ?, '', '', 0, 0, 1764464400000, 1764464400000, 0, 0, 0, ?, ?)`,
						last, fmt.Sprintf("A%06d", last), last<<20, fmt.Sprintf("kiosk-%d", c), fmt.Sprint(last))
				}
				if err == nil {
					err = tx.Commit()
				}
				if err != nil {
					log.Fatal(err)
				}
				n.Add(1)
			}
		})
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	fmt.Printf("sqlite-full clients %d tx %d seconds %.1f tx/s %.1f\n", *clients, n.Load(), el, float64(n.Load())/el)
}
