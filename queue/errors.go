package queue

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Callers test them with errors.Is; the protocol maps each
// onto a stable wire code. The refusals (made with refusal) are answers by
// the rules to one request: a group commit rolls back only that request,
// and IsRefusal knows them without a list to keep in step.
var (
	ErrUnknownSite       = refusal("queue: unknown site")
	ErrUnknownService    = refusal("queue: unknown service")
	ErrUnknownCounter    = refusal("queue: unknown counter")
	ErrNotFound          = refusal("queue: ticket not found")
	ErrServiceFull       = refusal("queue: service full today")
	ErrServiceClosed     = refusal("queue: service closed now")
	ErrNoneWaiting       = refusal("queue: no ticket waiting")
	ErrInvalidTransition = refusal("queue: invalid transition")
	ErrReentryLimit      = refusal("queue: re-entry limit reached")
	ErrCounterPaused     = refusal("queue: counter paused")
	ErrCounterBusy       = refusal("queue: counter busy")
	ErrCounterIdle       = refusal("queue: counter has no ticket")
	ErrKeyReused         = refusal("queue: idempotency key reused for another operation")
	ErrBadRequest        = refusal("queue: bad request")
	ErrUnknownResource   = refusal("queue: unknown resource")
	ErrSlotNotFound      = refusal("queue: slot not found")
	ErrBookingNotFound   = refusal("queue: booking not found")
	ErrSlotFull          = refusal("queue: slot full")
	ErrSlotClosed        = refusal("queue: slot not bookable")
	ErrAlreadyBooked     = refusal("queue: patient already booked in this slot")
	ErrOverlap           = refusal("queue: patient has an overlapping booking")
	ErrBookingState      = refusal("queue: booking cannot do that in its state")
	ErrCheckInLate       = refusal("queue: too late to check in")
	ErrRateLimited       = refusal("queue: too many requests")
	ErrClosed            = errors.New("queue: engine closed")

	// Store-level errors: stores translate driver errors into these.
	//
	// ErrConflict is a compare-and-set that found its row changed (another
	// counter or daemon took the ticket first): the transaction is alive,
	// and the same transaction may read again and retry. ErrAborted is a
	// transaction the database ended on its own (deadlock, serialization
	// failure, lock wait timeout, an interrupted query, a Galera
	// certification conflict): it is gone, nothing but ROLLBACK may run on
	// it, and only the whole transaction can be tried again. ErrUnavailable
	// is a database that cannot be reached, refuses writes or does not
	// answer in time; a transaction it ends is just as dead.
	ErrConflict    = errors.New("queue: concurrent update, try again")
	ErrAborted     = errors.New("queue: transaction aborted by the database, try again")
	ErrDuplicate   = errors.New("queue: duplicate row")
	ErrUnavailable = errors.New("queue: store unavailable")

	// ErrReadOnly and ErrNotAnswering are the two kinds of ErrUnavailable
	// (errors.Is matches ErrUnavailable too) that say the connection is of
	// no further use: ErrReadOnly is a server that refuses writes (a
	// standby, a primary demoted to one, a read-only MySQL or Galera
	// node), ErrNotAnswering one that is gone, shutting down, or did not
	// answer in time (a connection closed, reset or timed out). A store
	// drops the connection that met either, so the next transaction dials
	// afresh and may reach another host.
	ErrReadOnly     error = &unavailableError{"queue: store read-only"}
	ErrNotAnswering error = &unavailableError{"queue: store not answering"}
)

// unavailableError is a kind of ErrUnavailable.
type unavailableError struct{ msg string }

func (e *unavailableError) Error() string { return e.msg }

// Is makes every kind of unavailability match ErrUnavailable.
func (e *unavailableError) Is(target error) bool { return target == ErrUnavailable }

// TransitionError says which action was refused on which ticket in which
// state. It matches ErrInvalidTransition with errors.Is.
type TransitionError struct {
	Number string
	Status Status
	Action Action
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("queue: ticket %s is %s: cannot %s", e.Number, e.Status, e.Action)
}

// Is makes TransitionError match ErrInvalidTransition.
func (e *TransitionError) Is(target error) bool { return target == ErrInvalidTransition }

// refusalError is a sentinel that refuses one request by the rules.
type refusalError struct{ msg string }

func (e *refusalError) Error() string { return e.msg }
func (e *refusalError) refuses()      {}

func refusal(msg string) error { return &refusalError{msg} }

// IsRefusal reports whether err is a refusal of one request by the rules
// (unknown service, full, invalid transition...), as opposed to a failure
// of the store or the daemon.
func IsRefusal(err error) bool {
	var r interface{ refuses() }
	return errors.As(err, &r)
}

func (e *TransitionError) refuses() {}

// CheckInEarlyError refuses a check-in before its window: the patient may
// come back at At. It matches ErrCheckInEarly.
type CheckInEarlyError struct {
	Code string
	At   time.Time
	// Now is when it was refused, in the site's zone: the refusal names
	// At's date too when it is another day.
	Now time.Time
}

// ComeBack says when the patient may check in: "10:30", or
// "2026-12-02 10:30" when that is not the day of the refusal.
func (e *CheckInEarlyError) ComeBack() string {
	if !e.Now.IsZero() && e.Now.In(e.At.Location()).Format(time.DateOnly) != e.At.Format(time.DateOnly) {
		return e.At.Format("2006-01-02 15:04")
	}
	return e.At.Format("15:04")
}

// ErrCheckInEarly is the refusal of a check-in before its window.
var ErrCheckInEarly = refusal("queue: too early to check in")

func (e *CheckInEarlyError) Error() string {
	return fmt.Sprintf("queue: booking %s: too early to check in: come back at %s", e.Code, e.ComeBack())
}

// Is makes CheckInEarlyError match ErrCheckInEarly.
func (e *CheckInEarlyError) Is(target error) bool { return target == ErrCheckInEarly }

func (e *CheckInEarlyError) refuses() {}
