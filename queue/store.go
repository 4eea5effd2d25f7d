package queue

import (
	"context"
	"time"
)

// Store is a durable database behind the Engine. It runs functions in
// transactions; the Engine holds the rules.
type Store interface {
	// Update runs fn in one read-write transaction and commits it durably.
	// When the database aborts the transaction (ErrAborted: deadlock,
	// serialization failure, certification conflict...) or fn reports
	// ErrConflict, the store rolls back and runs fn again, a bounded number
	// of times, then returns the last error. Once a statement returned an
	// error that ends the transaction (ErrAborted, ErrUnavailable), every
	// later statement of it returns that error without reaching the
	// database, and the transaction is rolled back even if fn returns nil.
	// fn may be run more than once.
	Update(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error
	// View runs fn in a read-only transaction (or on a reader connection).
	View(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error
	// Close releases the database.
	Close() error
}

// HeadQuery selects the first waiting ticket by (Rank, SortKey), or by
// WaitingSince when ByWait is set.
type HeadQuery struct {
	Site string
	Day  string
	// Service is the queue (Ticket.Queue) to look in; empty matches every
	// queue (used with Counter to find tickets transferred to a counter).
	Service string
	// Counter: when set, only tickets transferred to this counter match;
	// when empty, tickets transferred to any counter are excluded.
	Counter string
	// Classes, when not empty, keeps only these classes; NotClasses drops
	// these classes.
	Classes    []Class
	NotClasses []Class
	// WaitingBefore, when not zero (unix ms), keeps tickets waiting since
	// before that instant.
	WaitingBefore int64
	// ByWait orders by WaitingSince instead of (Rank, SortKey).
	ByWait bool
	// Lock asks the store to lock the row it returns for the rest of the
	// transaction, skipping rows other transactions hold (FOR UPDATE SKIP
	// LOCKED) where the database has it.
	Lock bool
}

// Filter selects tickets for sweeps.
type Filter struct {
	Site      string
	Service   string   // queue (Ticket.Queue); empty: every queue
	Day       string   // exact service day; empty: any
	BeforeDay string   // service day strictly before; empty: any
	Statuses  []Status // empty: any
	// CalledBefore, when not zero (unix ms), keeps tickets called before it.
	CalledBefore int64
	// IDs, when not empty, keeps only these tickets.
	IDs   []int64
	Limit int // 0: no limit
}

// StatRow is one aggregate row of a service day, grouped by queue
// (Ticket.Queue, reported as Service), issuing service (Ticket.Service,
// reported as Issuer), counter and status. Times are unix milliseconds.
type StatRow struct {
	Service         string
	Issuer          string
	Counter         string
	Status          Status
	N               int
	MinWaitingSince int64 // smallest WaitingSince in the group
	SumWait         int64 // sum of FirstCalledAt-IssuedAt over called tickets
	NWait           int   // tickets counted in SumWait
	SumService      int64 // sum of FinishedAt-ServingAt over finished served tickets
	NService        int
}

// DayKey names one numbering sequence: the numbers a service issues on one
// service day of a site.
type DayKey struct {
	Site    string
	Service string // the issuing service (Ticket.Service)
	Day     string
}

// NumberKey names a ticket by the number it shows on a service day.
type NumberKey struct {
	Site   string
	Day    string
	Number string
}

// WaitingQuery selects the waiting tickets of one queue and one rank that
// are not transferred to a counter.
type WaitingQuery struct {
	Site    string
	Day     string
	Service string // the queue (Ticket.Queue)
	Rank    int
	Limit   int // at most this many; <= 0: all of them
}

// SiteDay names one service day of a site.
type SiteDay struct {
	Site string
	Day  string
}

// CounterKey names one counter of a site.
type CounterKey struct {
	Site string
	ID   string
}

// ServiceKey names one service of a site.
type ServiceKey struct {
	Site    string
	Service string
}

// EventsQuery selects the events of a site after a version.
type EventsQuery struct {
	Site  string
	After int64 // events with Version > After
	Limit int   // at most this many; <= 0: all of them
}

// RequestKey names one idempotent request: the device and its key.
type RequestKey struct {
	Device string
	Key    string
}

// StoredRequest is the recorded result of an earlier request.
type StoredRequest struct {
	Op     string
	Result []byte
}

// SavedRequest is a request result to record.
type SavedRequest struct {
	RequestKey
	Op     string
	Result []byte
	AtMs   int64
}

// Tx is the set of primitives a store offers inside a transaction. Every
// method is a single statement or two; the Engine composes them.
type Tx interface {
	// Savepoint, RollbackTo and Release scope one request inside a group
	// commit transaction.
	Savepoint(ctx context.Context, name string) error
	RollbackTo(ctx context.Context, name string) error
	Release(ctx context.Context, name string) error

	// LookupRequests returns the stored results of earlier requests among
	// keys (one query for a whole group-commit batch); keys not found are
	// absent from the map.
	LookupRequests(ctx context.Context, keys []RequestKey) (map[RequestKey]StoredRequest, error)
	// SaveRequests records the results of several requests in one
	// statement; a (device, key) saved before fails with ErrDuplicate.
	SaveRequests(ctx context.Context, reqs []SavedRequest) error

	// NextSeq adds n (1 or more) to the last number of a service day (0
	// before its first) and returns the new last: n = 1 allocates the next
	// number, n > 1 the n numbers up to the one returned at once (in one
	// statement).
	NextSeq(ctx context.Context, k DayKey, n int) (int, error)
	// GiveBackSeq gives back the last n numbers of a service day, which
	// this transaction took by NextSeq and did not use.
	GiveBackSeq(ctx context.Context, k DayKey, n int) error

	// InsertTicket stores a new ticket and sets t.ID. A duplicate
	// (site, service, day, seq) fails with ErrDuplicate.
	InsertTicket(ctx context.Context, t *Ticket) error
	// TicketIDs reserves the ids of n tickets this transaction will store
	// with InsertTickets, in one statement, or fails with
	// errors.ErrUnsupported where a store gives ids only as it inserts.
	// The ids are the transaction's until it inserts a ticket otherwise
	// (InsertTicket) or ends; unused ones are left out.
	TicketIDs(ctx context.Context, n int) ([]int64, error)
	// NextSeqIDs is NextSeq(k, n) and TicketIDs(ids) in one statement, or
	// fails with errors.ErrUnsupported (having done neither) where the
	// store cannot take both at once.
	NextSeqIDs(ctx context.Context, k DayKey, n, ids int) (int, []int64, error)
	// DeferWrites lets the store hold, from now on, the writes whose
	// answer the caller does not read (InsertTickets, SaveRequests,
	// AppendEvents of a site LockSites locked) and send them together, in
	// as few statements as it can, before the transaction's next other
	// statement or its commit: their errors then come from that call or
	// from the commit (Store.Update's error). A store that cannot merge
	// writes sends each at once.
	DeferWrites()
	// InsertTickets stores new tickets whose ID (from TicketIDs) and Queue
	// are set, in as few statements as the store allows. A duplicate
	// fails with ErrDuplicate.
	InsertTickets(ctx context.Context, ts []*Ticket) error
	// UpdateTicket writes t if its stored status is still from; it returns
	// ErrConflict when the row changed under it.
	UpdateTicket(ctx context.Context, t *Ticket, from Status) error
	// Ticket reads one ticket by id, ErrNotFound if none.
	Ticket(ctx context.Context, id int64) (*Ticket, error)
	// TicketByNumber finds the ticket with this display number on a day,
	// ErrNotFound if none.
	TicketByNumber(ctx context.Context, k NumberKey) (*Ticket, error)
	// Head returns the first waiting ticket the query selects, nil if none.
	Head(ctx context.Context, q HeadQuery) (*Ticket, error)
	// Waiting lists the waiting tickets q selects, ordered by SortKey.
	Waiting(ctx context.Context, q WaitingQuery) ([]Ticket, error)
	// Ahead counts the waiting tickets of t's queue (same Queue, not
	// transferred to a counter) ordered before t by (Rank, SortKey).
	Ahead(ctx context.Context, t *Ticket) (int, error)
	// SetSortKey moves a waiting ticket.
	SetSortKey(ctx context.Context, id, key int64) error
	// Find lists tickets for sweeps, ordered by id.
	Find(ctx context.Context, f Filter) ([]Ticket, error)
	// Stats aggregates a site's service day.
	Stats(ctx context.Context, d SiteDay) ([]StatRow, error)

	// Counter reads a counter's state, locking it for the transaction; a
	// counter never written is returned open and idle.
	Counter(ctx context.Context, k CounterKey) (CounterState, error)
	// PutCounter writes a counter's state.
	PutCounter(ctx context.Context, c CounterState) error
	// Counters lists the stored counter states of a site.
	Counters(ctx context.Context, site string) ([]CounterState, error)

	// Streak reads and SetStreak writes the number of non-priority calls
	// since the last priority call of a service (the ratio policy).
	Streak(ctx context.Context, k ServiceKey) (int, error)
	SetStreak(ctx context.Context, k ServiceKey, n int) error

	// LockSites locks the version rows of sites, in the order given, for
	// the rest of the transaction (creating those missing at version 0),
	// in one statement: daemons sharing a store take them first, in site
	// order, so their transactions of one site queue there instead of
	// deadlocking on the rows they touch after it.
	LockSites(ctx context.Context, sites []string) error
	// AppendEvents gives evs the site's next len(evs) versions, in order,
	// and stores them (one version bump and one insert).
	AppendEvents(ctx context.Context, site string, evs []*Event) error
	// Events lists the events q selects, in version order.
	Events(ctx context.Context, q EventsQuery) ([]Event, error)
	// LastVersion is the newest event version of a site, 0 if none.
	LastVersion(ctx context.Context, site string) (int64, error)
	// LastVersions is the newest event version of every site that has
	// events, in one query: what a daemon polls to find the events other
	// daemons committed.
	LastVersions(ctx context.Context) (map[string]int64, error)

	BookingTx
	LossTx
}

// SlotQuery selects the slots of a site starting in [From, To), by start
// then resource.
type SlotQuery struct {
	Site     string
	Resource string // empty: every resource
	From, To time.Time
}

// PatientKey names one patient of a site.
type PatientKey struct {
	Site    string
	Patient string
}

// BookingFilter selects bookings, ordered by id. Zero fields select
// everything.
type BookingFilter struct {
	Site     string
	Patient  string
	Slot     int64
	Resource string
	Statuses []BookingStatus
	// StartBefore and EndAfter keep the bookings whose slot overlaps
	// [EndAfter, StartBefore); EndBefore those whose slot ended before it.
	StartBefore, EndAfter, EndBefore time.Time
	// HeldBefore keeps HELD bookings whose hold ends before it.
	HeldBefore time.Time
	Limit      int
}

// BookingTx is what a store offers for appointments inside a transaction.
// The rules that need no reading live in its statements: TakePlace is one
// conditional UPDATE, the stores add a CHECK on a slot's places and a
// unique index on a patient's active booking of a slot.
type BookingTx interface {
	// InsertSlots creates the slots whose (site, resource, start) does not
	// exist yet and returns how many it created.
	InsertSlots(ctx context.Context, slots []Slot) (int, error)
	// Slots lists the slots q selects.
	Slots(ctx context.Context, q SlotQuery) ([]Slot, error)
	// Slot reads one slot, ErrSlotNotFound if none.
	Slot(ctx context.Context, id int64) (*Slot, error)
	// ReshapeSlot sets a slot's capacity and closed flag unless the
	// capacity would fall below its bookings; it reports whether it did.
	ReshapeSlot(ctx context.Context, s Slot) (bool, error)
	// TakePlace adds one booking to a slot that is open, has a free place
	// and starts after now, in one conditional UPDATE; false when it
	// matched no row.
	TakePlace(ctx context.Context, slot int64, now time.Time) (bool, error)
	// TakeSlot reads a slot as it stood before the call (ErrSlotNotFound
	// if none) and takes a place in it for k.Patient, as TakePlace does,
	// when it is k.Site's, the read shows it open with a place free and
	// starting after now; it reports whether it took one. Where it took
	// one, it takes the patient's lock too, as LockPatient does (after
	// the slot's, as a booking always does). One statement where the
	// store can.
	TakeSlot(ctx context.Context, k PatientKey, slot int64, now time.Time) (*Slot, bool, error)
	// ReleasePlace gives a place back.
	ReleasePlace(ctx context.Context, slot int64) error
	// LockPatient serialises the bookings of one patient of a site until
	// the transaction ends, so a check of the patient's other bookings
	// sees any another transaction commits.
	LockPatient(ctx context.Context, k PatientKey, now time.Time) error
	// InsertBooking stores a new booking and sets its ID; a second active
	// booking of the patient in the slot, or a code used before, fails
	// with ErrDuplicate.
	InsertBooking(ctx context.Context, b *Booking) error
	// UpdateBooking writes b's status, hold, ticket and update time if its
	// stored status is still from, else ErrConflict.
	UpdateBooking(ctx context.Context, b *Booking, from BookingStatus) error
	// Booking reads one booking, ErrBookingNotFound if none;
	// BookingByCode finds one by its site and code.
	Booking(ctx context.Context, id int64) (*Booking, error)
	BookingByCode(ctx context.Context, site, code string) (*Booking, error)
	// FindBookings lists the bookings f selects.
	FindBookings(ctx context.Context, f BookingFilter) ([]Booking, error)
}
