package conform

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
)

// step is one scenario the harness walks the device through. run records
// its checks; an error is recorded as the failure of the step's own check.
type step struct {
	section Section
	name    string
	run     func(h *harness, ctx context.Context) error
}

// requestSteps are the scenarios of a kiosk and a keypad: the device sends
// one request per step (a person presses the key when prompted).
var requestSteps = []step{
	{Requests, "an answer with an unknown tag is accepted", (*harness).stepAnswer},
	{Retries, "a request whose answer was lost is sent again after reconnecting", (*harness).stepDropped},
	{Errors, "a retryable ERROR (0x31) is retried", (*harness).stepBusy},
	{Limits, "after ERROR 0x30 the retry waits RetryAfterMS", (*harness).stepRate},
	{Errors, "an unknown code is treated by its Retryable flag", (*harness).stepUnknownCode},
	{Errors, "a request refused without Retryable (0x21) is not retried", (*harness).stepRefused},
	{Requests, "an ERROR for another request id is not taken as the answer", (*harness).stepOtherID},
	{Frame, "a frame with a bad CRC-32 closes the connection", (*harness).stepBadCRC},
	{Limits, "a handshake refused with 0x32 is followed by a pause", (*harness).stepRefusedHandshake},
	{Limits, "a HELLO refused with 0x30 is followed by RetryAfterMS before reconnecting", (*harness).stepBackingOff},
	{Heartbeat, "an idle device sends HEARTBEAT every interval", (*harness).stepHeartbeat},
}

// displaySteps are the scenarios of a display: it subscribes by itself.
var displaySteps = []step{
	{Heartbeat, "events are applied, of kinds the device may not know too: SUBSCRIBE resumes from the last version", (*harness).stepEvents},
	{Heartbeat, "a SNAPSHOT after a gap replaces the state", (*harness).stepGap},
	{Heartbeat, "an unsolicited SNAPSHOT replaces the state", (*harness).stepUnsolicited},
	{Errors, "a retryable ERROR (0x31) to SUBSCRIBE is retried", (*harness).stepBusy},
	{Heartbeat, "an idle device sends HEARTBEAT every interval", (*harness).stepIdle},
}

// what the person at the device is asked to do for a request.
func (h *harness) ask() string {
	switch h.o.Role {
	case wire.RoleKiosk:
		return "take a ticket at the kiosk"
	case wire.RoleKeypad:
		return "press a key of the keypad (call next, pause, ...)"
	}
	return "let the display subscribe"
}

func (h *harness) stepAnswer(ctx context.Context) error {
	f, m, err := h.request(ctx, h.ask())
	if err != nil {
		return err
	}
	h.answered[h.key(f)] = true
	ans := h.answerFor(m)
	payload, err := ans.AppendBinary(nil)
	if err != nil {
		return err
	}
	payload = append(payload, 250, 3, 0, 2, 'o', 'k') // tag 250, string "ok": unknown, to be skipped
	if err := h.p.raw(wire.AppendFrame(nil, wire.Frame{Type: ans.Type(), Flags: wire.FlagResponse, RequestID: f.RequestID, Payload: payload})); err != nil {
		return err
	}
	return h.expectNew(ctx, Requests, "an answer with an unknown tag is accepted", f)
}

// expectNew reads the device's next request: it must not be f again. It
// is kept for the next step.
func (h *harness) expectNew(ctx context.Context, s Section, name string, f wire.Frame) error {
	k := h.key(f)
	g, m, err := h.request(ctx, h.ask())
	if err != nil {
		return err
	}
	if h.key(g) == k {
		h.rep.Fail(s, name, "request %d sent again", f.RequestID)
		return h.answer(g, m)
	}
	h.rep.Pass(s, name)
	h.pending = &pending{g, m}
	return nil
}

