package queue

import (
	"strings"
	"time"
)

// Class is the kind of a ticket; it decides its rank in the queue and where
// it is inserted.
type Class string

// Ticket classes.
const (
	ClassNormal      Class = "normal"
	ClassVIP         Class = "vip"
	ClassEmergency   Class = "emergency"
	ClassRevisit     Class = "revisit"
	ClassAppointment Class = "appointment"
	ClassReentered   Class = "reentered"
)

// DefaultRanks are the class ranks used when a site names none: lower ranks
// are called first. Revisit and re-entered tickets share the normal rank and
// are placed by position inside it.
func DefaultRanks() map[Class]int {
	return map[Class]int{
		ClassEmergency:   0,
		ClassVIP:         10,
		ClassAppointment: 15,
		ClassNormal:      20,
	}
}

// Status is the state of a ticket.
type Status string

// Ticket states. DONE, NO_SHOW, CANCELLED and EXPIRED are terminal for the
// day (a NO_SHOW may still be re-entered).
const (
	StatusWaiting   Status = "WAITING"
	StatusCalled    Status = "CALLED"
	StatusServing   Status = "SERVING"
	StatusDone      Status = "DONE"
	StatusNoShow    Status = "NO_SHOW"
	StatusCancelled Status = "CANCELLED"
	StatusExpired   Status = "EXPIRED"
)

// Terminal reports whether s ends a ticket's day.
func (s Status) Terminal() bool {
	switch s {
	case StatusDone, StatusNoShow, StatusCancelled, StatusExpired:
		return true
	}
	return false
}

// Ticket is one customer's number for one service on one service day.
// Times are zero when the step has not happened.
type Ticket struct {
	ID      int64
	Site    string
	Service string // service that issued the number; (Site, Service, Day, Seq) is unique
	// Queue is the service whose queue the ticket waits in: Service, unless
	// a transfer moved it (it keeps its number).
	Queue  string
	Day    string // service day, "2006-01-02"
	Seq    int
	Number string // display text: prefix + zero-padded Seq
	Class  Class
	Status Status

	// Rank and SortKey order waiting tickets of a service: (Rank, SortKey).
	Rank    int
	SortKey int64

	Counter       string // counter that called or serves it
	TargetCounter string // set by a transfer to a counter: only it may call the ticket

	CallCount   int
	NoShowCount int // times marked no-show; also the re-entries used

	IssuedAt     time.Time
	WaitingSince time.Time // issue, re-entry or transfer time
	CalledAt     time.Time // latest call
	// FirstCalledAt is the ticket's first call: its wait (issue to first
	// call) stays what it was when a re-entry or transfer calls it again.
	FirstCalledAt time.Time
	ServingAt     time.Time
	FinishedAt    time.Time

	Device  string // device that issued it
	IdemKey string // idempotency key of the request that created it

	// Version is, on a ticket an operation of the Engine returned, the
	// event version that operation produced (its last event; a retry with
	// the same key gets the first one's); 0 on a ticket read from the store.
	Version int64
}

func (t *Ticket) setVersion(v int64) { t.Version = v }

// CounterMode is the state of a counter.
type CounterMode string

// Counter modes. A counter never seen by the store is open.
const (
	CounterOpen   CounterMode = "open"
	CounterPaused CounterMode = "paused"
	CounterClosed CounterMode = "closed"
)

// CounterState is the live state of one counter.
type CounterState struct {
	Site     string
	ID       string
	Mode     CounterMode
	TicketID int64     // ticket called or served now, 0 when idle
	Since    time.Time // when Mode or TicketID last changed
	// Version is, on a state Pause or Resume returned, the event version
	// they produced; 0 on a state read from the store.
	Version int64
}

func (c *CounterState) setVersion(v int64) { c.Version = v }

// EventType names a state change in the event log.
type EventType string

// Event types.
const (
	EventIssued        EventType = "ISSUED"
	EventCalled        EventType = "CALLED"
	EventRecalled      EventType = "RECALLED"
	EventNoShow        EventType = "NO_SHOW"
	EventReentered     EventType = "REENTERED"
	EventTransferred   EventType = "TRANSFERRED"
	EventServing       EventType = "SERVING"
	EventDone          EventType = "DONE"
	EventCancelled     EventType = "CANCELLED"
	EventExpired       EventType = "EXPIRED"
	EventCounterOpened EventType = "COUNTER_OPENED"
	EventCounterPaused EventType = "COUNTER_PAUSED"
	EventPrintFailed   EventType = "PRINT_FAILED"
)

// Event is one committed state change. Version increases by exactly one per
// event within a site.
//
// A ticket event carries what a reader needs to follow the site without
// remembering tickets: the ticket's state before (From, FromQueue,
// FromCounter) and after the change (Status, Service, Counter), the
// service that issued its number and its service day, and the times a
// figure is made of (Waited, ServiceTime). The reducer in package view is
// the one place that turns events into a site's figures.
type Event struct {
	Site     string
	Version  int64
	Type     EventType
	TicketID int64
	Number   string
	// Service is the queue the ticket is in after the change
	// (Ticket.Queue); Issuer is the service that issued its number
	// (Ticket.Service). They differ after a transfer.
	Service string
	Issuer  string
	Day     string // the ticket's service day
	Class   Class
	Status  Status // ticket status after the change
	Counter string
	Actor   string // device or operator
	Detail  string // e.g. transfer target, failure reason
	At      time.Time
	// CallCount is how many times the ticket had been called, after the
	// change: 2 on its first RECALLED.
	CallCount int
	// From, FromQueue and FromCounter are the ticket's status, queue and
	// counter before the change; empty on ISSUED and on counter events.
	// On RECALLED and PRINT_FAILED they equal the state after it.
	From        Status
	FromQueue   string
	FromCounter string
	// Waited is the time from the ticket's issue to the event: on its
	// first CALLED (CallCount 1), its wait.
	Waited time.Duration
	// ServiceTime, on DONE, is the time from the start of the service
	// (SERVING) to the event.
	ServiceTime time.Duration
	// BookingID, Slot, Resource and SlotAt name the booking of a BOOKING_*
	// event and its slot (Service is then the resource's service, Day the
	// slot's service day; TicketID and Number the ticket of a check-in).
	BookingID int64
	Slot      int64
	Resource  string
	SlotAt    time.Time
}

// DetailToCounter starts the Detail of a TRANSFERRED event that sent the
// ticket to one counter ("counter 3"); one to a service says
// "service B".
const DetailToCounter = "counter "

// ToCounter is, on a TRANSFERRED event to one counter, the counter the
// ticket now waits for (Counter is the one that transferred it); "" on
// every other event.
func (e *Event) ToCounter() string {
	if e.Type != EventTransferred {
		return ""
	}
	c, _ := strings.CutPrefix(e.Detail, DetailToCounter)
	if c == e.Detail {
		return ""
	}
	return c
}
