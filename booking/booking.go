// Package booking stands in front of the engine's appointments for the
// rush at booking opening (DESIGN §5a): free-slot lists served from memory
// and invalidated by the booking events, slots known to be full refused
// without a write (reopened by a cancel or an expiry; who holds such a
// slot is read once, so that a retry of the request that took a place gets
// its booking back), no more requests of a slot at the engine at a time
// than it has places (so the opening burst does not fill the queue other
// sites' kiosks wait in), and a per-patient rate limit answered before any
// database work. The database
// stays the one authority: every booking still goes through the engine's
// group commit and its conditional UPDATE; what is held here only saves
// round trips, and a stale entry can only refuse a request the database
// would have refused a moment earlier, or send it on.
package booking

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/nowserving/nowserving/follow"
	"github.com/nowserving/nowserving/internal/positive"
	"github.com/nowserving/nowserving/queue"
)

// Opts configures a Front.
type Opts struct {
	Engine *queue.Engine
	// Clock is the rate limit's clock (default the engine's).
	Clock  func() time.Time
	Logger *slog.Logger
	// CacheSlots bounds the slots the cached lists hold (default
	// DefaultCacheSlots); past it the least recently read lists go. The
	// answers encoded beside the lists count in it too (see slotCache).
	CacheSlots int
	// Encode encodes a slot as the API answers it; with it a list read
	// from memory keeps its encoded answer (EncodedPage).
	Encode SlotEncoder
	// MaxReads, MaxBookings and BookingQueue bound what the front sends
	// the store at a time (see ErrOverloaded; defaults DefaultMaxReads,
	// DefaultMaxBookings, DefaultBookingQueue).
	MaxReads, MaxBookings, BookingQueue int
	// ReadBudget is how long a store read of a slot list or of a slot's
	// holders may take before it is given up and shed as ErrOverloaded
	// (default DefaultReadBudget).
	ReadBudget time.Duration
	// MaxRunning and RunQueue bound the appointment requests working at
	// a time and waiting to begin (see Admit; defaults DefaultMaxRunning,
	// one per CPU of GOMAXPROCS but one, and DefaultRunQueue).
	MaxRunning, RunQueue int
	// ReadQueue is how many may wait to begin when a slot list asks to
	// (see AdmitRead; default three quarters of RunQueue, at most
	// RunQueue): fewer than RunQueue, so bookings keep a place.
	ReadQueue int
	// ReadWait and BookingWait are the longest a slot list and a booking
	// wait to begin before they are refused as ErrOverloaded (defaults
	// DefaultReadWait and DefaultBookingWait).
	ReadWait, BookingWait time.Duration
}

// Front serves slot lists and bookings for the HTTP API. It is safe for
// concurrent use. Without Follow it caches nothing (every read goes to the
// store) but still rate-limits.
type Front struct {
	eng    *queue.Engine
	encode SlotEncoder
	clock  func() time.Time
	log    *slog.Logger
	limit  *limiter
	group  singleflight.Group
	reads  *share // slot lists and holders read from the store
	// budget is Opts.ReadBudget.
	budget time.Duration
	books  *share // bookings at the engine
	// running are the appointment requests working (admit.go), of
	// which at most readQueue slot lists wait to begin.
	running   *share
	readQueue int64
	// readWait and bookingWait are Opts.ReadWait and BookingWait.
	readWait, bookingWait time.Duration

	mu sync.Mutex
	// live are the sites whose follower applied its first snapshot: only
	// from then on is every booking event seen, and the caches of the
	// site used. Before it an event may be missed, and the snapshot
	// drops whatever was learnt (a known-full mark too, which would let
	// another request through to the engine).
	live     map[string]bool
	epochs   map[string]uint64        // per site, bumped by each fresh snapshot
	cache    *slotCache               // cached slot lists
	gens     *stamps[listKey]         // moved by each invalidation of a list
	full     map[string]*marks        // per site, the slots known full
	maxMarks int                      // a generation of a site's marks, its holders, capacities
	holders  *bounded[int64, holders] // who has a booking in a slot known full, read once
	releases *stamps[int64]           // moved by each place given back in a slot
	capacity *bounded[int64, int]     // places per slot of more than one, from the lists read
	gates    map[int64]*gate          // the slots with requests at the engine
}

