package booking

import (
	"context"
	"runtime"
	"time"
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
// behind the rush. MaxRunning is one less than GOMAXPROCS (at least one):
// with every P the daemon has taken by appointments, each step of a
// kiosk's ticket waited for one of them to block, and the daemon asked
// the kernel for every CPU it may use, so when the machine is shared its
// threads waited for a CPU too (bench book's scale mode on 2 cores: the
// daemon's threads waited 39-54 s for a CPU in a 30 s rush).
//
// A request waits for a permit only so long: a slot list ReadWait, a
// booking BookingWait (longer: reads are shed first); then it is refused
// as ErrOverloaded (429 with Retry-After). The queue is bounded by its
// wait, not its length: a burst that is served within the wait is
// served, however many it holds (at 2,000 reads/s a queue of 16 refused
// reads although their p99 was 13-16 ms). RunQueue still bounds how many
// wait at once, and a slot list waits only while fewer than ReadQueue
// (three quarters of RunQueue) do, so bookings keep a place in the queue.

// DefaultRunQueue is Opts.RunQueue when it is zero: a backstop on the
// requests waiting for a permit (each is a parked goroutine), well past
// what the waits let gather.
const DefaultRunQueue = 256

// Defaults of Opts.ReadWait and BookingWait: a slot list is answered
// within the p99 of 50 ms the API aims at or refused; a booking, which a
// patient waits for at the opening, may wait longer.
const (
	DefaultReadWait    = 20 * time.Millisecond
	DefaultBookingWait = 200 * time.Millisecond
)

// DefaultMaxRunning is Opts.MaxRunning when it is zero: one appointment
// request working per CPU the daemon may use but one, which is left to
// the engine, the kiosks and the counters; at least one.
func DefaultMaxRunning() int { return max(runtime.GOMAXPROCS(0)-1, 1) }

// runningKey is the context key of an admitted request's permit.
type runningKey struct{}

// permit is an admitted request's hold on the CPU share. Only the
// request's own goroutine uses it.
type permit struct {
	s    *share
	held bool
}

// Admit lets an appointment request begin: it takes one of the front's
// MaxRunning permits, waiting at most BookingWait behind at most
// RunQueue others, or is refused as ErrOverloaded. The request passes the context returned to
// the front's methods, which give the permit back while they wait; done
// ends the request's hold.
func (f *Front) Admit(ctx context.Context) (context.Context, func(), error) {
	return f.admit(ctx, f.running.queue, f.bookingWait, f.running.what)
}

// AdmitRead is Admit for a slot list: it waits to begin at most ReadWait,
// and only behind fewer than ReadQueue others, so that a growing queue
// sheds reads before bookings (their permits are the same).
func (f *Front) AdmitRead(ctx context.Context) (context.Context, func(), error) {
	return f.admit(ctx, f.readQueue, f.readWait, "slot list requests")
}

func (f *Front) admit(ctx context.Context, queue int64, wait time.Duration, what string) (context.Context, func(), error) {
	if _, err := f.running.enterWithin(ctx, queue, wait, what); err != nil {
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
