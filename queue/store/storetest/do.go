package storetest

import (
	"context"
	"fmt"

	"github.com/nowserving/nowserving/queue"
)

// ops are the engine operations test scripts name, with how many
// arguments each takes (issue takes one or two).
var ops = map[string]struct {
	args int
	do   func(ctx context.Context, e *queue.Engine, r queue.Request, a []string) (queue.Ticket, error)
}{
	"issue": {1, func(ctx context.Context, e *queue.Engine, r queue.Request, a []string) (queue.Ticket, error) {
		class := queue.ClassNormal
		if len(a) > 1 {
			class = queue.Class(a[1])
		}
		return e.Issue(ctx, queue.IssueRequest{Request: r, Service: a[0], Class: class})
	}},
	"next":    {1, counterOp((*queue.Engine).CallNext)},
	"recall":  {1, counterOp((*queue.Engine).Recall)},
	"start":   {1, counterOp((*queue.Engine).Start)},
	"done":    {1, counterOp((*queue.Engine).Complete)},
	"noshow":  {1, counterOp((*queue.Engine).NoShow)},
	"pause":   {1, counterOp((*queue.Engine).Pause)},
	"resume":  {1, counterOp((*queue.Engine).Resume)},
	"reenter": {1, numberOp((*queue.Engine).Reenter)},
	"cancel":  {1, numberOp((*queue.Engine).Cancel)},
	"call-number": {2, func(ctx context.Context, e *queue.Engine, r queue.Request, a []string) (queue.Ticket, error) {
		return e.CallNumber(ctx, queue.NumberRequest{Request: r, Counter: a[0], Number: a[1]})
	}},
	"transfer-service": {2, func(ctx context.Context, e *queue.Engine, r queue.Request, a []string) (queue.Ticket, error) {
		return e.Transfer(ctx, queue.TransferRequest{Request: r, Counter: a[0], ToService: a[1]})
	}},
	"transfer-counter": {2, func(ctx context.Context, e *queue.Engine, r queue.Request, a []string) (queue.Ticket, error) {
		return e.Transfer(ctx, queue.TransferRequest{Request: r, Counter: a[0], ToCounter: a[1]})
	}},
	"sweep": {0, func(ctx context.Context, e *queue.Engine, _ queue.Request, _ []string) (queue.Ticket, error) {
		_, err := e.Sweep(ctx)
		return queue.Ticket{}, err
	}},
}

// counterOp runs f for the counter a[0]; Pause and Resume touch no ticket.
func counterOp[T any](f func(*queue.Engine, context.Context, queue.CounterRequest) (T, error)) func(context.Context, *queue.Engine, queue.Request, []string) (queue.Ticket, error) {
	return func(ctx context.Context, e *queue.Engine, r queue.Request, a []string) (queue.Ticket, error) {
		v, err := f(e, ctx, queue.CounterRequest{Request: r, Counter: a[0]})
		tk, _ := any(v).(queue.Ticket)
		return tk, err
	}
}

func numberOp(f func(*queue.Engine, context.Context, queue.NumberRequest) (queue.Ticket, error)) func(context.Context, *queue.Engine, queue.Request, []string) (queue.Ticket, error) {
	return func(ctx context.Context, e *queue.Engine, r queue.Request, a []string) (queue.Ticket, error) {
		return f(e, ctx, queue.NumberRequest{Request: r, Number: a[0]})
	}
}

// Do applies one engine operation of a test script, sent as r, and
// returns the ticket it touched:
//
//	issue SERVICE [CLASS]      next C   recall C   start C   done C   noshow C
//	pause C   resume C         reenter NUMBER      cancel NUMBER
//	call-number C NUMBER       transfer-service C SERVICE
//	transfer-counter C TO      sweep
//
// An unknown operation or a wrong number of arguments is an error.
func Do(ctx context.Context, e *queue.Engine, r queue.Request, op string, args ...string) (queue.Ticket, error) {
	o, ok := ops[op]
	if !ok {
		return queue.Ticket{}, fmt.Errorf("storetest: unknown operation %q", op)
	}
	if len(args) != o.args && !(op == "issue" && len(args) == 2) {
		return queue.Ticket{}, fmt.Errorf("storetest: %s takes %d arguments, got %q", op, o.args, args)
	}
	return o.do(ctx, e, r, args)
}