// gate lets at most as many booking requests of one slot go to the
// engine at a time as the slot has places (one when its capacity is not
// known): at the opening thousands of requests for a few slots arrive
// before any answer says which are full, and sent on together they would
// fill the committer's queue, which other sites' kiosks wait in too
// (group commit). The first ones take the places or learn the slot full;
// the waiting ones then are refused from memory.
type gate struct {
	permits chan struct{}
	users   int // requests holding or waiting for a permit
}

type listKey struct{ site, resource, date string }

// holders are the patients with a booking (of any status) in a slot known
// full, at one site, and the keys of the requests that made them: the only
// requests for it that may be a retry, or reuse a key for another patient
// (which the engine refuses as idempotency_key_reused, not slot_full).
// While the slot stays full no one else can book it, so the set holds
// until a place is given back, which drops it with the slot's fullness.
type holders struct {
	site     string
	patients map[string]bool
	keys     map[queue.RequestKey]bool // the idempotency keys that booked them
}

// hold reports whether r's patient or r's key has a booking among h.
func (h holders) hold(r queue.BookRequest) bool {
	return h.patients[r.Patient] || h.keys[queue.RequestKey{Device: r.Device, Key: r.Key}]
}

// knownFull is the refusal of a request for slot, known full.
func knownFull(slot int64) error {
	return fmt.Errorf("%w: slot %d (known full)", queue.ErrSlotFull, slot)
}

// RateError refuses a patient's request past the site's rate; it matches
// queue.ErrRateLimited.
type RateError struct{ RetryAfter time.Duration }

// Error says the wait in whole seconds, rounded up, as Retry-After does.
func (e *RateError) Error() string {
	return fmt.Sprintf("booking: too many requests for this patient: retry after %ds", int64(math.Ceil(e.RetryAfter.Seconds())))
}

// Is makes RateError match queue.ErrRateLimited.
func (e *RateError) Is(target error) bool { return target == queue.ErrRateLimited }

// New returns a Front over o.Engine.
func New(o Opts) *Front {
	if o.Clock == nil {
		o.Clock = o.Engine.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	o.CacheSlots = positive.Or(o.CacheSlots, DefaultCacheSlots)
	o.MaxReads = positive.Or(o.MaxReads, DefaultMaxReads)
	o.MaxBookings = positive.Or(o.MaxBookings, DefaultMaxBookings)
	o.BookingQueue = positive.Or(o.BookingQueue, DefaultBookingQueue)
	o.ReadBudget = positive.Or(o.ReadBudget, DefaultReadBudget)
	o.MaxRunning = positive.Or(o.MaxRunning, DefaultMaxRunning())
	o.ReadWait, o.BookingWait = positive.Or(o.ReadWait, DefaultReadWait), positive.Or(o.BookingWait, DefaultBookingWait)
	o.RunQueue = positive.Or(o.RunQueue, DefaultRunQueue)
	f := &Front{eng: o.Engine, encode: o.Encode, clock: o.Clock, log: o.Logger, cache: newSlotCache(o.CacheSlots, newCacheMetrics()), gens: newStamps[listKey](defaultStamps),
		live: map[string]bool{}, epochs: map[string]uint64{}, full: map[string]*marks{}, maxMarks: o.CacheSlots,
		holders: newBounded[int64, holders](o.CacheSlots), releases: newStamps[int64](defaultStamps), capacity: newBounded[int64, int](o.CacheSlots),
		gates: map[int64]*gate{}, reads: newShare("slot reads", o.MaxReads, 0), budget: o.ReadBudget, books: newShare("bookings", o.MaxBookings, o.BookingQueue),
		running: newShare("appointment requests", o.MaxRunning, o.RunQueue), readWait: o.ReadWait, bookingWait: o.BookingWait}
	f.readQueue = int64(min(o.RunQueue, positive.Or(o.ReadQueue, max(o.RunQueue*3/4, 1))))
	limits := map[string]rate{}
	for _, s := range o.Engine.Sites() {
		limits[s.ID] = rate{n: s.Appointments.PatientRate, per: s.Appointments.PatientWindow}
	}
	f.limit = newLimiter(limits)
	return f
}

// Follow keeps the caches in step with the booking events of every site
// with resources until ctx ends; while it runs the caches of a site are
// used once its first snapshot is in.
func (f *Front) Follow(ctx context.Context) error {
	var wg sync.WaitGroup
	errc := make(chan error, len(f.eng.Sites()))
	defer func() {
		f.mu.Lock()
		f.live = map[string]bool{}
		f.cache = newSlotCache(f.cache.max, f.cache.metrics)
		f.full, f.holders = map[string]*marks{}, newBounded[int64, holders](f.maxMarks)
		f.mu.Unlock()
	}()
	for _, s := range f.eng.Sites() {
		if len(s.Resources) == 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc <- f.follow(ctx, s)
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, queue.ErrClosed) {
			return err
		}
	}
	return nil
}

