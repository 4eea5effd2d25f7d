package notify_test

import (
	"slices"
	"testing"
	"time"

	"github.com/nowserving/nowserving/logtest"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// BenchmarkAppend is the event writer's cost of the outbox: a
// transaction appending one event with no receiver taking it, with one and
// with two (their rows written in the transaction). The three stores are
// written in turn, one transaction each per round, and the median latency
// of each is reported (the machine is shared: medians, side by side).
func BenchmarkAppend(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			names := []string{"none", "1-receiver", "2-receivers"}
			stores := []*sqlstore.Store{
				be.db(b)(sqlstore.Opts{}),
				be.db(b)(sqlstore.Opts{Outbox: routes(map[string][]string{"his": {"CALLED"}})}),
				be.db(b)(sqlstore.Opts{Outbox: routes(map[string][]string{"his": {"CALLED"}, "sms": {"*"}})}),
			}
			took := make([][]time.Duration, len(stores))
			for b.Loop() {
				for i, s := range stores {
					t := time.Now()
					appendEvents(b, s, queue.EventCalled, 1)
					took[i] = append(took[i], time.Since(t))
				}
			}
			for i, d := range took {
				slices.Sort(d)
				b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, names[i]+"-median-ms")
			}
		})
	}
}

// BenchmarkDeliver is the throughput of one worker delivering to a webhook
// on loopback (batch 50, 4 at a time), from a full outbox.
func BenchmarkDeliver(b *testing.B) {
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			s := be.db(b)(sqlstore.Opts{Outbox: routes(map[string][]string{"his": {"CALLED"}})})
			for range b.N/100 + 1 {
				appendEvents(b, s, queue.EventCalled, 100)
			}
			h := newHook(b, "his-secret-0123456789")
			b.ResetTimer()
			began := time.Now()
			o := fast(s, h.receiver("his", "CALLED"))
			o.Logger = logtest.New()
			start(b, o)
			drained(b, s)
			b.ReportMetric(float64(len(h.deliveries()))/time.Since(began).Seconds(), "msgs/s")
		})
	}
}
