package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestFeedHoldsNoLockAcrossReads: the event feed holds its lock across no
// store read, so a slow store stalls neither a committer's publication nor
// the subscribers. Daemon b follows daemon a on one store, and the test
// holds one of b's reads at the store at a time: the tickets b's waiting
// order reads to follow a's ticket (the follower publishing it into b's
// feed), then the old events a subscriber replays from the store. While
// each read waits, b's committer still commits and publishes a ticket,
// and b's live subscriber still receives it. Run it with -race.
func TestFeedHoldsNoLockAcrossReads(t *testing.T) {
	store := storetest.SQLite(t)
	held := &heldStore{Store: store}
	clock := storetest.NewClock(time.Date(2026, 11, 30, 9, 0, 0, 0, storetest.Shanghai))
	a, b := followingEngine(t, store, clock), followingEngine(t, held, clock)
	// Generous: these wait on events, not on the store's speed; a lock
	// held across the read would make them wait until release.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	n := 0
	issue := func(e *queue.Engine) <-chan queue.Ticket {
		n++
		r := queue.IssueRequest{Request: queue.Request{Site: "hq", Device: "kiosk", Key: fmt.Sprint(n)}, Service: "A"}
		out := make(chan queue.Ticket, 1)
		go func() {
			tk, err := e.Issue(ctx, r)
			if err != nil {
				t.Errorf("issue %s: %v", r.Key, err)
			}
			out <- tk
		}()
		return out
	}
	got := func(what string, c <-chan queue.Ticket) queue.Ticket {
		t.Helper()
		select {
		case tk := <-c:
			return tk
		case <-ctx.Done():
			t.Fatalf("%s: no answer while a read waited at the store", what)
			return queue.Ticket{}
		}
	}
	first := got("b's first ticket", issue(b)) // b uses the site: its order follows a's events
	sub, err := b.Subscribe("hq", first.Version)
	if err != nil {
		t.Fatal(err)
	}

	// b's waiting order is there before a writes: an order built after
	// (a build that failed on a loaded machine is retried at a later use)
	// reads a's ticket with the rest and leaves the follower nothing to
	// read. (One built while the follower read a's ticket's events, which
	// once made this test wait its 2 minutes in CI, reads it then:
	// TestFeedReadsForOrderBuiltDuringRead.)
	if !poll.Within(time.Minute, 10*time.Millisecond, func() bool { _, ok := b.OrderPosition(first); return ok }) {
		t.Fatal("b's waiting order was never built")
	}
	// The follower reads a's ticket for b's waiting order, and waits.
	waiting, release := held.hold(func(call string, arg any) bool {
		f, ok := arg.(queue.Filter)
		return call == "Find" && ok && len(f.IDs) > 0
	})
	t.Cleanup(release)
	go inUse(ctx, b, first, waiting)
	fromA := got("a's ticket", issue(a))
	wait(ctx, t, waiting, "b's follower reading a's ticket")
	mine := got("b's ticket while its follower's read waits", issue(b))
	receive(ctx, t, sub, mine.Version, "b's subscriber while its follower's read waits")
	release()
	for _, tk := range []queue.Ticket{first, fromA, mine} {
		orderAgrees(ctx, t, b, store, tk)
	}

	// A subscriber from the start replays from the store (the feed keeps
	// 2 to 4 events), and waits there.
	for range 4 {
		got("b's ticket", issue(b))
	}
	waiting, release = held.hold(func(call string, arg any) bool {
		q, ok := arg.(queue.EventsQuery)
		return call == "Events" && ok && q.After == 0
	})
	t.Cleanup(release)
	old, err := b.Subscribe("hq", 0)
	if err != nil {
		t.Fatal(err)
	}
	replayed := make(chan []queue.Event, 1)
	go func() {
		evs, err := old.Next(ctx)
		if err != nil {
			t.Errorf("replay: %v", err)
		}
		replayed <- evs
	}()
	wait(ctx, t, waiting, "the subscriber's replay")
	mine = got("b's ticket while a subscriber's replay waits", issue(b))
	receive(ctx, t, sub, mine.Version, "b's live subscriber while another's replay waits")
	release()
	select {
	case evs := <-replayed:
		if len(evs) == 0 || evs[0].Version != 1 {
			t.Errorf("replay from 0 delivered %d events, first %v", len(evs), evs)
		}
	case <-ctx.Done():
		t.Fatal("the replay did not end once released")
	}
}