// follow applies one site's events to the caches. The follower starts
// from a snapshot and takes another after a gap: each time, anything cached
// before it is suspect and forgotten.
func (f *Front) follow(ctx context.Context, s queue.Site) error {
	fl := follow.New(f.eng, s.ID, follow.Opts{Log: f.log, Who: "booking"})
	for {
		u, err := fl.Next(ctx)
		if err != nil {
			return err
		}
		if u.Snapshot != nil {
			f.fresh(s.ID)
		}
		for i := range u.Events {
			if u.Events[i].Type.IsBooking() {
				f.observe(&s, &u.Events[i])
			}
		}
	}
}

// fresh applies a snapshot of a site: every cached list of the site and
// what is known of its slots may have missed an event, and go; from now
// on every event is seen, and the site's caches are used. A list being
// read meanwhile is not cached (the epoch moved).
func (f *Front) fresh(site string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.cache.at {
		if k.site == site {
			f.cache.drop(k)
			f.gens.bump(k)
		}
	}
	f.epochs[site]++
	delete(f.full, site)
	f.holders.deleteFunc(func(_ int64, h holders) bool { return h.site == site })
	f.live[site] = true
}

// marksOf is the set of the slots of site known full. f.mu is held.
func (f *Front) marksOf(site string) *marks {
	m := f.full[site]
	if m == nil {
		m = newMarks(f.maxMarks)
		f.full[site] = m
	}
	return m
}

// observe applies a booking event: the lists showing its slot are stale;
// a place given back reopens the slot.
func (f *Front) observe(s *queue.Site, e *queue.Event) {
	date := e.SlotAt.In(s.Location).Format(time.DateOnly)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range []listKey{{s.ID, e.Resource, date}, {s.ID, "", date}} {
		f.cache.drop(k)
		f.gens.bump(k)
	}
	if e.Type == queue.EventBookingCancelled || e.Type == queue.EventBookingExpired {
		f.releases.bump(e.Slot)
		f.marksOf(s.ID).del(e.Slot)
		f.holders.del(e.Slot)
	}
}

// Slots lists the slots of a site on a local date, of one resource or of
// all of them, from memory when it can.
func (f *Front) Slots(ctx context.Context, site, resource, date string) ([]queue.Slot, error) {
	slots, _, err := f.SlotPage(ctx, SlotQuery{Site: site, Resource: resource, Date: date, Limit: math.MaxInt})
	return slots, err
}