// retried reads the device's next request, which must be f sent again
// with RETRY, and returns it.
func (h *harness) retried(ctx context.Context, s Section, name string, f wire.Frame) (wire.Frame, wire.Message, error) {
	g, m, err := h.request(ctx, h.ask()+" (or wait for the device to retry)")
	if err != nil {
		return g, m, err
	}
	if g.RequestID != f.RequestID || g.Flags&wire.FlagRetry == 0 || g.Type != f.Type {
		h.rep.Fail(s, name, "sent %s request %d flags 0x%02x, want %s request %d with RETRY", g.Type, g.RequestID, g.Flags, f.Type, f.RequestID)
		return g, m, nil
	}
	h.rep.Pass(s, name)
	return g, m, nil
}

// resent expects request f, whose answer the device did not get, sent
// again (over a new connection), and answers it.
func (h *harness) resent(ctx context.Context, f wire.Frame) error {
	g, m, err := h.retried(ctx, Retries, "a request whose answer was lost is sent again after reconnecting", f)
	if err != nil {
		return err
	}
	return h.answer(g, m)
}

// lose reads the device's next request and loses its answer by how (the
// connection dropped, or the daemon silent until the device gives up);
// the device must send it again.
func (h *harness) lose(ctx context.Context, how func(wire.Frame, wire.Message) error) error {
	f, m, err := h.request(ctx, h.ask())
	if err != nil {
		return err
	}
	if err := how(f, m); err != nil {
		return err
	}
	return h.resent(ctx, f)
}

func (h *harness) stepDropped(ctx context.Context) error {
	return h.lose(ctx, func(wire.Frame, wire.Message) error { h.drop(); return nil })
}

// drop closes the device's connection.
func (h *harness) drop() {
	if h.p != nil {
		h.p.close()
		h.p = nil
	}
}

// refuseThenRetry answers the next request with e and expects it retried,
// no sooner than after wait.
func (h *harness) refuseThenRetry(ctx context.Context, s Section, name string, e *wire.ErrorMsg, wait time.Duration) error {
	f, _, err := h.request(ctx, h.ask())
	if err != nil {
		return err
	}
	e.RequestID = f.RequestID
	// From before the refusal is sent: the device cannot start waiting
	// earlier, while the harness may be scheduled late after the send.
	t0 := time.Now()
	if err := h.refuse(f, e); err != nil {
		return err
	}
	g, m, err := h.retried(ctx, s, name, f)
	if err != nil {
		return err
	}
	if wait > 0 {
		waited := time.Since(t0)
		h.rep.Check(s, name, waited >= wait-20*time.Millisecond, fmt.Sprintf("retried after %s, RetryAfterMS asked %s", waited.Round(time.Millisecond), wait))
	}
	return h.answer(g, m)
}

func (h *harness) stepBusy(ctx context.Context) error {
	name := "a retryable ERROR (0x31) is retried"
	if h.o.Role == wire.RoleDisplay {
		name = "a retryable ERROR (0x31) to SUBSCRIBE is retried"
	}
	return h.refuseThenRetry(ctx, Errors, name, wire.ErrBusy.Reply(0), 0)
}

func (h *harness) stepRate(ctx context.Context) error {
	e := wire.ErrRateLimited.Reply(0)
	e.RetryAfterMS = 500
	return h.refuseThenRetry(ctx, Limits, "after ERROR 0x30 the retry waits RetryAfterMS", e, 500*time.Millisecond)
}

func (h *harness) stepUnknownCode(ctx context.Context) error {
	e := &wire.ErrorMsg{Code: 0x3E, Msg: "conformance: a code the device does not know", Retryable: true, RetryAfterMS: 100}
	return h.refuseThenRetry(ctx, Errors, "an unknown code is treated by its Retryable flag", e, 0)
}

func (h *harness) stepRefused(ctx context.Context) error {
	f, _, err := h.request(ctx, h.ask())
	if err != nil {
		return err
	}
	if err := h.refuse(f, wire.ErrServiceFull.Reply(f.RequestID)); err != nil {
		return err
	}
	return h.expectNew(ctx, Errors, "a request refused without Retryable (0x21) is not retried", f)
}

