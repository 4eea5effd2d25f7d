package storetest

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// BenchNextSeqInsert measures the raw issue transaction on s: upsert the
// day counter, insert the ticket, append its event, commit durably; one
// transaction per operation, from clients parallel clients (16 in DESIGN
// §1's figures). It reports tickets/s.
func BenchNextSeqInsert(b *testing.B, s queue.Store, clients int) {
	var client atomic.Int64
	// RunParallel starts parallelism × GOMAXPROCS goroutines.
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism(max(1, (clients+procs-1)/procs))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		device := fmt.Sprintf("kiosk-%d", client.Add(1))
		i := 0
		for pb.Next() {
			i++
			service := []string{"A", "B", "C"}[i%3]
			err := s.Update(context.Background(), func(ctx context.Context, tx queue.Tx) error {
				seq, err := tx.NextSeq(ctx, queue.DayKey{Site: "bench", Service: service, Day: txDay}, 1)
				if err != nil {
					return err
				}
				at := txBase.Add(time.Duration(seq) * time.Millisecond)
				tk := &queue.Ticket{Site: "bench", Service: service, Queue: service, Day: txDay, Seq: seq,
					Number: fmt.Sprintf("%s%04d", service, seq), Class: queue.ClassNormal, Status: queue.StatusWaiting,
					Rank: 20, SortKey: int64(seq) * 1024, IssuedAt: at, WaitingSince: at,
					Device: device, IdemKey: fmt.Sprintf("%s-%d", device, i)}
				if err := tx.InsertTicket(ctx, tk); err != nil {
					return err
				}
				return appendEvent(ctx, tx, &queue.Event{Site: "bench", Type: queue.EventIssued, TicketID: tk.ID,
					Number: tk.Number, Service: service, Class: tk.Class, Status: tk.Status, Actor: device, At: at})
			})
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	if d := time.Since(start); d > 0 {
		b.ReportMetric(float64(b.N)/d.Seconds(), "tickets/s")
	}
}
