package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// gateStore holds its first Update, once armed, until the gate opens: the
// committer is busy while requests queue up behind it.
type gateStore struct {
	queue.Store
	armed   chan struct{} // closed: the next Update waits
	entered chan struct{} // closed when it does
	gate    chan struct{}
	once    sync.Once
	queued  atomic.Int64 // requests queued in the engine (Opts.Queued)
}

func (g *gateStore) Update(ctx context.Context, fn func(ctx context.Context, tx queue.Tx) error) error {
	select {
	case <-g.armed:
		g.once.Do(func() { close(g.entered); <-g.gate })
	default:
	}
	return g.Store.Update(ctx, fn)
}

// gated starts an engine over s behind a gateStore, issues a first ticket
// of service first, then one of A (in wg) that holds the committer in its
// transaction until the gate opens.
func gated(t *testing.T, s queue.Store, first string, wg *sync.WaitGroup) (*env, *gateStore) {
	return gatedSite(t, s, TestSite(), nil, first, wg)
}

// gatedSite is gated on site, with setup, when not nil, run before the
// first ticket.
func gatedSite(t *testing.T, s queue.Store, site queue.Site, setup func(en *env), first string, wg *sync.WaitGroup) (*env, *gateStore) {
	g := &gateStore{Store: s, armed: make(chan struct{}), entered: make(chan struct{}), gate: make(chan struct{})}
	en := &env{t: t, ctx: context.Background(), clock: NewClock(monday9), store: g, queued: func() { g.queued.Add(1) }}
	en.start([]queue.Site{site})
	if setup != nil {
		setup(en)
	}
	en.issue(first, queue.ClassNormal)
	close(g.armed)
	wg.Go(func() { en.issue("A", queue.ClassNormal) }) // the transaction in flight
	<-g.entered
	return en, g
}

// testCountersFirst queues a hundred kiosk tickets behind a transaction in
// flight, then a counter's call-next: the call goes in the next batch, on
// its own, in front of the kiosks that were waiting before it.
func testCountersFirst(t *testing.T, open func(t *testing.T) queue.Store) {
	var wg sync.WaitGroup
	en, g := gated(t, open(t), "A", &wg)
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
	evs := en.events()
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

// countStore counts the calls its transactions make, by name: "Update"
// (its own), "NextSeq", "GiveBackSeq", "InsertTicket", "InsertTickets",
// "Savepoint" and "RollbackTo NAME" (per savepoint name).
type countStore struct {
	queue.Store
	mu sync.Mutex
	n  map[string]int
}

func newCountStore(s queue.Store) *countStore { return &countStore{Store: s, n: map[string]int{}} }

func (s *countStore) add(name string) {
	s.mu.Lock()
	s.n[name]++
	s.mu.Unlock()
}

// count is how many calls of name were made so far.
func (s *countStore) count(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[name]
}

func (s *countStore) Update(ctx context.Context, fn func(ctx context.Context, tx queue.Tx) error) error {
	s.add("Update")
	return s.Store.Update(ctx, func(ctx context.Context, tx queue.Tx) error { return fn(ctx, countTx{tx, s}) })
}

type countTx struct {
	queue.Tx
	s *countStore
}

func (t countTx) Savepoint(ctx context.Context, name string) error {
	t.s.add("Savepoint")
	return t.Tx.Savepoint(ctx, name)
}

func (t countTx) RollbackTo(ctx context.Context, name string) error {
	t.s.add("RollbackTo " + name)
	return t.Tx.RollbackTo(ctx, name)
}

func (t countTx) NextSeq(ctx context.Context, k queue.DayKey, n int) (int, error) {
	t.s.add("NextSeq")
	return t.Tx.NextSeq(ctx, k, n)
}

func (t countTx) GiveBackSeq(ctx context.Context, k queue.DayKey, n int) error {
	t.s.add("GiveBackSeq")
	return t.Tx.GiveBackSeq(ctx, k, n)
}

func (t countTx) InsertTicket(ctx context.Context, tk *queue.Ticket) error {
	t.s.add("InsertTicket")
	return t.Tx.InsertTicket(ctx, tk)
}

func (t countTx) InsertTickets(ctx context.Context, ts []*queue.Ticket) error {
	t.s.add("InsertTickets")
	return t.Tx.InsertTickets(ctx, ts)
}

// testCapInBatch queues, behind a transaction in flight, kiosk tickets of
// C beyond its daily cap among tickets of A, so they share a batch. Kiosk
// tickets run without a savepoint of their own; the cap is found once the
// number is taken from the batch's span, so the refused request gives it
// back to the span, which gives the numbers left back to the store: no
// rollback, no transaction run again. The refused tickets take no number
// and leave no event: once the cap is raised, C's next number follows the
// last one issued.
func testCapInBatch(t *testing.T, open func(t *testing.T) queue.Store) {
	rs := newCountStore(open(t))
	var wg sync.WaitGroup
	en, g := gated(t, rs, "C", &wg)
	var mu sync.Mutex
	got := map[string]int{}
	for i := 0; i < 8; i++ {
		svc := []string{"A", "C"}[i%2]
		wg.Go(func() {
			_, err := en.e.Issue(en.ctx, queue.IssueRequest{Request: en.req(), Service: svc})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				got[svc+" issued"]++
			case errors.Is(err, queue.ErrServiceFull):
				got[svc+" full"]++
			default:
				t.Errorf("issue %s: %v", svc, err)
			}
		})
	}
	time.Sleep(100 * time.Millisecond) // the kiosks queue behind the gate
	close(g.gate)
	wg.Wait()
	if want := map[string]int{"A issued": 4, "C issued": 2, "C full": 2}; !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if rs.count("GiveBackSeq") == 0 {
		t.Errorf("no numbers given back: the refused tickets did not share a batch with the others")
	}
	if n := rs.count("RollbackTo b") + rs.count("RollbackTo r0"); n != 0 {
		t.Errorf("%d rollbacks to a savepoint, want none: a refusal by the cap gives its number back", n)
	}
	site := TestSite()
	site.Services[2].DailyCap = 10
	if err := en.e.SetSites([]queue.Site{site}); err != nil {
		t.Fatal(err)
	}
	if n := en.issue("C", queue.ClassNormal).Number; n != "C04" {
		t.Errorf("C after the cap was raised: %s, want C04 (a refused ticket took no number)", n)
	}
	if issued := issuedNumbers(t, en.events()); len(issued) != 9 {
		t.Errorf("ISSUED events %v, want 9 (C01, A001, 4 A and 2 C in the batch, C04)", issued)
	}
}

