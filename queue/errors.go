package queue

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers test them with errors.Is; the protocol maps each
// onto a stable wire code.
var (
	ErrUnknownSite       = errors.New("queue: unknown site")
	ErrUnknownService    = errors.New("queue: unknown service")
	ErrUnknownCounter    = errors.New("queue: unknown counter")
	ErrNotFound          = errors.New("queue: ticket not found")
	ErrServiceFull       = errors.New("queue: service full today")
	ErrServiceClosed     = errors.New("queue: service closed now")
	ErrNoneWaiting       = errors.New("queue: no ticket waiting")
	ErrInvalidTransition = errors.New("queue: invalid transition")
	ErrReentryLimit      = errors.New("queue: re-entry limit reached")
	ErrCounterPaused     = errors.New("queue: counter paused")
	ErrCounterBusy       = errors.New("queue: counter busy")
	ErrCounterIdle       = errors.New("queue: counter has no ticket")
	ErrKeyReused         = errors.New("queue: idempotency key reused for another operation")
	ErrBadRequest        = errors.New("queue: bad request")
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
)

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

// domainError reports whether err is a refusal of one request (as opposed to
// a store failure), so a group commit rolls back only that request.
func domainError(err error) bool {
	for _, s := range []error{ErrUnknownSite, ErrUnknownService, ErrUnknownCounter, ErrNotFound,
		ErrServiceFull, ErrServiceClosed, ErrNoneWaiting, ErrInvalidTransition, ErrReentryLimit,
		ErrCounterPaused, ErrCounterBusy, ErrCounterIdle, ErrKeyReused, ErrBadRequest} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