func (h *harness) stepOtherID(ctx context.Context) error {
	const name = "an ERROR for another request id is not taken as the answer"
	f, m, err := h.request(ctx, h.ask())
	if err != nil {
		return err
	}
	other := f.RequestID + 1000
	e := wire.ErrBusy.Reply(other)
	e.RetryAfterMS = 50
	if err := h.p.send(other, wire.FlagResponse, e); err != nil {
		return err
	}
	got, closed := h.p.closed(800 * time.Millisecond)
	for _, g := range got {
		if g.Type != wire.TypeHeartbeat {
			h.rep.Fail(Requests, name, "after an ERROR for request %d the device sent %s request %d (flags 0x%02x) while request %d waited", other, g.Type, g.RequestID, g.Flags, f.RequestID)
		}
	}
	if closed {
		h.rep.Fail(Requests, name, "the device closed the connection after an ERROR for request %d", other)
		h.drop()
		return h.resent(ctx, f)
	}
	h.rep.Pass(Requests, name)
	return h.answer(f, m)
}

func (h *harness) stepBadCRC(ctx context.Context) error {
	return h.lose(ctx, h.badCRC)
}

// badCRC answers f with a frame whose CRC-32 is wrong: the device must
// close the connection.
func (h *harness) badCRC(f wire.Frame, m wire.Message) error {
	const name = "a frame with a bad CRC-32 closes the connection"
	b := encode(f.RequestID, wire.FlagResponse, h.answerFor(m))
	b[len(b)-1] ^= 0xFF
	if err := h.p.raw(b); err != nil {
		return err
	}
	got, closed := h.p.closed(2 * time.Second)
	for _, g := range got {
		if g.Type != wire.TypeHeartbeat {
			h.rep.Fail(Frame, name, "the device went on and sent %s request %d on the same connection", g.Type, g.RequestID)
			break
		}
	}
	if !closed {
		h.rep.Fail(Frame, name, "the connection was still open 2 s after the bad frame")
	} else {
		h.rep.Pass(Frame, name)
	}
	h.drop()
	return nil
}

func (h *harness) stepRefusedHandshake(ctx context.Context) error {
	return h.lose(ctx, func(wire.Frame, wire.Message) error { return h.refuseHandshake(ctx) })
}

// refuseNext drops the connection, answers the device's next HELLO with
// refusal (given the HELLO's request id) and closes; it returns the
// connection the device comes back on and how long it waited first.
func (h *harness) refuseNext(ctx context.Context, refusal func(p *peer, id uint32)) (*peer, time.Duration, error) {
	h.drop()
	p, _, err := h.nextConn(ctx)
	if err != nil {
		return nil, 0, err
	}
	_, id, err := h.readHello(p)
	if err != nil {
		return nil, 0, err
	}
	refused := time.Now() // before the send: the device cannot start its pause earlier
	refusal(p, id)
	p.close()
	p, at, err := h.nextConn(ctx)
	if err != nil {
		return nil, 0, err
	}
	return p, at.Sub(refused), nil
}

// refuseHandshake refuses the device's next HELLO with 0x32: it must pause
// before it connects again.
func (h *harness) refuseHandshake(ctx context.Context) error {
	const name = "a handshake refused with 0x32 is followed by a pause"
	p, pause, err := h.refuseNext(ctx, func(p *peer, _ uint32) { _ = p.send(0, 0, wire.ErrTooManyConnections.Reply(0)) })
	if err != nil {
		return err
	}
	h.rep.Check(Limits, name, pause >= 200*time.Millisecond, fmt.Sprintf("reconnected after %s", pause.Round(time.Millisecond)))
	return h.handshake(p)
}

// backOffMS is the RetryAfterMS of the HELLO refused as from an address
// backing off.
const backOffMS = 1000

func (h *harness) stepBackingOff(ctx context.Context) error {
	return h.lose(ctx, func(wire.Frame, wire.Message) error { return h.refuseBackingOff(ctx) })
}

