package devices_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices"
	"github.com/nowserving/nowserving/devices/led"
	"github.com/nowserving/nowserving/devices/led/ledtest"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// BenchmarkBoardAfterDisplay: how much later than a subscriber of the same
// daemon (what a display's session is) an LED board shows a call, over 200
// calls: p50, p99 and the slowest, in milliseconds. Events of other daemons
// reach both through the same feed, so this is the board's delay on top of
// the cross-daemon one (storetest.BenchFollowDelay).
func BenchmarkBoardAfterDisplay(b *testing.B) {
	const calls = 200
	var all []time.Duration
	for range b.N {
		all = append(all, boardAfterDisplay(b, calls)...)
	}
	slices.Sort(all)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(storetest.Quantile(all, 0.5)), "p50_ms")
	b.ReportMetric(ms(storetest.Quantile(all, 0.99)), "p99_ms")
	b.ReportMetric(ms(all[len(all)-1]), "max_ms")
}

func boardAfterDisplay(b *testing.B, calls int) []time.Duration {
	eng, _ := newEngine(b)
	rec := ledtest.New()
	p := newPort(b, "line", textDriver(b, "{number}{text}"), rec.Dial)
	d := newDispatcher(b, eng, devices.Opts{Ports: []*led.Port{p},
		Boards: []devices.Board{{Port: p, Addr: 1, Site: "hospital", Counter: "1", Idle: "WELCOME"}}})
	run(b, d)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sub, err := eng.Subscribe("hospital", 0)
	if err != nil {
		b.Fatal(err)
	}
	seen := storetest.Arrivals(ctx, sub)
	r := queue.CounterRequest{Request: queue.Request{Site: "hospital", Device: "keypad-1"}, Counter: "1"}
	out := make([]time.Duration, 0, calls)
	for range calls {
		tk := issue(b, eng, "A", 1)[0]
		rec.Reset()
		if _, err := eng.CallNext(ctx, r); err != nil {
			b.Fatal(err)
		}
		want := "\x01" + tk.Number + "\n"
		if _, err := rec.WaitFor(ctx, func(f []byte) bool { return string(f) == want }); err != nil {
			b.Fatalf("board never showed %s: %v", tk.Number, err)
		}
		onBoard := time.Now()
		out = append(out, max(onBoard.Sub((<-seen).At), 0))
		if _, err := eng.Start(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	return out
}