// SlotQuery selects a page of a slot list: Limit slots (at least one)
// from Offset.
type SlotQuery struct {
	Site, Resource, Date string
	Offset, Limit        int
}

// SlotPage is Slots' page q selects, and how many slots the whole list
// has. A list in memory is unpacked for the page alone.
func (f *Front) SlotPage(ctx context.Context, q SlotQuery) ([]queue.Slot, int, error) {
	k := listKey{q.Site, q.Resource, q.Date}
	page := func(n int) (int, int) {
		from := min(max(q.Offset, 0), n)
		return from, from + min(n-from, max(q.Limit, 1))
	}
	f.mu.Lock()
	runs := f.eng.SlotRuns(q.Site, q.Resource)
	if f.live[q.Site] {
		if p, ok := f.cache.get(k, runs); ok {
			from, to := page(len(p.slots))
			out := p.unpack(from, to)
			f.mu.Unlock()
			return out, len(p.slots), nil
		}
	}
	following, gen, epoch := f.live[q.Site], f.gens.get(k), f.epochs[q.Site]
	f.mu.Unlock()
	var slots []queue.Slot
	if !following {
		resume := pause(ctx)
		var err error
		slots, err = f.readSlots(ctx, q)
		if err = resume(err); err != nil {
			return nil, 0, err
		}
	} else {
		resume := pause(ctx)
		v, err, _ := f.group.Do(q.Site+"\x00"+q.Resource+"\x00"+q.Date+"\x00"+strconv.FormatUint(gen, 10)+"\x00"+strconv.FormatUint(runs, 10), func() (any, error) {
			slots, err := f.readSlots(ctx, q)
			if err != nil {
				return nil, err
			}
			f.mu.Lock()
			if f.live[q.Site] && f.gens.get(k) == gen && f.epochs[q.Site] == epoch {
				// The capacities and holders of an evicted list's
				// slots go with it (a gate then lets one request in at
				// a time; holders are read again); their known-full
				// marks stay (marks has its own bound): learnt again,
				// each would let a request through to the engine.
				for _, ps := range f.cache.put(k, runs, slots) {
					f.capacity.del(ps.id)
					f.holders.del(ps.id)
				}
				m := f.marksOf(q.Site)
				for _, sl := range slots {
					if sl.Booked >= sl.Capacity {
						m.add(sl.ID)
					}
					if sl.Capacity > 1 { // the gate's default is 1
						f.capacity.put(sl.ID, sl.Capacity)
					}
				}
			}
			f.mu.Unlock()
			return slots, nil
		})
		if err = resume(err); err != nil {
			return nil, 0, err
		}
		slots = v.([]queue.Slot)
	}
	from, to := page(len(slots))
	return slots[from:to:to], len(slots), nil
}

// readSlots reads the list of q from the store (see read).
func (f *Front) readSlots(ctx context.Context, q SlotQuery) (slots []queue.Slot, err error) {
	err = f.read(ctx, func(ctx context.Context) error {
		slots, err = f.eng.Slots(ctx, q.Site, q.Resource, q.Date)
		return err
	})
	return slots, err
}

// errReadBudget is the cause of a store read's context ending at the
// front's ReadBudget.
var errReadBudget = errors.New("booking: read budget spent")

// read runs fn, a store read, unless MaxReads are being read; one that
// does not finish within the ReadBudget is given up. Both are shed as
// ErrOverloaded (429): a store too busy to answer a slot list soon is
// left to the kiosks and counters, and the read is not reported as the
// store's failure (503).
func (f *Front) read(ctx context.Context, fn func(ctx context.Context) error) error {
	leave, err := f.reads.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	rctx, cancel := context.WithTimeoutCause(ctx, f.budget, errReadBudget)
	defer cancel()
	err = fn(rctx)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(rctx), errReadBudget) {
		f.reads.shed.Add(1)
		return &OverloadError{What: "slot reads", RetryAfter: shedRetry}
	}
	return err
}

