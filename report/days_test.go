package report

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// countingStore counts the events its reads return.
type countingStore struct {
	queue.Store
	events *atomic.Int64
}

func (s countingStore) View(ctx context.Context, fn func(ctx context.Context, tx queue.Tx) error) error {
	return s.Store.View(ctx, func(ctx context.Context, tx queue.Tx) error { return fn(ctx, countingTx{tx, s.events}) })
}

type countingTx struct {
	queue.Tx
	events *atomic.Int64
}

func (t countingTx) Events(ctx context.Context, q queue.EventsQuery) ([]queue.Event, error) {
	evs, err := t.Tx.Events(ctx, q)
	t.events.Add(int64(len(evs)))
	return evs, err
}

// TestReadsOnlyItsDays: a report of one day of a long log reads that
// day's events (and at most a page past them, and a few to find where the
// day begins), not the whole log, and its figures are that day's.
func TestReadsOnlyItsDays(t *testing.T) {
	site := testSite(t)
	read := &atomic.Int64{}
	st := countingStore{storetest.SQLite(t), read}
	c := storetest.FixedClock(time.Time{})
	eng := storetest.StartEngine(t, queue.Opts{Store: st, Sites: []queue.Site{site}, Clock: c.Now})
	const days, perDay = 50, 50
	first := time.Date(2026, 3, 2, 9, 0, 0, 0, site.Location)
	for d := range days {
		c.Set(first.AddDate(0, 0, d))
		var wg sync.WaitGroup
		for i := range perDay {
			wg.Go(func() {
				if _, err := eng.Issue(t.Context(), queue.IssueRequest{Request: queue.Request{Site: "clinic", Device: "kiosk", Key: fmt.Sprint(d, "-", i)}, Service: "A"}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	if total := int64(days * perDay); total < 2*pageSize {
		t.Fatalf("the log of %d events is too short to tell", total)
	}
	read.Store(0)
	day := first.AddDate(0, 0, days/2).Format(time.DateOnly)
	r, err := Build(t.Context(), eng, "clinic", day, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Total.Issued != perDay {
		t.Errorf("report of %s: %d issued, want %d", day, r.Total.Issued, perDay)
	}
	if n := read.Load(); n > pageSize+2*perDay+20 {
		t.Errorf("report of one day read %d events of %d", n, days*perDay)
	}
}
