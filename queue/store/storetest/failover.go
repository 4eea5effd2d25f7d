package storetest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/logtest"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// Failover is a database failure under load that RunFailover plays: kiosks
// and keypads on daemons (engines) sharing a replicated database, the
// failure, the recovery a failover tool would make, and the database that
// survives, which the answers devices were given are checked against.
type Failover struct {
	// Daemons is how many daemons run, each with its store from DB.Open
	// (and notifier from DB.Notifier); device g uses daemon g modulo
	// Daemons. 0 means 1.
	Daemons int
	DB      Shared
	// Kiosks issue tickets, Keypads call and complete them; 0 means 30
	// and 5.
	Kiosks, Keypads int
	// Before is how long the load runs before Fail (0: 2 s), or before
	// Prelude, when set, which then runs PreludeFor before Fail (hold the
	// standby behind).
	Before     time.Duration
	Prelude    func(t testing.TB)
	PreludeFor time.Duration
	// Observe, when set, runs right before Fail, off its clock: a last
	// look at the database before it breaks.
	Observe func(t testing.TB)
	// Fail breaks the database (kill -9 a node, freeze it); the clock of
	// every figure starts when it returns, the database broken.
	Fail func(t testing.TB)
	// Recover, when set, runs RecoverAfter after the failure (promote
	// the standby).
	Recover      func(t testing.TB)
	RecoverAfter time.Duration
	// After is how long the load goes on after Fail and Recover (0: 5 s).
	After time.Duration
	// Survivor opens the store of the database that survived, for the
	// ledger's check and `check`'s.
	Survivor func(t *testing.T) *sqlstore.Store
}

// LedgerEntry is one ticket a kiosk was given: what it printed.
type LedgerEntry struct {
	Kiosk, Key string // the device and the request's idempotency key
	Daemon     int
	ID         int64
	Service    string
	Day        string
	Number     string
	// Sent is when the request that got the ticket was sent (the last
	// time, if it was sent again), At when its answer came, both since
	// Fail (negative: before it).
	Sent, At time.Duration
}

func (l LedgerEntry) String() string {
	return fmt.Sprintf("%s/%s %s (ticket %d, %s key %s, at %+.2fs)", l.Service, l.Day, l.Number, l.ID, l.Kiosk, l.Key, l.At.Seconds())
}

// FailoverResult is what RunFailover measured and found.
type FailoverResult struct {
	Acked      int // tickets acknowledged to kiosks
	AckedAfter int // of them, after Fail
	InDB       int // tickets of the site in the surviving database
	// Lost are acknowledged tickets the surviving database does not hold
	// (by their device and key), with or without their number.
	Lost []LedgerEntry
	// Renumbered are acknowledged tickets the database holds under
	// another number than the kiosk printed.
	Renumbered []string
	// Duplicates are the numbers given to two people or more, one line
	// each: an acknowledged number that another ledger entry holds too, or
	// that the database gives another ticket.
	Duplicates []string
	// FirstTicket is the time from Fail to the first ticket any kiosk got
	// after it; AllKiosks the time by which every kiosk had got one (0
	// with Stalled set).
	FirstTicket, AllKiosks time.Duration
	// DaemonKiosks is, per daemon, the time by which every kiosk on it had
	// got a ticket after Fail (0 while one of them has none).
	DaemonKiosks []time.Duration
	// Stalled are the kiosks that got no ticket after Fail.
	Stalled []string
	// Errors counts the errors devices were answered, by the code the
	// protocol sends for them (see WireCode), kiosks and keypads apart.
	Errors map[string]int
	// Samples is the first text of each error code; Spans when the first
	// and the last of them were answered, since Fail: how long devices saw
	// it.
	Samples map[string]string
	Spans   map[string][2]time.Duration
	// KeypadsBack is the time from Fail by which every keypad had an
	// answer (a success or a refusal by the rules) to a press it made
	// after Fail; 0 with KeypadsStalled set, the keypads that had none.
	KeypadsBack    time.Duration
	KeypadsStalled []string
	// DaemonErrors is how many lines the daemons logged at ERROR.
	DaemonErrors int
	// Check is `check` on the surviving database.
	Check sqlstore.Report
	// Ledger is every ticket the kiosks were given, in the order they
	// were; PreludeAt is when Prelude returned, before Fail (negative).
	Ledger    []LedgerEntry
	PreludeAt time.Duration
}