// Book applies a booking request: the patient's rate first, then a slot
// known full is refused without a write; the rest goes to the engine,
// through the slot's gate. A slot the engine finds full is remembered,
// unless a place was given back since the request started.
//
// Book takes its own permit (Admit), and only once memory cannot answer:
// a request past its patient's rate, or for a slot known full whose
// holders are known and do not include it, is refused at once. In the
// rush at an opening almost every request is one of those, and waiting
// for a permit (BookingWait) only to be refused from memory held each
// one's connection for up to 200 ms: the places of the appointments
// listener filled, and the door shed what came next with a 429 and a
// closed connection, which its client dialled again; in bench book's
// scale mode the accepts, writes and closes of that churn were half the
// daemon's CPU in the rush (the CPU another site's kiosks wait for).
func (f *Front) Book(ctx context.Context, r queue.BookRequest) (queue.Booking, bool, error) {
	if wait, ok := f.limit.allow(r.Site, r.Patient, f.clock()); !ok {
		return queue.Booking{}, false, &RateError{RetryAfter: wait}
	}
	if err := f.hopeless(r); err != nil {
		return queue.Booking{}, false, err
	}
	ctx, done, err := f.Admit(ctx)
	if err != nil {
		return queue.Booking{}, false, err
	}
	defer done()
	if full, rel := f.known(r.Site, r.Slot); full {
		return f.bookFull(ctx, r, rel)
	}
	leave, err := f.enter(ctx, r.Site, r.Slot)
	if leave != nil {
		defer leave()
	}
	if err != nil {
		return queue.Booking{}, false, err
	}
	full, rel := f.known(r.Site, r.Slot)
	if full { // learnt while waiting at the gate
		return f.bookFull(ctx, r, rel)
	}
	return f.book(ctx, r, rel)
}

// hopeless is the refusal of r when memory alone tells it: its slot is
// known full and r cannot be a retry of a booking there (it has no key,
// or the slot's holders are known and neither its patient nor its key is
// among them). Otherwise it is nil and r goes on.
func (f *Front) hopeless(r queue.BookRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.live[r.Site] || !f.marksOf(r.Site).has(r.Slot) {
		return nil
	}
	if r.Key != "" {
		if h, ok := f.holders.get(r.Slot); !ok || h.site != r.Site || h.hold(r) {
			return nil
		}
	}
	return knownFull(r.Slot)
}

// known reports whether a slot of site is known full, and how many
// places were given back in it so far.
func (f *Front) known(site string, slot int64) (bool, uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.live[site] && f.marksOf(site).has(slot), f.releases.get(slot)
}

// bookFull answers a request for a slot known full: refused, unless the
// patient has a booking there: the engine answers a retry of the request
// that made it with that booking, anything else with its refusal.
func (f *Front) bookFull(ctx context.Context, r queue.BookRequest, rel uint64) (queue.Booking, bool, error) {
	held, err := f.holds(ctx, r, rel)
	if err != nil {
		return queue.Booking{}, false, err
	}
	if !held {
		return queue.Booking{}, false, knownFull(r.Slot)
	}
	return f.book(ctx, r, rel)
}

// book sends r to the engine and remembers a slot it finds full. After
// the commit it takes a permit again before it answers: a batch's
// bookings end together, and without it each would be runnable at once,
// the very thing the permits bound (admit.go).
func (f *Front) book(ctx context.Context, r queue.BookRequest, rel uint64) (queue.Booking, bool, error) {
	resume := pause(ctx)
	leave, err := f.books.enter(ctx)
	if err != nil {
		return queue.Booking{}, false, resume(err)
	}
	b, replayed, err := f.eng.Book(ctx, r)
	leave()
	err = resume(err)
	if errors.Is(err, queue.ErrSlotFull) {
		f.mu.Lock()
		if f.live[r.Site] && f.releases.get(r.Slot) == rel {
			f.marksOf(r.Site).add(r.Slot)
		}
		f.mu.Unlock()
	}
	return b, replayed, err
}

