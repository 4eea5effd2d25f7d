package booking

import (
	"context"
	"runtime"
)

// The front's CPU share. A slot list served from memory, or a request for
// a slot known full, costs no store work, so the shares of store reads and
// bookings (shed.go) never see it; but each costs CPU, tenths of a
// millisecond, and thousands a second of them kept thousands of handlers
// runnable at once. Go's scheduler runs runnable goroutines in turn, so
// every step of another site's kiosk ticket (its handler, the committer,
// the return from its COMMIT's fsync) then waited in line behind them:
// measured with bench book's scale mode, the scheduler's p99 latency
// reached 0.9 s, and tickets at another site took seconds, 503 after 3 s.
//
// So an appointment request (a slot list, a booking) holds one of
// MaxRunning permits while it works, and gives it back whenever it waits
// (for the store, for its slot's gate, for its commit), taking one again
// after: at most MaxRunning appointment requests are runnable at a time,
// whatever the rate, and a kiosk's goroutine waits behind those few, not
// behind the rush. At most RunQueue more wait for a permit to begin;
// past them a request is refused at once as ErrOverloaded (429 with
// Retry-After), so the queue's wait stays short too. A slot list
// (AdmitRead) waits only behind fewer, ReadQueue: when the queue grows,
// reads are refused first and bookings still wait their turn.

// DefaultRunQueue is Opts.RunQueue when it is zero.
const DefaultRunQueue = 64

// DefaultReadQueue is Opts.ReadQueue when it is zero: a quarter of the
// run queue.
const DefaultReadQueue = DefaultRunQueue / 4

// defaultMaxRunning is Opts.MaxRunning when it is zero: one appointment
// request working per CPU the daemon may use.
func defaultMaxRunning() int { return max(runtime.GOMAXPROCS(0), 1) }

// runningKey is the context key of an admitted request's permit.
type runningKey struct{}

// permit is an admitted request's hold on the CPU share. Only the
// request's own goroutine uses it.
type permit struct {
	s    *share
	held bool
}

// Admit lets an appointment request begin: it takes one of the front's
// MaxRunning permits, waiting behind at most RunQueue others, or is
// refused as ErrOverloaded. The request passes the context returned to
// the front's methods, which give the permit back while they wait; done
// ends the request's hold.
func (f *Front) Admit(ctx context.Context) (context.Context, func(), error) {
	return f.admit(ctx, f.running.queue, f.running.what)
}

// AdmitRead is Admit for a slot list: it waits to begin only behind fewer
// than ReadQueue others, so that a growing queue sheds reads before
// bookings (their permits are the same).
func (f *Front) AdmitRead(ctx context.Context) (context.Context, func(), error) {
	return f.admit(ctx, f.readQueue, "slot list requests")
}

func (f *Front) admit(ctx context.Context, queue int64, what string) (context.Context, func(), error) {
	if _, err := f.running.enterWithin(ctx, queue, what); err != nil {
		return ctx, nil, err
	}
	p := &permit{s: f.running, held: true}
	return context.WithValue(ctx, runningKey{}, p), p.release, nil
}

func (p *permit) release() {
	if p.held {
		p.held = false
		p.s.leave()
	}
}

// pause gives back the permit of the request of ctx, if it holds one,
// while it waits (for the store, its slot's gate, its commit). The
// function returned takes a permit again, behind the requests already
// working but never refused (the request was admitted), and returns err,
// the wait's error, or ctx's if ctx ended meanwhile.
func pause(ctx context.Context) (resume func(err error) error) {
	p, _ := ctx.Value(runningKey{}).(*permit)
	if p == nil || !p.held {
		return func(err error) error { return err }
	}
	p.release()
	return func(err error) error {
		select {
		case p.s.permits <- struct{}{}:
			p.held = true
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
		}
		return err
	}
}