// TestFeedReadsForOrderBuiltDuringRead: a waiting order built while the
// follower read other daemons' events without what the order needs (it
// was not in use when the read began) follows them by reading their
// tickets, as it would have, instead of being dropped and built again
// from every waiting ticket of the site. On a loaded machine this is how
// TestFeedHoldsNoLockAcrossReads waited for a read of a's ticket that
// never came: b's follower had begun a read before b's order was built,
// and a's ticket came in with it.
func TestFeedReadsForOrderBuiltDuringRead(t *testing.T) {
	store := storetest.SQLite(t)
	held := &heldStore{Store: store}
	clock := storetest.NewClock(time.Date(2026, 11, 30, 9, 0, 0, 0, storetest.Shanghai))
	a, b := followingEngine(t, store, clock), followingEngine(t, held, clock)
	followed := make(chan []queue.Event, 16)
	b.OnFollow(func(_ string, evs []queue.Event) {
		select {
		case followed <- evs:
		default:
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	issue := func(key string) queue.Ticket {
		t.Helper()
		tk, err := a.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: "hq", Device: "kiosk", Key: key}, Service: "A"})
		if err != nil {
			t.Fatalf("issue %s: %v", key, err)
		}
		return tk
	}

	// b has not used the site: its follower reads a's first ticket's
	// events for the feed alone, and waits.
	events, releaseEvents := held.hold(func(call string, arg any) bool {
		q, ok := arg.(queue.EventsQuery)
		return call == "Events" && ok && q.After == 0
	})
	t.Cleanup(releaseEvents)
	first := issue("1")
	wait(ctx, t, events, "b's follower reading a's first event")
	// Meanwhile b uses the site: its order is built, then a issues again.
	if !poll.Within(time.Minute, 10*time.Millisecond, func() bool { _, ok := b.OrderPosition(first); return ok }) {
		t.Fatal("b's waiting order was never built")
	}
	inUseDone := make(chan struct{})
	defer close(inUseDone)
	go inUse(ctx, b, first, inUseDone)
	second := issue("2")
	// The read, once let go, brings both tickets' events.
	tickets, releaseTickets := held.hold(func(call string, arg any) bool {
		f, ok := arg.(queue.Filter)
		return call == "Find" && ok && slices.Contains(f.IDs, second.ID)
	})
	t.Cleanup(releaseTickets)
	releaseEvents()
	select {
	case <-tickets:
	case evs := <-followed:
		t.Fatalf("b's order took events %d-%d without reading their tickets: dropped, to be built again from all", evs[0].Version, evs[len(evs)-1].Version)
	case <-ctx.Done():
		t.Fatal("b's follower never read a's tickets")
	}
	releaseTickets()
	for _, tk := range []queue.Ticket{first, second} {
		orderAgrees(ctx, t, b, store, tk)
	}
}

// followingEngine is a daemon on s that follows the others on its store
// fast, with a small feed.
func followingEngine(t *testing.T, s queue.Store, clock *storetest.Clock) *queue.Engine {
	t.Helper()
	return storetest.StartEngine(t, queue.Opts{Store: s, Sites: []queue.Site{storetest.TestSite()}, Clock: clock.Now,
		Follow: true, PollInterval: 5 * time.Millisecond, PollIdle: 5 * time.Millisecond,
		FeedSize: 2, StoreTimeout: 5 * time.Minute})
}

// inUse asks e where tk stands until done is closed: a daemon drops the
// waiting order of a site it has not used for 10 s, and stops reading for
// it, however slow the machine.
func inUse(ctx context.Context, e *queue.Engine, tk queue.Ticket, done <-chan struct{}) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		e.OrderPosition(tk)
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func wait(ctx context.Context, t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-ctx.Done():
		t.Fatalf("%s never came to the store", what)
	}
}

// receive takes sub's events until version v.
func receive(ctx context.Context, t *testing.T, sub *queue.Subscription, v int64, what string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		for sub.Version() < v {
			if _, err := sub.Next(ctx); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-ctx.Done():
		t.Fatalf("%s: version %d never delivered", what, v)
	}
}

// orderAgrees waits for e's waiting order to place tk where store
// counts it.
func orderAgrees(ctx context.Context, t *testing.T, e *queue.Engine, store queue.Store, tk queue.Ticket) {
	t.Helper()
	want, err := storeAhead(ctx, store, tk)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if p, ok := e.OrderPosition(tk); ok && p.Ahead == want {
			return
		}
		select {
		case <-ctx.Done():
			p, ok := e.OrderPosition(tk)
			t.Fatalf("order position of %s: %d ahead (available %v), the store counts %d", tk.Number, p.Ahead, ok, want)
		case <-time.After(time.Millisecond):
		}
	}
}

// storeAhead counts the tickets ahead of tk in the store.
func storeAhead(ctx context.Context, s queue.Store, tk queue.Ticket) (int, error) {
	var n int
	err := s.View(ctx, func(ctx context.Context, tx queue.Tx) error {
		cur, err := tx.Ticket(ctx, tk.ID)
		if err != nil {
			return err
		}
		n, err = tx.Ahead(ctx, cur)
		return err
	})
	return n, err
}

// heldStore passes every call through to its store, but holds one read
// (a call of a View transaction that a test chooses) until the test
// releases it.
type heldStore struct {
	queue.Store
	mu       sync.Mutex
	match    func(call string, arg any) bool
	waiting  chan struct{}
	released chan struct{}
}

// hold makes the next read that match accepts wait until release is
// called; waiting is closed once it waits.
func (s *heldStore) hold(match func(call string, arg any) bool) (waiting <-chan struct{}, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.match, s.waiting, s.released = match, make(chan struct{}), make(chan struct{})
	released := s.released
	return s.waiting, sync.OnceFunc(func() { close(released) })
}

func (s *heldStore) View(ctx context.Context, fn func(ctx context.Context, tx queue.Tx) error) error {
	return s.Store.View(ctx, func(ctx context.Context, tx queue.Tx) error { return fn(ctx, heldTx{tx, s}) })
}

// wait holds the call when it is the one to hold.
func (s *heldStore) wait(ctx context.Context, call string, arg any) error {
	s.mu.Lock()
	if s.match == nil || !s.match(call, arg) {
		s.mu.Unlock()
		return nil
	}
	waiting, released := s.waiting, s.released
	s.match = nil
	s.mu.Unlock()
	close(waiting)
	select {
	case <-released:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type heldTx struct {
	queue.Tx
	s *heldStore
}

func (tx heldTx) Find(ctx context.Context, f queue.Filter) ([]queue.Ticket, error) {
	if err := tx.s.wait(ctx, "Find", f); err != nil {
		return nil, err
	}
	return tx.Tx.Find(ctx, f)
}

func (tx heldTx) Events(ctx context.Context, q queue.EventsQuery) ([]queue.Event, error) {
	if err := tx.s.wait(ctx, "Events", q); err != nil {
		return nil, err
	}
	return tx.Tx.Events(ctx, q)
}