// enter waits for a permit of the slot's gate (while the caches are in
// use; without them nothing is known full, and the gate would only queue)
// and returns the function that gives it back. A request waiting at the
// gate gives back its CPU permit meanwhile (pause); one that finds the
// gate open keeps it: giving it back and taking it again at once, as
// every booking did, handed the permit to a waiting request and back, two
// switches of goroutine, and often a wait in the permits' queue, for
// nothing. When ctx ends while it takes its CPU permit back, it returns
// both the function and ctx's error.
func (f *Front) enter(ctx context.Context, site string, slot int64) (func(), error) {
	f.mu.Lock()
	if !f.live[site] {
		f.mu.Unlock()
		return func() {}, nil
	}
	g := f.gates[slot]
	if g == nil {
		places, _ := f.capacity.get(slot)
		g = &gate{permits: make(chan struct{}, max(places, 1))}
		f.gates[slot] = g
	}
	g.users++
	f.mu.Unlock()
	out := func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if g.users--; g.users == 0 {
			delete(f.gates, slot)
		}
	}
	leave := func() { <-g.permits; out() }
	select {
	case g.permits <- struct{}{}:
		return leave, nil
	default:
	}
	resume := pause(ctx)
	select {
	case g.permits <- struct{}{}:
		return leave, resume(nil)
	case <-ctx.Done():
		out()
		return nil, resume(ctx.Err())
	}
}

// holds reports whether r may be a retry of the request that booked its
// patient into its slot, known full since rel places were given back, or
// reuses the key of a booking there for someone else: only a request with
// an idempotency key can, and only if the patient or the key has a booking
// in the slot. The slot's bookings are read once while it
// stays full (a read, never a write), so the rush on a full slot costs
// the database nothing more.
func (f *Front) holds(ctx context.Context, r queue.BookRequest, rel uint64) (bool, error) {
	if r.Key == "" {
		return false, nil
	}
	f.mu.Lock()
	h, ok := f.holders.get(r.Slot)
	f.mu.Unlock()
	if !ok || h.site != r.Site {
		key := "holders\x00" + r.Site + "\x00" + strconv.FormatInt(r.Slot, 10) + "\x00" + strconv.FormatUint(rel, 10)
		resume := pause(ctx)
		v, err, _ := f.group.Do(key, func() (any, error) {
			var bs []queue.Booking
			err := f.read(ctx, func(ctx context.Context) (err error) {
				bs, err = f.eng.Bookings(ctx, queue.BookingFilter{Site: r.Site, Slot: r.Slot})
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("booking: read the bookings of slot %d: %w", r.Slot, err)
			}
			h := holders{site: r.Site, patients: make(map[string]bool, len(bs)), keys: make(map[queue.RequestKey]bool, len(bs))}
			for _, b := range bs {
				h.patients[b.Patient] = true
				if b.IdemKey != "" {
					h.keys[queue.RequestKey{Device: b.Device, Key: b.IdemKey}] = true
				}
			}
			f.mu.Lock()
			if f.live[r.Site] && f.marksOf(r.Site).has(r.Slot) && f.releases.get(r.Slot) == rel {
				f.holders.put(r.Slot, h)
			}
			f.mu.Unlock()
			return h, nil
		})
		if err = resume(err); err != nil {
			return false, err
		}
		h = v.(holders)
	}
	return h.hold(r), nil
}

// Cancel cancels a booking; the slot reopens here at once (other daemons
// learn it from the event).
func (f *Front) Cancel(ctx context.Context, r queue.BookingRequest) (queue.Booking, error) {
	b, err := f.eng.CancelBooking(ctx, r)
	if err == nil {
		f.mu.Lock()
		f.releases.bump(b.Slot)
		f.marksOf(b.Site).del(b.Slot)
		f.holders.del(b.Slot)
		f.mu.Unlock()
	}
	return b, err
}