// testNumbersInBatch queues, behind a transaction in flight, ten kiosk
// tickets of A, two kiosk requests of A the engine refuses before they take
// a number (a class not given at issue), two retries of A tickets issued
// before (answered from their stored results, A001 and A002) and two of E: the batch takes
// the numbers of A and of E in one statement each and gives back those it
// did not use, so A's numbers go on without a gap, before and after it.
func testNumbersInBatch(t *testing.T, open func(t *testing.T) queue.Store) {
	cs := newCountStore(open(t))
	reserves := true // the store has TicketIDs
	if err := cs.Store.Update(context.Background(), func(ctx context.Context, tx queue.Tx) error {
		_, err := tx.TicketIDs(ctx, 1)
		reserves = !errors.Is(err, errors.ErrUnsupported)
		if !reserves {
			return nil
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// The store takes a number and ids in one statement (NextSeqIDs): a
	// batch of one inserts its ticket with InsertTickets too. (Rolled back.)
	together, rollback := false, errors.New("probe rolled back")
	if err := cs.Store.Update(context.Background(), func(ctx context.Context, tx queue.Tx) error {
		_, _, err := tx.NextSeqIDs(ctx, queue.DayKey{Site: "probe", Service: "A", Day: "2000-01-01"}, 1, 1)
		together = err == nil
		return rollback
	}); !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	en, g := gated(t, cs, "A", &wg)  // A001, and A002 in flight
	var retries []queue.IssueRequest // of A001 and A002: gated's keys k1, k2
	for _, k := range []string{"k1", "k2"} {
		retries = append(retries, queue.IssueRequest{Request: queue.Request{Site: "hq", Device: "test", Key: k}, Service: "A", Class: queue.ClassNormal})
	}
	var mu sync.Mutex
	var got []string
	run := func(r queue.IssueRequest, refused bool) {
		wg.Go(func() {
			tk, err := en.e.Issue(en.ctx, r)
			if refused != (err != nil) {
				t.Errorf("issue %s %s: %v, want refused %v", r.Service, r.Class, err, refused)
			}
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				got = append(got, tk.Number)
			}
		})
	}
	for i := range 10 {
		class := queue.ClassNormal
		if i == 8 {
			class = queue.ClassRevisit
		}
		run(queue.IssueRequest{Request: en.req(), Service: "A", Class: class}, false)
		if i == 3 || i == 6 {
			run(queue.IssueRequest{Request: en.req(), Service: "A", Class: queue.ClassReentered}, true)
		}
	}
	for _, r := range retries {
		run(r, false)
	}
	run(queue.IssueRequest{Request: en.req(), Service: "E"}, false)
	run(queue.IssueRequest{Request: en.req(), Service: "E"}, false)
	time.Sleep(100 * time.Millisecond) // the kiosks queue behind the gate
	seqs, ones, manys := cs.count("NextSeq")+cs.count("GiveBackSeq"), cs.count("InsertTicket"), cs.count("InsertTickets")
	close(g.gate)
	wg.Wait()
	if n := cs.count("NextSeq") + cs.count("GiveBackSeq") - seqs; n > 6 {
		t.Errorf("%d NextSeq and GiveBackSeq statements for the batch of 16 requests (A002's own, and two at most each for A and E), want at most 6", n)
	}
	// The 12 new tickets of the batch: with InsertTickets where the store
	// reserves ids, those waiting sent before the revisit ticket is placed
	// among the waiting, before each retry (which reads its ticket) and at
	// the end, so 4 at most, whatever order the requests came in; else one
	// InsertTicket each. A002's own is a batch of one: an InsertTickets
	// where its id came with its number.
	one, many := cs.count("InsertTicket")-ones, cs.count("InsertTickets")-manys
	if together {
		if one != 0 || many < 2 || many > 5 {
			t.Errorf("%d InsertTicket and %d InsertTickets, want 0 and 2..5 (A002's and the batch's)", one, many)
		}
	} else if reserves {
		if one != 1 || many < 1 || many > 4 {
			t.Errorf("%d InsertTicket and %d InsertTickets, want 1 (A002's) and 1..4", one, many)
		}
	} else if one != 13 || many != 0 {
		t.Errorf("%d InsertTicket and %d InsertTickets, want 13 and 0", one, many)
	}
	next := en.issue("A", queue.ClassNormal).Number
	slices.Sort(got)
	want := []string{"A001", "A002", "A003", "A004", "A005", "A006", "A007", "A008", "A009", "A010", "A011", "A012", "E001", "E002"}
	if !slices.Equal(got, want) || next != "A013" {
		t.Errorf("numbers of the batch %v, then %s; want %v, then A013", got, next, want)
	}
}

// testCheckInInBatch queues, behind a transaction in flight, kiosk tickets
// of A around a check-in of an appointment of A and a kiosk request refused
// before it takes a number. The check-in runs in a savepoint of its own,
// takes its number by a statement of its own and inserts its ticket at once,
// between the kiosks' spans and deferred inserts: every ticket still gets a
// number and an id of its own, and the store's Check finds nothing wrong.
func testCheckInInBatch(t *testing.T, open func(t *testing.T) queue.Store) {
	s := open(t)
	cs := newCountStore(s)
	var wg sync.WaitGroup
	var booking queue.Booking
	en, g := gatedSite(t, cs, BookingSite(), func(en *env) {
		if _, err := en.e.GenerateSlots(en.ctx); err != nil {
			t.Fatalf("generate slots: %v", err)
		}
		booking = en.mustBook(en.slot("dr-li", monday9, 9, 15).ID, "p1")
	}, "A", &wg)
	var mu sync.Mutex
	var got []queue.Ticket
	keep := func(tk queue.Ticket, err error, what string) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			t.Errorf("%s: %v", what, err)
			return
		}
		got = append(got, tk)
	}
	for i := range 6 {
		wg.Go(func() {
			tk, err := en.e.Issue(en.ctx, queue.IssueRequest{Request: en.req(), Service: "A", Class: queue.ClassNormal})
			keep(tk, err, "kiosk")
		})
		if i != 2 {
			continue
		}
		wg.Go(func() {
			ci, err := en.e.CheckIn(en.ctx, queue.BookingRequest{Request: en.req(), Code: booking.Code})
			keep(ci.Position.Ticket, err, "check-in")
		})
		wg.Go(func() {
			_, err := en.e.Issue(en.ctx, queue.IssueRequest{Request: en.req(), Service: "A", Class: queue.ClassReentered})
			if err == nil {
				t.Errorf("kiosk asking for class %s: issued, want refused", queue.ClassReentered)
			}
		})
	}
	time.Sleep(100 * time.Millisecond) // they queue behind the gate
	before := cs.count("Update")
	close(g.gate)
	wg.Wait()
	// The one in flight and the batch; a batch that failed (a ticket id
	// taken twice, say) would be applied again one request at a time.
	if n := cs.count("Update") - before; n > 2 {
		t.Errorf("%d transactions after the gate opened, want 2 (the one in flight, then the batch)", n)
	}
	ids, numbers := map[int64]bool{}, map[string]bool{}
	appointments := 0
	for _, tk := range got {
		txView(t, s, func(ctx context.Context, tx queue.Tx) error {
			stored, err := tx.Ticket(ctx, tk.ID)
			if err != nil || stored.Number != tk.Number || stored.Class != tk.Class {
				t.Errorf("ticket %s %s (id %d) as stored: %+v, %v", tk.Number, tk.Class, tk.ID, stored, err)
			}
			return nil
		})
		if ids[tk.ID] || numbers[tk.Number] {
			t.Errorf("ticket %s (id %d) shares its id or number with another of the batch", tk.Number, tk.ID)
		}
		ids[tk.ID], numbers[tk.Number] = true, true
		if tk.Class == queue.ClassAppointment {
			appointments++
		}
	}
	if len(got) != 7 || appointments != 1 {
		t.Errorf("%d tickets, %d of them appointments; want 7 and 1", len(got), appointments)
	}
	checkStore(t, s)
}

