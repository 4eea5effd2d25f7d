package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// gateStore holds its first Update, once armed, until the gate opens: the
// committer is busy while requests queue up behind it.
type gateStore struct {
	queue.Store
	armed   chan struct{} // closed: the next Update waits
	entered chan struct{} // closed when it does
	gate    chan struct{}
	once    sync.Once
}

func (g *gateStore) Update(ctx context.Context, fn func(ctx context.Context, tx queue.Tx) error) error {
	select {
	case <-g.armed:
		g.once.Do(func() { close(g.entered); <-g.gate })
	default:
	}
	return g.Store.Update(ctx, fn)
}

// testCountersFirst queues a hundred kiosk tickets behind a transaction in
// flight, then a counter's call-next: the call goes in the next batch, on
// its own, in front of the kiosks that were waiting before it.
func testCountersFirst(t *testing.T, open func(t *testing.T) queue.Store) {
	g := &gateStore{Store: open(t), armed: make(chan struct{}), entered: make(chan struct{}), gate: make(chan struct{})}
	en := &env{t: t, ctx: context.Background(), clock: NewClock(monday9), store: g}
	en.start([]queue.Site{TestSite()})
	en.issue("A", queue.ClassNormal)
	close(g.armed)
	var wg sync.WaitGroup
	wg.Go(func() { en.issue("A", queue.ClassNormal) }) // the transaction in flight
	<-g.entered
	const kiosks = 100
	for i := 0; i < kiosks; i++ {
		wg.Go(func() {
			if _, err := en.e.Issue(en.ctx, queue.IssueRequest{Request: en.req(), Service: "E"}); err != nil {
				t.Errorf("issue: %v", err)
			}
		})
	}
	time.Sleep(100 * time.Millisecond) // the kiosks queue behind the gate
	var called queue.Ticket
	wg.Go(func() { called = en.next("1") })
	time.Sleep(20 * time.Millisecond)
	close(g.gate)
	wg.Wait()
	evs, err := en.e.Events(en.ctx, "hq", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var after int
	var seen bool
	for _, ev := range evs {
		switch {
		case ev.Type == queue.EventCalled && ev.TicketID == called.ID:
			seen = true
		case seen && ev.Type == queue.EventIssued && ev.Service == "E":
			after++
		}
	}
	// One batch of 32 may hold the call with 31 kiosks: the others after.
	if !seen {
		t.Fatalf("no CALLED event of %s", called.Number)
	}
	if want := kiosks - 31; after < want {
		t.Fatalf("call-next committed before %d of the %d kiosk tickets queued ahead of it, want at least %d", after, kiosks, want)
	}
}
