package queue

// Action is something done to a ticket.
type Action string

// Actions on tickets.
const (
	ActCall           Action = "call"
	ActRecall         Action = "recall"
	ActStart          Action = "start"
	ActComplete       Action = "complete"
	ActNoShow         Action = "no-show"
	ActReenter        Action = "re-enter"
	ActTransfer       Action = "transfer"
	ActCancel         Action = "cancel"
	ActExpire         Action = "expire"
	ActTimeoutNoShow  Action = "time out to no-show"
	ActTimeoutRequeue Action = "time out to waiting"
)

// transitions is the state machine of DESIGN §1, the only place it is
// written down. A (status, action) pair not listed here is refused.
var transitions = map[Status]map[Action]Status{
	StatusWaiting: {
		ActCall:   StatusCalled,
		ActCancel: StatusCancelled,
		ActExpire: StatusExpired,
	},
	StatusCalled: {
		ActRecall:         StatusCalled,
		ActStart:          StatusServing,
		ActNoShow:         StatusNoShow,
		ActTransfer:       StatusWaiting,
		ActCancel:         StatusCancelled,
		ActTimeoutNoShow:  StatusNoShow,
		ActTimeoutRequeue: StatusWaiting,
		ActExpire:         StatusExpired,
	},
	StatusServing: {
		ActComplete: StatusDone,
		ActTransfer: StatusWaiting,
		ActExpire:   StatusExpired,
	},
	StatusNoShow: {
		ActReenter: StatusWaiting,
	},
}

// Next returns the status a ticket in status s moves to under action a, or
// a *TransitionError naming the ticket, its state and the action.
func Next(number string, s Status, a Action) (Status, error) {
	if to, ok := transitions[s][a]; ok {
		return to, nil
	}
	return "", &TransitionError{Number: number, Status: s, Action: a}
}

// AllStatuses and AllActions enumerate the machine for exhaustive tests.
var (
	AllStatuses = []Status{StatusWaiting, StatusCalled, StatusServing, StatusDone, StatusNoShow, StatusCancelled, StatusExpired}
	AllActions  = []Action{ActCall, ActRecall, ActStart, ActComplete, ActNoShow, ActReenter, ActTransfer, ActCancel, ActExpire, ActTimeoutNoShow, ActTimeoutRequeue}
)
