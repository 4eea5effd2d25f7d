package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
)

// Do sends request m and returns the daemon's answer (TICKET, OK or
// SNAPSHOT), retrying as described in the package comment. A refusal comes
// back as an error wrapping *wire.StatusError. The typed methods below are
// thin wrappers; Do is for requests they do not cover (another site, a
// service filter).
func (c *Client) Do(ctx context.Context, m wire.Message) (wire.Message, error) {
	return c.roundTrip(ctx, c.newID(), m, c.opts.Retries+1)
}

// DoOnce sends request m at most once and returns the daemon's answer: no
// resend after a time-out, a dropped connection or a retryable ERROR. It is
// for requests that are not idempotent, such as REPRINT, where sending
// again would act again; if the connection is down it still waits (up to
// Opts.Timeout) for it to come back before sending.
func (c *Client) DoOnce(ctx context.Context, m wire.Message) (wire.Message, error) {
	return c.roundTrip(ctx, c.newID(), m, 1)
}

// roundTrip sends m under request id id until it is answered, attempts
// are spent, ctx ends or the client is closed.
func (c *Client) roundTrip(ctx context.Context, id uint32, m wire.Message, attempts int) (wire.Message, error) {
	first, err := wire.EncodeMessage(nil, id, 0, m)
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", m.Type(), err)
	}
	again, _ := wire.EncodeMessage(nil, id, wire.FlagRetry, m)
	ch, forget := c.expect(id)
	defer forget()

	var (
		lastErr error
		pause   time.Duration // asked for by the daemon (RetryAfterMS)
		lost    *conn         // the connection the last attempt was lost with
	)
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt > 0 {
			d := c.pauseBefore(attempt, pause, lost)
			pause = 0
			if err := c.wait(ctx, d); err != nil {
				return nil, fmt.Errorf("client: %s: %w", m.Type(), err)
			}
			c.log.Debug("retrying", "type", m.Type().String(), "request_id", id, "attempt", attempt+1, "err", lastErr)
		}
		cn, err := c.waitConn(ctx, c.opts.Timeout, lost)
		lost = nil
		if err != nil {
			if errors.Is(err, ErrClosed) || ctx.Err() != nil {
				return nil, fmt.Errorf("client: %s: %w", m.Type(), err)
			}
			lastErr = err
			continue
		}
		frame := first
		if attempt > 0 {
			frame = again
			c.resent.Add(1)
		}
		if err := cn.write(frame); err != nil {
			lastErr, lost = err, cn
			continue
		}
		f, err := c.await(ctx, cn, ch)
		if err != nil {
			if errors.Is(err, ErrClosed) || ctx.Err() != nil {
				return nil, fmt.Errorf("client: %s: %w", m.Type(), err)
			}
			lastErr = err
			if errors.Is(err, errLost) {
				lost = cn
			}
			continue
		}
		ans, err := wire.DecodeMessage(f)
		if err != nil {
			return nil, fmt.Errorf("client: %s: answer: %w", m.Type(), err)
		}
		if e, ok := ans.(*wire.ErrorMsg); ok {
			se := e.Err()
			if se.Retryable {
				lastErr = se
				pause = time.Duration(e.RetryAfterMS) * time.Millisecond
				continue
			}
			return nil, fmt.Errorf("client: %s: %w", m.Type(), se)
		}
		return ans, nil
	}
	return nil, fmt.Errorf("client: %s: gave up after %d attempts: %w", m.Type(), attempts, lastErr)
}

// expect registers request id: its answer comes on ch until forget is
// called.
func (c *Client) expect(id uint32) (ch chan wire.Frame, forget func()) {
	ch = make(chan wire.Frame, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	return ch, func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
}

// pauseBefore is the wait before attempt (1 for the first resend): the
// pause the daemon asked for, else none after a lost connection (the
// redial is the pause: the request goes out on the next connection,
// another daemon's with several, as soon as there is one), else the
// jittered backoff.
func (c *Client) pauseBefore(attempt int, asked time.Duration, lost *conn) time.Duration {
	if asked > 0 || lost != nil {
		return asked
	}
	return jitter(Backoff(attempt-1, c.opts.MinBackoff, c.opts.MaxBackoff))
}

// await waits for the answer on ch, the loss of cn, the attempt time-out,
// ctx or Close.
func (c *Client) await(ctx context.Context, cn *conn, ch chan wire.Frame) (wire.Frame, error) {
	t := time.NewTimer(c.opts.Timeout)
	defer t.Stop()
	select {
	case f := <-ch:
		return f, nil
	case <-cn.dead:
		select { // the answer may have come just before the connection went
		case f := <-ch:
			return f, nil
		default:
		}
		return wire.Frame{}, fmt.Errorf("client: %w: %w", errLost, cn.err)
	case <-t.C:
		return wire.Frame{}, ErrTimeout
	case <-ctx.Done():
		return wire.Frame{}, ctx.Err()
	case <-c.done:
		return wire.Frame{}, ErrClosed
	}
}

// wait pauses d unless ctx ends or the client closes.
func (c *Client) wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return ErrClosed
	}
}