// AckedBetween counts the tickets acknowledged from from to to (since Fail).
func (r FailoverResult) AckedBetween(from, to time.Duration) int {
	n := 0
	for _, l := range r.Ledger {
		if l.At >= from && l.At < to {
			n++
		}
	}
	return n
}

// Log writes the figures to t's log, one line each.
func (r FailoverResult) Log(t testing.TB) {
	t.Helper()
	t.Logf("acknowledged %d tickets (%d after the failure), %d in the surviving database", r.Acked, r.AckedAfter, r.InDB)
	t.Logf("lost %d, given to two people %d, renumbered %d", len(r.Lost), len(r.Duplicates), len(r.Renumbered))
	switch {
	case r.AckedAfter == 0:
		t.Logf("no ticket after the failure")
	case len(r.Stalled) > 0:
		t.Logf("first ticket after the failure at +%.2fs; %d of the kiosks got none: %s", r.FirstTicket.Seconds(), len(r.Stalled), strings.Join(r.Stalled, ", "))
	default:
		t.Logf("first ticket after the failure at +%.2fs, every kiosk had one by +%.2fs", r.FirstTicket.Seconds(), r.AllKiosks.Seconds())
	}
	if len(r.DaemonKiosks) > 1 {
		for i, d := range r.DaemonKiosks {
			t.Logf("daemon %d: every kiosk on it had a ticket again by +%.2fs", i+1, d.Seconds())
		}
	}
	if len(r.KeypadsStalled) > 0 {
		t.Logf("%d of the keypads got no answer after the failure: %s", len(r.KeypadsStalled), strings.Join(r.KeypadsStalled, ", "))
	} else {
		t.Logf("every keypad had an answer again by +%.2fs", r.KeypadsBack.Seconds())
	}
	for _, k := range slices.Sorted(maps.Keys(r.Errors)) {
		sp := r.Spans[k]
		t.Logf("errors %s: %d, from %+.2fs to %+.2fs (first: %s)", k, r.Errors[k], sp[0].Seconds(), sp[1].Seconds(), r.Samples[k])
	}
	t.Logf("daemons logged %d lines at ERROR; check: %d violations", r.DaemonErrors, len(r.Check.Violations))
	for i, l := range r.Lost {
		if i == 10 {
			t.Logf("... %d more lost", len(r.Lost)-i)
			break
		}
		t.Logf("lost: %s", l)
	}
	for i, d := range r.Duplicates {
		if i == 10 {
			t.Logf("... %d more numbers given twice", len(r.Duplicates)-i)
			break
		}
		t.Logf("given twice: %s", d)
	}
	for _, v := range r.Check.Violations {
		t.Logf("check: %s", v)
	}
}

// WireCode names the code the device protocol answers err with, as
// protocol's statusOf maps the engine's errors (a refusal by its
// sentinel's text): what a kiosk or keypad saw.
func WireCode(err error) string {
	switch {
	case errors.Is(err, queue.ErrClosed):
		return "0x31 server busy (shutting down)"
	case errors.Is(err, queue.ErrConflict), errors.Is(err, queue.ErrAborted):
		return "0x31 server busy"
	case errors.Is(err, queue.ErrUnavailable):
		return "0x41 store unavailable"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "0x31 server busy: request timed out"
	case queue.IsRefusal(err):
		// "queue: counter busy", without the detail after it.
		what, detail, _ := strings.Cut(err.Error(), ": ")
		what, _, _ = strings.Cut(detail, ": ")
		return "refused: " + what
	}
	return "0x40 internal error"
}

// failoverSite is the load site with every service's numbers wide enough
// for a busy day.
func failoverSite() queue.Site {
	s := loadSite()
	for i := range s.Services {
		s.Services[i].Width = 5
	}
	return s
}

// Device pacing: a kiosk prints a ticket every kioskPause (30 kiosks make
// some 300 a second, as in a busy hall); a device answered an error tries
// again after retryPause, with the same request (and key).
const (
	kioskPause  = 100 * time.Millisecond
	keypadPause = 50 * time.Millisecond
	retryPause  = 200 * time.Millisecond
)

// failoverRun is the shared state of one RunFailover.
type failoverRun struct {
	t       *testing.T
	start   time.Time // when Fail returned
	mu      sync.Mutex
	ledger  []ledgerEntry
	errs    map[string]int
	samples map[string]sample
	lastErr map[string]time.Time
	// pressed is when each keypad's presses were sent and answered.
	pressed map[string][][2]time.Time
}