// checkStore fails t with the violations the store's Check finds, where
// it has one (the SQL stores).
func checkStore(t *testing.T, s queue.Store) {
	t.Helper()
	ss, ok := s.(txSQLStore)
	if !ok {
		return
	}
	r, err := ss.Check(t.Context(), sqlstore.CheckOpts{MaxViolations: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Errorf("violations after the batch:\n%s", strings.Join(r.Violations, "\n"))
	}
}

// testRedoInBatch queues, behind a transaction in flight and in this order
// (Opts.Queued), two kiosk tickets of A, a check-in of an appointment of A
// and a third kiosk ticket of A, where A's daily cap leaves room for two.
// The kiosks take their numbers from one span; the check-in, in a
// savepoint of its own, takes its number by a statement of its own, which
// seals the span, and the cap refuses it; the cap refuses the third kiosk
// too, which cannot give its number back to the sealed span: the
// transaction is rolled back and run again with a savepoint per request.
// Every request is answered as if it ran alone, A's numbers keep no gap
// and the events' versions none either.
func testRedoInBatch(t *testing.T, open func(t *testing.T) queue.Store) {
	s := open(t)
	cs := newCountStore(s)
	site := BookingSite()
	site.Services[0].DailyCap = 4 // A001, A002 (in flight), two more
	var wg sync.WaitGroup
	var booking queue.Booking
	en, g := gatedSite(t, cs, site, func(en *env) {
		if _, err := en.e.GenerateSlots(en.ctx); err != nil {
			t.Fatalf("generate slots: %v", err)
		}
		booking = en.mustBook(en.slot("dr-li", monday9, 9, 15).ID, "p1")
	}, "A", &wg)
	got := make([]string, 4) // the answers, in the batch's order
	send := func(i int, call func() (queue.Ticket, error)) {
		n := g.queued.Load()
		wg.Go(func() {
			tk, err := call()
			switch {
			case err == nil:
				got[i] = tk.Number
			case errors.Is(err, queue.ErrServiceFull):
				got[i] = "full"
			default:
				got[i] = err.Error()
			}
		})
		poll.Until(t, fmt.Sprintf("request %d queued", i), func() bool { return g.queued.Load() > n })
	}
	kiosk := func() (queue.Ticket, error) {
		return en.e.Issue(en.ctx, queue.IssueRequest{Request: en.req(), Service: "A"})
	}
	send(0, kiosk)
	send(1, kiosk)
	send(2, func() (queue.Ticket, error) {
		ci, err := en.e.CheckIn(en.ctx, queue.BookingRequest{Request: en.req(), Code: booking.Code})
		return ci.Position.Ticket, err
	})
	send(3, kiosk)
	updates, redone := cs.count("Update"), cs.count("RollbackTo r3")
	close(g.gate)
	wg.Wait()
	if want := []string{"A003", "A004", "full", "full"}; !slices.Equal(got, want) {
		t.Errorf("answers %v, want %v (kiosk, kiosk, check-in, kiosk)", got, want)
	}
	// The one in flight, then the batch twice; the third kiosk, in a
	// savepoint of its own the second time, rolled back to it.
	if n, r := cs.count("Update")-updates, cs.count("RollbackTo r3")-redone; n != 3 || r != 1 {
		t.Errorf("%d transactions and %d rollbacks to r3 after the gate opened, want 3 and 1: the batch was not run again", n, r)
	}
	site.Services[0].DailyCap = 10
	if err := en.e.SetSites([]queue.Site{site}); err != nil {
		t.Fatal(err)
	}
	if n := en.issue("A", queue.ClassNormal).Number; n != "A005" {
		t.Errorf("A after the cap was raised: %s, want A005 (the refused took no number)", n)
	}
	checkVersions(t, en.events(), []string{"A001", "A002", "A003", "A004", "A005"})
	checkStore(t, s)
}

// testBookingsInBatch queues, behind a transaction in flight and in this
// order, five bookings of Tuesday: p1 at dr-li 09:00, p2 at dr-li 09:15,
// p3 at dr-li 09:00 (full by then), p1 at dr-wu 09:00 (overlapping p1's
// dr-li 09:00) and p4 at vacc 09:00. Bookings run bare in a batch, without
// a savepoint each: the full slot is refused before it writes, so the
// batch goes on; the overlap is refused after it took its place, so the
// transaction is rolled back and run again with a savepoint per request,
// rolled back to the overlap's. Every answer is the one alone would get,
// and the places taken agree with the bookings (Check).
func testBookingsInBatch(t *testing.T, open func(t *testing.T) queue.Store) {
	s := open(t)
	cs := newCountStore(s)
	var wg sync.WaitGroup
	en, g := gatedSite(t, cs, BookingSite(), func(en *env) {
		if _, err := en.e.GenerateSlots(en.ctx); err != nil {
			t.Fatalf("generate slots: %v", err)
		}
	}, "A", &wg)
	asks := []struct {
		resource string
		mm       int
		patient  string
	}{{"dr-li", 0, "p1"}, {"dr-li", 15, "p2"}, {"dr-li", 0, "p3"}, {"dr-wu", 0, "p1"}, {"vacc", 0, "p4"}}
	got := make([]string, len(asks)) // the answers, in the batch's order
	for i, a := range asks {
		slot := en.slot(a.resource, tuesday, 9, a.mm).ID
		n := g.queued.Load()
		wg.Go(func() {
			_, err := en.book(slot, a.patient)
			switch {
			case err == nil:
				got[i] = "booked"
			case errors.Is(err, queue.ErrSlotFull):
				got[i] = "full"
			case errors.Is(err, queue.ErrOverlap):
				got[i] = "overlap"
			default:
				got[i] = err.Error()
			}
		})
		poll.Until(t, fmt.Sprintf("booking %d queued", i), func() bool { return g.queued.Load() > n })
	}
	updates, sps, redone := cs.count("Update"), cs.count("Savepoint"), cs.count("RollbackTo r3")
	close(g.gate)
	wg.Wait()
	if want := []string{"booked", "booked", "full", "overlap", "booked"}; !slices.Equal(got, want) {
		t.Errorf("answers %v, want %v", got, want)
	}
	// The one in flight, then the batch twice: bare, then a savepoint
	// for each of the five, the overlap's rolled back to.
	n, sp, r := cs.count("Update")-updates, cs.count("Savepoint")-sps, cs.count("RollbackTo r3")-redone
	if n != 3 || sp != len(asks) || r != 1 {
		t.Errorf("%d transactions, %d savepoints, %d rollbacks to r3 after the gate opened; want 3, %d, 1", n, sp, r, len(asks))
	}
	for _, c := range []struct {
		resource string
		want     int
	}{{"dr-li", 2}, {"dr-wu", 0}, {"vacc", 1}} {
		slots, err := en.e.Slots(en.ctx, "hq", c.resource, tuesday.Format(time.DateOnly))
		if err != nil {
			t.Fatal(err)
		}
		booked := 0
		for _, sl := range slots {
			booked += sl.Booked
		}
		if booked != c.want {
			t.Errorf("%s: %d places taken on Tuesday, want %d", c.resource, booked, c.want)
		}
	}
	checkStore(t, s)
}

// checkVersions fails t unless evs are numbered 1..len(evs) and their
// ISSUED events are of the numbers issued, in that order.
func checkVersions(t *testing.T, evs []queue.Event, issued []string) {
	t.Helper()
	if got := issuedNumbers(t, evs); !slices.Equal(got, issued) {
		t.Errorf("ISSUED events of %v, want %v", got, issued)
	}
}

// issuedNumbers fails t unless evs are numbered 1..len(evs), and returns
// the numbers of their ISSUED events, in order.
func issuedNumbers(t *testing.T, evs []queue.Event) []string {
	t.Helper()
	var got []string
	for i, ev := range evs {
		if ev.Version != int64(i+1) {
			t.Errorf("event %d (%s) has version %d, want %d", i, ev.Type, ev.Version, i+1)
		}
		if ev.Type == queue.EventIssued {
			got = append(got, ev.Number)
		}
	}
	return got
}