// TicketOpts are the optional fields of TakeTicket.
type TicketOpts struct {
	// IdemKey is an explicit idempotency key (at most 64 bytes), for a
	// device that must retry across its own restarts; empty lets the daemon
	// derive one from the boot nonce and request id.
	IdemKey string
	// ESCPOS asks for the ticket rendered for the printer (Ticket.ESCPOS).
	ESCPOS bool
	// Language is the language of the printed ticket, e.g. "en" or "zh".
	Language string
	// Site overrides Opts.Site.
	Site string
}

// TakeTicket issues a ticket of service (kiosk, console). The answer holds
// the number, people ahead and estimated wait.
func (c *Client) TakeTicket(ctx context.Context, service string, class wire.Class, o TicketOpts) (*wire.Ticket, error) {
	site := cmp.Or(o.Site, c.opts.Site)
	return c.ticket(ctx, &wire.TakeTicket{
		IdemKey: o.IdemKey, Service: service, Class: class, WantESCPOS: o.ESCPOS, Language: o.Language, Site: site,
	})
}

// CheckIn turns the booking with this code into a ticket (CHECK_IN); the
// TICKET's AppointmentMS is the slot's start. Refusals are *wire.StatusError
// 0x2B (unknown code), 0x2C (too early: the message says when to come
// back), 0x2D (too late) and 0x2E (not active).
func (c *Client) CheckIn(ctx context.Context, code string, o TicketOpts) (*wire.Ticket, error) {
	site := cmp.Or(o.Site, c.opts.Site)
	return c.ticket(ctx, &wire.CheckIn{IdemKey: o.IdemKey, Code: code, WantESCPOS: o.ESCPOS, Language: o.Language, Site: site})
}

// ReqOpt sets an optional field of a counter action.
type ReqOpt func(*reqOpts)

type reqOpts struct {
	idemKey, site, service string
}

// WithIdemKey sends an explicit idempotency key instead of letting the
// daemon derive one.
func WithIdemKey(key string) ReqOpt { return func(o *reqOpts) { o.idemKey = key } }

// WithSite acts on another site than Opts.Site (consoles of several sites).
func WithSite(site string) ReqOpt { return func(o *reqOpts) { o.site = site } }

// WithService limits CALL_NEXT to one service (and filters Snapshot).
func WithService(code string) ReqOpt { return func(o *reqOpts) { o.service = code } }