// ledgerEntry is a LedgerEntry with its times as read.
type ledgerEntry struct {
	LedgerEntry
	sent, at time.Time
}

// sample is the first error of a code.
type sample struct {
	at  time.Time
	err error
}

// since is the time from Fail to now.
func (r *failoverRun) since() time.Duration {
	return time.Since(r.start)
}

func (r *failoverRun) fail(who string, err error) {
	code := who + " " + WireCode(err)
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs[code]++
	if _, ok := r.samples[code]; !ok {
		r.samples[code] = sample{now, err}
	}
	r.lastErr[code] = now
}

// answered notes a keypad press sent at sent and answered now.
func (r *failoverRun) answered(keypad string, sent time.Time) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pressed[keypad] = append(r.pressed[keypad], [2]time.Time{sent, now})
}

// RunFailover runs f: Kiosks issuing and Keypads calling on the daemons
// for Before, then Fail, Recover RecoverAfter later, the load for After
// more, and then checks every ticket a kiosk was given against the
// surviving database. It reports what it measured; the caller asserts.
func RunFailover(t *testing.T, f Failover) FailoverResult {
	t.Helper()
	f.Daemons = cmp.Or(f.Daemons, 1)
	f.Kiosks, f.Keypads = cmp.Or(f.Kiosks, 30), cmp.Or(f.Keypads, 5)
	f.Before, f.After = cmp.Or(f.Before, 2*time.Second), cmp.Or(f.After, 5*time.Second)
	site := failoverSite()
	clock := NewClock(monday9)
	var logs logtest.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	engines := make([]*queue.Engine, f.Daemons)
	for i := range engines {
		o := queue.Opts{Store: f.DB.Open(t, i), Sites: []queue.Site{site}, Clock: clock.Now,
			Batch: 64, Committers: 4, Follow: true, Logger: log}
		if f.DB.Notifier != nil {
			o.Notifier = f.DB.Notifier(t, i)
		}
		e := StartEngine(t, o)
		engines[i] = e
	}
	r := &failoverRun{t: t, errs: map[string]int{}, samples: map[string]sample{}, lastErr: map[string]time.Time{}, pressed: map[string][][2]time.Time{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range f.Kiosks {
		wg.Go(func() { r.kiosk(stop, engines[g%len(engines)], g%len(engines), fmt.Sprintf("kiosk-%d", g), site) })
	}
	for c := range f.Keypads {
		id := site.Counters[c%len(site.Counters)].ID
		wg.Go(func() { r.keypad(stop, engines[c%len(engines)], site.ID, id) })
	}

	time.Sleep(f.Before)
	var prelude time.Time
	if f.Prelude != nil {
		f.Prelude(t)
		prelude = time.Now()
		time.Sleep(f.PreludeFor)
	}
	if f.Observe != nil {
		f.Observe(t)
	}
	began := time.Now()
	f.Fail(t)
	r.start = time.Now()
	t.Logf("failure at %s, made in %.3fs", r.start.Format("15:04:05.000"), r.start.Sub(began).Seconds())
	if f.Recover != nil {
		time.Sleep(f.RecoverAfter - r.since())
		f.Recover(t)
		t.Logf("recovered at +%.2fs", r.since().Seconds())
	}
	time.Sleep(f.After)
	close(stop)
	wg.Wait()
	start := r.start
	for i := range r.ledger {
		l := &r.ledger[i]
		l.Sent, l.At = l.sent.Sub(start), l.at.Sub(start)
	}
	res := r.check(f.Survivor(t), site)
	for code, s := range r.samples {
		res.Samples[code] = fmt.Sprintf("%+.2fs %v", s.at.Sub(start).Seconds(), s.err)
		res.Spans[code] = [2]time.Duration{s.at.Sub(start), r.lastErr[code].Sub(start)}
	}
	res.setKeypads(r.pressed, start)
	res.DaemonErrors = strings.Count(logs.String(), "level=ERROR")
	res.setKiosks(f.Kiosks, f.Daemons)
	if f.Prelude != nil {
		res.PreludeAt = prelude.Sub(start)
	}
	return res
}

// setKiosks sets FirstTicket, AllKiosks and Stalled from each kiosk's first
// ticket asked for after the failure (an answer just after it to a request
// sent before may have committed before it).
func (res *FailoverResult) setKiosks(n, daemons int) {
	first := map[string]time.Duration{}
	for _, l := range res.Ledger {
		if _, ok := first[l.Kiosk]; !ok && l.Sent >= 0 {
			first[l.Kiosk] = l.At
		}
	}
	res.FirstTicket = -1
	res.DaemonKiosks = make([]time.Duration, daemons)
	stalled := make([]bool, daemons)
	for g := range n {
		k := fmt.Sprintf("kiosk-%d", g)
		d, ok := first[k]
		if !ok {
			res.Stalled = append(res.Stalled, k)
			stalled[g%daemons] = true
			continue
		}
		res.DaemonKiosks[g%daemons] = max(res.DaemonKiosks[g%daemons], d)
		if res.FirstTicket < 0 || d < res.FirstTicket {
			res.FirstTicket = d
		}
		res.AllKiosks = max(res.AllKiosks, d)
	}
	if len(res.Stalled) > 0 {
		res.AllKiosks = 0
	}
	for i, s := range stalled {
		if s {
			res.DaemonKiosks[i] = 0
		}
	}
}

// setKeypads sets KeypadsBack and KeypadsStalled from each keypad's first
// press sent after start that was answered.
func (res *FailoverResult) setKeypads(pressed map[string][][2]time.Time, start time.Time) {
	for _, k := range slices.Sorted(maps.Keys(pressed)) {
		i := slices.IndexFunc(pressed[k], func(p [2]time.Time) bool { return !p[0].Before(start) })
		if i < 0 {
			res.KeypadsStalled = append(res.KeypadsStalled, k)
			continue
		}
		res.KeypadsBack = max(res.KeypadsBack, pressed[k][i][1].Sub(start))
	}
	if len(res.KeypadsStalled) > 0 {
		res.KeypadsBack = 0
	}
}

// kiosk issues tickets until stop, one every kioskPause, each request
// sent again after an error until it is answered; every answer goes in
// the ledger.
func (r *failoverRun) kiosk(stop <-chan struct{}, e *queue.Engine, daemon int, id string, site queue.Site) {
	for n := 1; ; n++ {
		key := fmt.Sprint(n)
		req := queue.IssueRequest{Request: queue.Request{Site: site.ID, Device: id, Key: key}, Service: site.Services[n%len(site.Services)].Code}
		for {
			select {
			case <-stop:
				return
			default:
			}
			sent := time.Now()
			tk, err := e.Issue(context.Background(), req)
			if err == nil {
				l := ledgerEntry{LedgerEntry{Kiosk: id, Key: key, Daemon: daemon, ID: tk.ID, Service: tk.Service, Day: tk.Day, Number: tk.Number}, sent, time.Now()}
				r.mu.Lock()
				r.ledger = append(r.ledger, l)
				r.mu.Unlock()
				break
			}
			r.fail("kiosk", err)
			if queue.IsRefusal(err) {
				break
			}
			if !pause(stop, retryPause) {
				return
			}
		}
		if !pause(stop, kioskPause) {
			return
		}
	}
}

// keypad calls its counter's next ticket, starts and completes it, again
// and again until stop, sending a request again after an error. The
// refusals a resent or repeated press may meet (nothing waiting, the
// counter already calling or idle) are no errors.
func (r *failoverRun) keypad(stop <-chan struct{}, e *queue.Engine, site, counter string) {
	n := 0
	press := func(op func(context.Context, queue.CounterRequest) (queue.Ticket, error), quiet ...error) bool {
		n++
		req := queue.CounterRequest{Request: queue.Request{Site: site, Device: "keypad-" + counter, Key: fmt.Sprint(n)}, Counter: counter}
		for {
			sent := time.Now()
			_, err := op(context.Background(), req)
			if err == nil || slices.ContainsFunc(quiet, func(q error) bool { return errors.Is(err, q) }) {
				r.answered(req.Device, sent)
				return pause(stop, keypadPause)
			}
			r.fail("keypad", err)
			if queue.IsRefusal(err) {
				r.answered(req.Device, sent)
				return pause(stop, keypadPause)
			}
			if !pause(stop, retryPause) {
				return false
			}
		}
	}
	for press(e.CallNext, queue.ErrNoneWaiting, queue.ErrCounterBusy) &&
		press(e.Start, queue.ErrCounterIdle, queue.ErrInvalidTransition) &&
		press(e.Complete, queue.ErrCounterIdle, queue.ErrInvalidTransition) {
	}
}

// pause waits d, or returns false at once when stop is closed.
func pause(stop <-chan struct{}, d time.Duration) bool {
	select {
	case <-stop:
		return false
	case <-time.After(d):
		return true
	}
}

// check compares the ledger with the tickets of the surviving database and
// runs `check` on it.
func (r *failoverRun) check(s *sqlstore.Store, site queue.Site) FailoverResult {
	t := r.t
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var tickets []queue.Ticket
	err := s.View(ctx, func(ctx context.Context, tx queue.Tx) error {
		var err error
		tickets, err = tx.Find(ctx, queue.Filter{Site: site.ID})
		return err
	})
	if err != nil {
		t.Fatalf("read the surviving database: %v", err)
	}
	res := FailoverResult{Acked: len(r.ledger), InDB: len(tickets), Errors: r.errs, Samples: map[string]string{}, Spans: map[string][2]time.Duration{}}
	for _, l := range r.ledger {
		res.Ledger = append(res.Ledger, l.LedgerEntry)
	}
	res.Check, err = s.Check(ctx, sqlstore.CheckOpts{MaxViolations: 50})
	if err != nil {
		t.Fatalf("check the surviving database: %v", err)
	}
	type number struct{ service, day, number string }
	type who struct{ device, key string }
	byNumber := map[number][]queue.Ticket{}
	byWho := map[who]queue.Ticket{}
	for _, tk := range tickets {
		n := number{tk.Service, tk.Day, tk.Number}
		byNumber[n] = append(byNumber[n], tk)
		byWho[who{tk.Device, tk.IdemKey}] = tk
	}
	// holders are the people each acknowledged number was given to: the
	// kiosks' ledger and the database's tickets, by device and key.
	holders := map[number]map[who]string{}
	for _, l := range res.Ledger {
		if l.At >= 0 {
			res.AckedAfter++
		}
		n := number{l.Service, l.Day, l.Number}
		if holders[n] == nil {
			holders[n] = map[who]string{}
		}
		holders[n][who{l.Kiosk, l.Key}] = "printed " + l.String()
		tk, ok := byWho[who{l.Kiosk, l.Key}]
		switch {
		case !ok:
			res.Lost = append(res.Lost, l)
		case tk.Number != l.Number || tk.Service != l.Service || tk.Day != l.Day:
			res.Renumbered = append(res.Renumbered, fmt.Sprintf("%s is %s/%s %s (ticket %d) in the database", l, tk.Service, tk.Day, tk.Number, tk.ID))
		}
	}
	for n, hs := range holders {
		for _, tk := range byNumber[n] {
			if _, ok := hs[who{tk.Device, tk.IdemKey}]; !ok {
				hs[who{tk.Device, tk.IdemKey}] = fmt.Sprintf("ticket %d of %s key %s in the database", tk.ID, tk.Device, tk.IdemKey)
			}
		}
		if len(hs) > 1 {
			res.Duplicates = append(res.Duplicates, fmt.Sprintf("%s/%s %s: %s", n.service, n.day, n.number, strings.Join(slices.Sorted(maps.Values(hs)), "; ")))
		}
	}
	slices.Sort(res.Duplicates)
	return res
}

// NoneTwice fails t when a number was given to two people.
func (r FailoverResult) NoneTwice(t testing.TB) {
	t.Helper()
	if len(r.Duplicates) > 0 {
		t.Errorf("%d numbers given to two people", len(r.Duplicates))
	}
	if len(r.Renumbered) > 0 {
		t.Errorf("%d acknowledged tickets are in the database under another number", len(r.Renumbered))
	}
}

// NoneLost fails t when an acknowledged ticket is missing from the
// surviving database, or `check` finds anything wrong there.
func (r FailoverResult) NoneLost(t testing.TB) {
	t.Helper()
	if len(r.Lost) > 0 {
		t.Errorf("%d acknowledged tickets lost", len(r.Lost))
	}
	if !r.Check.OK() {
		t.Errorf("check on the surviving database: %d violations", len(r.Check.Violations))
	}
}

// Flowing fails t unless every kiosk got a ticket within limit of the
// failure.
func (r FailoverResult) Flowing(t testing.TB, limit time.Duration) {
	t.Helper()
	switch {
	case r.AckedAfter == 0:
		t.Errorf("no ticket issued after the failure, want every kiosk's within %s", limit)
	case len(r.Stalled) > 0:
		t.Errorf("%d kiosks issued no ticket after the failure, want all within %s", len(r.Stalled), limit)
	case r.AllKiosks > limit:
		t.Errorf("every kiosk had a ticket again at +%.2fs after the failure, want within %s", r.AllKiosks.Seconds(), limit)
	}
}
