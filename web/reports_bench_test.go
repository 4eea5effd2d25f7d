package web

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/report"
)

// BenchmarkReport90Days renders the report page of 90 synthetic service
// days (a ticket every ten minutes from 09:00 to 12:00, each called,
// started and done at counter 5), the figures read through package report
// as the page reads them: first with no day summed (the event log), then
// with every day summed into the daily figures.
func BenchmarkReport90Days(b *testing.B) {
	e := newEnv(b, nil)
	ctx := context.Background()
	first := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	n := 0
	for day := range 90 {
		e.clock.Fix(first.AddDate(0, 0, day))
		for range 18 {
			n++
			req := queue.Request{Site: "main", Device: "kiosk", Key: fmt.Sprint("k", n)}
			if _, err := e.eng.Issue(ctx, queue.IssueRequest{Request: req, Service: "A"}); err != nil {
				b.Fatal(err)
			}
			cr := queue.CounterRequest{Request: queue.Request{Site: "main", Device: "keypad"}, Counter: "5"}
			for _, op := range []func(context.Context, queue.CounterRequest) (queue.Ticket, error){e.eng.CallNext, e.eng.Start, e.eng.Complete} {
				e.clock.Add(3 * time.Minute)
				if _, err := op(ctx, cr); err != nil {
					b.Fatal(err)
				}
			}
			e.clock.Add(time.Minute)
		}
	}
	site, err := e.eng.Site("main")
	if err != nil {
		b.Fatal(err)
	}
	p := ReportPeriod{Kind: "range", From: "2026-01-05", To: "2026-04-04"}
	render := func(b *testing.B) {
		for b.Loop() {
			pg, err := buildReport(ctx, e.eng, site, p, "en")
			if err != nil {
				b.Fatal(err)
			}
			if err := pg.render(io.Discard, true, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("log", render) // no day summed: the figures from the event log
	st, ok := e.eng.Store().(report.DailyWriter)
	if !ok {
		b.Fatal("the store keeps no daily figures")
	}
	now := first.AddDate(0, 0, 91).Add(3 * time.Hour)
	if next, more, err := report.SumDays(ctx, e.eng, st, "main", now, 400, nil); err != nil || more || next <= p.To {
		b.Fatalf("SumDays: %q %v %v", next, more, err)
	}
	b.Run("summed", render) // every day summed: the daily figures
}
