package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// benchSite is one site with one service and enough counters for the
// call-next benchmark.
func benchSite(counters int) queue.Site {
	s := queue.Site{ID: "bench", Location: shanghai, Rollover: 4 * time.Hour,
		Services: []queue.Service{{Code: "A", Prefix: "A", Width: 6}}}
	for i := 1; i <= counters; i++ {
		s.Counters = append(s.Counters, queue.Counter{ID: fmt.Sprint(i), Services: []queue.CounterService{{Service: "A", Weight: 1}}})
	}
	return s
}

// runClients spreads b.N operations over clients goroutines and reports
// the rate, latency percentiles and the process's CPU time per operation
// (the engine and the store's driver; with a database server, not the
// server's).
func runClients(b *testing.B, clients int, op func(ctx context.Context, client, i int) error) {
	b.Helper()
	ctx := context.Background()
	var next atomic.Int64
	lat := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	errc := make(chan error, clients)
	b.ResetTimer()
	cpu0, cpuOK := processCPU()
	start := time.Now()
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for {
				i := int(next.Add(1))
				if i > b.N {
					return
				}
				t0 := time.Now()
				if err := op(ctx, c, i); err != nil {
					errc <- err
					return
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		}(c)
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, _ := processCPU()
	b.StopTimer()
	close(errc)
	for err := range errc {
		b.Fatal(err)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	if len(all) > 0 {
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
		b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
		if cpuOK {
			b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		}
	}
}

// BenchEngineIssue measures Engine.Issue over store s with concurrent
// clients, each request with its own idempotency key, through group commit.
func BenchEngineIssue(b *testing.B, s queue.Store, clients int) {
	e, err := queue.New(queue.Opts{Store: s, Sites: []queue.Site{benchSite(1)}, Clock: NewClock(monday9).Now, Batch: 64})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(context.Background())
	runClients(b, clients, func(ctx context.Context, c, i int) error {
		_, err := e.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: "bench", Device: fmt.Sprintf("kiosk-%d", c), Key: fmt.Sprint(i)}, Service: "A"})
		return err
	})
}

// BenchEngineCallNext measures Engine.CallNext followed by Start (so the
// next call completes the ticket) with one client per counter, over a
// queue filled beforehand.
func BenchEngineCallNext(b *testing.B, s queue.Store, counters int) {
	e, err := queue.New(queue.Opts{Store: s, Sites: []queue.Site{benchSite(counters)}, Clock: NewClock(monday9).Now, Batch: 64})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(context.Background())
	ctx := context.Background()
	var fill sync.WaitGroup
	var next atomic.Int64
	for c := 0; c < 16; c++ {
		fill.Go(func() {
			for int(next.Add(1)) <= b.N {
				if _, err := e.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: "bench"}, Service: "A"}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	fill.Wait()
	runClients(b, counters, func(ctx context.Context, c, i int) error {
		r := queue.CounterRequest{Request: queue.Request{Site: "bench", Device: "keypad"}, Counter: fmt.Sprint(c + 1)}
		if _, err := e.CallNext(ctx, r); err != nil {
			return err
		}
		_, err := e.Start(ctx, r)
		return err
	})
}