// reqOpts applies opts over the client's defaults.
func (c *Client) reqOpts(opts []ReqOpt) reqOpts {
	o := reqOpts{site: c.opts.Site}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// req gives the counter a request is for (0: Opts.Counter) and its options.
func (c *Client) req(counter uint32, opts []ReqOpt) (uint32, reqOpts) {
	if counter == 0 {
		counter = c.opts.Counter
	}
	return counter, c.reqOpts(opts)
}

// action is the payload of a ticket action of counter on number: every
// wire.CounterAction and wire.NumberAction type converts from it.
func (c *Client) action(counter uint32, number string, opts []ReqOpt) wire.CounterAction {
	counter, o := c.req(counter, opts)
	return wire.CounterAction{IdemKey: o.idemKey, Counter: counter, Number: number, Site: o.site}
}

// CallNext calls the next waiting ticket to counter (0: Opts.Counter, for
// a keypad its own).
func (c *Client) CallNext(ctx context.Context, counter uint32, opts ...ReqOpt) (*wire.Ticket, error) {
	counter, o := c.req(counter, opts)
	return c.ticket(ctx, &wire.CallNext{IdemKey: o.idemKey, Counter: counter, Service: o.service, Site: o.site})
}

// CallNumber calls the waiting ticket number (e.g. "A023") to counter.
func (c *Client) CallNumber(ctx context.Context, counter uint32, number string, opts ...ReqOpt) (*wire.Ticket, error) {
	m := wire.CallNumber(c.action(counter, number, opts))
	return c.ticket(ctx, &m)
}

// Recall announces again the ticket counter has called (number empty: its
// current one).
func (c *Client) Recall(ctx context.Context, counter uint32, number string, opts ...ReqOpt) (*wire.Ticket, error) {
	m := wire.Recall(c.action(counter, number, opts))
	return c.ticket(ctx, &m)
}

// NoShow marks the called ticket as not having come.
func (c *Client) NoShow(ctx context.Context, counter uint32, number string, opts ...ReqOpt) (*wire.Ticket, error) {
	m := wire.NoShow(c.action(counter, number, opts))
	return c.ticket(ctx, &m)
}

// Reenter puts a no-show ticket back into its queue.
func (c *Client) Reenter(ctx context.Context, counter uint32, number string, opts ...ReqOpt) (*wire.Ticket, error) {
	m := wire.Reenter(c.action(counter, number, opts))
	return c.ticket(ctx, &m)
}

// Start begins serving the called ticket.
func (c *Client) Start(ctx context.Context, counter uint32, number string, opts ...ReqOpt) (*wire.Ticket, error) {
	m := wire.Start(c.action(counter, number, opts))
	return c.ticket(ctx, &m)
}

// Complete finishes serving the ticket.
func (c *Client) Complete(ctx context.Context, counter uint32, number string, opts ...ReqOpt) (*wire.Ticket, error) {
	m := wire.Complete(c.action(counter, number, opts))
	return c.ticket(ctx, &m)
}

// Target is where Transfer sends a ticket: another service, a given
// counter, or both.
type Target struct {
	// Service is the service code to wait in; empty keeps the service.
	Service string
	// Counter is the counter that must call it; 0: any.
	Counter uint32
}

// Transfer sends the ticket (number empty: the counter's current one) to
// wait again in another service or for another counter, keeping its number.
func (c *Client) Transfer(ctx context.Context, counter uint32, number string, to Target, opts ...ReqOpt) (*wire.Ticket, error) {
	counter, o := c.req(counter, opts)
	return c.ticket(ctx, &wire.Transfer{
		IdemKey: o.idemKey, Counter: counter, Number: number, ToService: to.Service, ToCounter: to.Counter, Site: o.site,
	})
}

// Cancel cancels a waiting or called ticket.
func (c *Client) Cancel(ctx context.Context, counter uint32, number string, opts ...ReqOpt) (*wire.Ticket, error) {
	m := wire.Cancel(c.action(counter, number, opts))
	return c.ticket(ctx, &m)
}

// Pause stops calls to counter; reason is shown on the console.
func (c *Client) Pause(ctx context.Context, counter uint32, reason string, opts ...ReqOpt) (*wire.OK, error) {
	counter, o := c.req(counter, opts)
	return c.ok(ctx, &wire.Pause{IdemKey: o.idemKey, Counter: counter, Reason: reason, Site: o.site})
}

// Resume reopens a paused counter.
func (c *Client) Resume(ctx context.Context, counter uint32, opts ...ReqOpt) (*wire.OK, error) {
	counter, o := c.req(counter, opts)
	return c.ok(ctx, &wire.Resume{IdemKey: o.idemKey, Counter: counter, Site: o.site})
}

// Status returns ticket number as it stands now: status, counter, people
// ahead, estimated wait.
func (c *Client) Status(ctx context.Context, number string, opts ...ReqOpt) (*wire.Ticket, error) {
	o := c.reqOpts(opts)
	return c.ticket(ctx, &wire.Status{Number: number, Site: o.site})
}

// Snapshot returns the state of the site's services and counters, limited
// to counter when it is not 0 and to a service given WithService.
func (c *Client) Snapshot(ctx context.Context, counter uint32, opts ...ReqOpt) (*wire.Snapshot, error) {
	o := c.reqOpts(opts)
	m := &wire.Status{Counter: counter, Service: o.service, Site: o.site}
	ans, err := c.Do(ctx, m)
	return answer[*wire.Snapshot](m, ans, err)
}

// Reprint prints ticket number of today again on the daemon's network
// printer with id printer (empty: the printer of the kiosk that issued it);
// console only. A reprint changes no state and is sent once, never resent
// by the client (a resent REPRINT would print again): on a lost answer the
// error says so and the caller decides. A printer that failed comes back
// as wire.ErrPrinterFailed with the cause in its message. Only WithSite of
// opts applies.
func (c *Client) Reprint(ctx context.Context, number, printer string, opts ...ReqOpt) error {
	o := c.reqOpts(opts)
	m := &wire.Reprint{Number: number, Printer: printer, Site: o.site}
	ans, err := c.DoOnce(ctx, m)
	_, err = answer[*wire.OK](m, ans, err)
	return err
}

func (c *Client) ticket(ctx context.Context, m wire.Message) (*wire.Ticket, error) {
	ans, err := c.Do(ctx, m)
	return answer[*wire.Ticket](m, ans, err)
}

func (c *Client) ok(ctx context.Context, m wire.Message) (*wire.OK, error) {
	ans, err := c.Do(ctx, m)
	return answer[*wire.OK](m, ans, err)
}

// answer returns the daemon's answer ans to request m as a T, or err, or an
// ErrUnexpected error when the daemon answered with another message.
func answer[T wire.Message](m, ans wire.Message, err error) (T, error) {
	var zero T
	if err != nil {
		return zero, err
	}
	t, ok := ans.(T)
	if !ok {
		return zero, fmt.Errorf("client: %s: %w: %s", m.Type(), ErrUnexpected, ans.Type())
	}
	return t, nil
}