// refuseBackingOff answers the device's next HELLO as the daemon answers
// an address past 5 failed handshakes (PROTOCOL.md section 8): ERROR 0x30
// with RetryAfterMS, answering the HELLO, and a close. The device must wait
// that long before it connects again.
func (h *harness) refuseBackingOff(ctx context.Context) error {
	const name = "a HELLO refused with 0x30 is followed by RetryAfterMS before reconnecting"
	p, pause, err := h.refuseNext(ctx, func(p *peer, id uint32) {
		e := wire.ErrRateLimited.Reply(id)
		e.Msg, e.RetryAfterMS = "rate limited: too many failed logins from this address", backOffMS
		_ = p.send(id, wire.FlagResponse, e)
	})
	if err != nil {
		return err
	}
	h.rep.Check(Limits, name, pause >= backOffMS*time.Millisecond*9/10,
		fmt.Sprintf("reconnected after %s, RetryAfterMS %d", pause.Round(time.Millisecond), backOffMS))
	return h.handshake(p)
}

func (h *harness) stepHeartbeat(ctx context.Context) error {
	return h.lose(ctx, func(f wire.Frame, _ wire.Message) error { h.idle(f.RequestID); return nil })
}

// stepIdle: a display that has subscribed has nothing to send.
func (h *harness) stepIdle(ctx context.Context) error {
	if h.p == nil {
		return errors.New("no connection to watch")
	}
	h.idle(0)
	g, m, err := h.subscribe(ctx)
	if err != nil {
		return err
	}
	h.checkFrom(g, m, h.version, "SUBSCRIBE after a reconnect resumes from the last version")
	return h.answerOK(g)
}

// idle sends nothing and watches the device: it must send a HEARTBEAT
// whenever it has sent nothing for one interval, and drop the connection
// after three silent intervals of the daemon. The request held (its id;
// 0: none) may be retried on the same connection meanwhile.
func (h *harness) idle(held uint32) {
	const beatName = "an idle device sends HEARTBEAT every interval"
	const dropName = "a daemon silent for 3 intervals is dropped"
	hb, p := h.o.Heartbeat, h.p
	prev, beats, maxGap := time.Now(), 0, time.Duration(0)
	end := time.Now().Add(6 * hb)
	closed := false
	for !closed && time.Now().Before(end) {
		f, err := p.read(time.Until(end))
		switch {
		case errors.Is(err, errTimeout):
		case err != nil:
			closed = true
		default:
			maxGap, prev = max(maxGap, time.Since(prev)), time.Now()
			switch {
			case f.Type == wire.TypeHeartbeat:
				beats++
				h.heartbeat(f)
			case f.RequestID != held || f.Flags&wire.FlagRetry == 0:
				h.rep.Fail(Heartbeat, beatName, "sent %s request %d while idle", f.Type, f.RequestID)
			}
		}
	}
	silent := time.Since(p.lastSend)
	h.rep.Check(Heartbeat, beatName, beats > 0 && maxGap <= 2*hb,
		fmt.Sprintf("%d HEARTBEATs in %s, longest gap %s, interval %s", beats, (6*hb).Round(time.Millisecond), maxGap.Round(time.Millisecond), hb))
	switch {
	case !closed:
		h.rep.Fail(Heartbeat, dropName, "still connected after %s of silence (interval %s)", silent.Round(time.Millisecond), hb)
	case silent < hb*5/2:
		h.rep.Fail(Heartbeat, dropName, "closed after %s of silence, before 3 intervals of %s", silent.Round(time.Millisecond), hb)
	default:
		h.rep.Pass(Heartbeat, dropName)
	}
	h.drop()
}

// answerOK answers f with OK.
func (h *harness) answerOK(f wire.Frame) error {
	h.answered[h.key(f)] = true
	return h.p.send(f.RequestID, wire.FlagResponse, &wire.OK{})
}
