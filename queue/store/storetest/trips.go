package storetest

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/internal/testkit/record"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/mysql"
	"github.com/nowserving/nowserving/queue/store/postgres"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// Trips are the most round trips to the database server one transaction
// of the engine may cost, once its statements are prepared: a kiosk's
// ticket alone, a group-committed batch of kiosk tickets (whatever its
// size, but BatchTicket more a ticket where the store inserts them one
// by one), a booking alone.
type Trips struct {
	Ticket, Batch, BatchTicket, Book int
}

// turnProxy forwards TCP connections to a database server and counts the
// round trips over all of them: the times the server began to answer after
// the client had sent something. Requests the client sends without waiting
// (a pipeline, a statement close with no reply) count as one.
type turnProxy struct {
	srv    *conntest.Server
	target string
	turns  atomic.Int64
}

func newTurnProxy(t testing.TB, target string) *turnProxy {
	t.Helper()
	p := &turnProxy{srv: conntest.Listen(t), target: target}
	p.srv.Serve(p.serve)
	return p
}

// serve forwards one connection, counting its turns.
func (p *turnProxy) serve(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	var sent atomic.Bool // the client spoke since the server last did
	done := make(chan struct{})
	go func() {
		defer close(done)
		conntest.Pump(s, c, func() { sent.Store(true) })
		s.Close()
	}()
	conntest.Pump(c, s, func() {
		if sent.Swap(false) {
			p.turns.Add(1)
		}
	})
	c.Close()
	<-done
}

// countingStore is a queue.Store whose read-write transactions note the
// round trips each cost (by proxy) and how many tickets and bookings it
// inserted. The engine's committer runs one transaction at a time.
type countingStore struct {
	queue.Store
	proxy *turnProxy
	txs   record.List[txTrips]
}

type txTrips struct{ tickets, bookings, turns int }

func (s *countingStore) Update(ctx context.Context, fn func(ctx context.Context, tx queue.Tx) error) error {
	var got txTrips
	before := s.proxy.turns.Load()
	err := s.Store.Update(ctx, func(ctx context.Context, tx queue.Tx) error {
		got = txTrips{}
		return fn(ctx, countingTx{Tx: tx, n: &got})
	})
	got.turns = int(s.proxy.turns.Load() - before)
	s.txs.Add(got)
	return err
}

// take returns the transactions noted since the last call.
func (s *countingStore) take() []txTrips { return s.txs.Take() }

type countingTx struct {
	queue.Tx
	n *txTrips
}

func (t countingTx) InsertTicket(ctx context.Context, tk *queue.Ticket) error {
	t.n.tickets++
	return t.Tx.InsertTicket(ctx, tk)
}

func (t countingTx) InsertTickets(ctx context.Context, ts []*queue.Ticket) error {
	t.n.tickets += len(ts)
	return t.Tx.InsertTickets(ctx, ts)
}

func (t countingTx) InsertBooking(ctx context.Context, b *queue.Booking) error {
	t.n.bookings++
	return t.Tx.InsertBooking(ctx, b)
}

// proxied opens a store of driver ("postgres" or "mysql") on a fresh
// database through a turn proxy.
func proxied(t *testing.T, name string) (queue.Store, *turnProxy) {
	t.Helper()
	addr, at := ServerAddr(t, name, dialectOf(t, name).dsn(t))
	p := newTurnProxy(t, addr)
	dsn, o := at(p.srv.Addr()), sqlstore.Opts{MaxConns: 20}
	switch name {
	case "postgres":
		return At(t, postgres.Open, dsn, o), p
	case "mysql":
		return At(t, mysql.Open, dsn, o), p
	}
	t.Fatalf("trips: no server driver %q", name)
	return nil, nil
}

// RunTrips counts the round trips of the engine's transactions on a
// server store of name ("postgres", "mysql") configured as a daemon runs
// it (following the other daemons, every site locked first), through a
// proxy in front of the server, and fails when one costs more than max:
// a kiosk's ticket alone, a batch of them, a booking alone (the fewest
// measured of each: the first run of a statement text may cost one more,
// to prepare it). It logs what it measured.
func RunTrips(t *testing.T, name string, max Trips) {
	inner, p := proxied(t, name)
	cs := &countingStore{Store: inner, proxy: p}
	clock := NewClock(monday9)
	e := StartEngine(t, queue.Opts{Store: cs, Sites: []queue.Site{BookingSite()}, Clock: clock.Now, Batch: 64,
		StoreTimeout: suiteStoreTimeout, Follow: true, PollInterval: time.Hour, PollIdle: time.Hour})
	if _, err := e.GenerateSlots(t.Context()); err != nil {
		t.Fatalf("generate slots: %v", err)
	}
	single, batch, booking := measureTrips(t, e, cs, max.BatchTicket)
	t.Logf("round trips: ticket alone %v, batch of tickets %v (less %d a ticket), booking alone %v", single, batch, max.BatchTicket, booking)
	for _, c := range []struct {
		what string
		got  []int
		max  int
	}{{"a kiosk's ticket alone", single, max.Ticket}, {"a batch of tickets", batch, max.Batch}, {"a booking alone", booking, max.Book}} {
		if len(c.got) == 0 {
			t.Errorf("no transaction of %s measured", c.what)
			continue
		}
		if got := slices.Min(c.got); got > c.max {
			t.Errorf("%s: %d round trips, want at most %d", c.what, got, c.max)
		}
	}
}

// measureTrips runs rounds of three kiosk tickets one after the other, a
// booking and 32 tickets at once, until it has seen three batches of
// tickets of a size seen before (20 rounds at most), and returns the round trips of each
// transaction of a ticket alone, a batch of tickets (less perTicket a
// ticket) and a booking alone, from the third round on.
func measureTrips(t *testing.T, e *queue.Engine, cs *countingStore, perTicket int) (single, batch, booking []int) {
	ctx := t.Context()
	slots, err := e.Slots(ctx, "hq", "vacc", tuesday.Format(time.DateOnly))
	if err != nil || len(slots) < 8 {
		t.Fatalf("slots of vacc: %d, %v", len(slots), err)
	}
	var n atomic.Int64
	req := func() queue.Request {
		return queue.Request{Site: "hq", Device: "kiosk", Key: fmt.Sprint("t", n.Add(1))}
	}
	issue := func() error {
		_, err := e.Issue(ctx, queue.IssueRequest{Request: req(), Service: "A"})
		return err
	}
	seen := map[int]bool{} // batch sizes
	for round := 0; round < 20 && len(batch) < 3; round++ {
		cs.take()
		errs := make(chan error, 36)
		for range 3 {
			errs <- issue()
		}
		_, _, err := e.Book(ctx, queue.BookRequest{Request: req(), Slot: slots[round%len(slots)].ID, Patient: fmt.Sprint("p", round)})
		errs <- err
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() { errs <- issue() })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, tx := range cs.take() {
			// The driver prepares the statements of the first rounds, and
			// a batch's whose size is new (multi-row texts).
			again := seen[tx.tickets]
			seen[tx.tickets] = true
			switch {
			case round < 2:
			case tx.bookings == 1 && tx.tickets == 0:
				booking = append(booking, tx.turns)
			case tx.tickets == 1 && tx.bookings == 0:
				single = append(single, tx.turns)
			case tx.tickets > 1 && again:
				batch = append(batch, tx.turns-perTicket*tx.tickets)
			}
		}
	}
	return single, batch, booking
}
