package conform

import (
	"context"
	"fmt"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
)

// The display's scenarios (section 7): events in order, resume after a
// reconnect, a SNAPSHOT after a gap, an unsolicited SNAPSHOT.

// subscribe returns the device's next SUBSCRIBE.
func (h *harness) subscribe(ctx context.Context) (wire.Frame, *wire.Subscribe, error) {
	for {
		f, m, err := h.request(ctx, "let the display subscribe (it should by itself)")
		if err != nil {
			return f, nil, err
		}
		if s, ok := m.(*wire.Subscribe); ok {
			return f, s, nil
		}
		if err := h.answer(f, m); err != nil {
			return f, nil, err
		}
	}
}

// checkFrom checks that SUBSCRIBE (and the HELLO before it) resume after
// version want.
func (h *harness) checkFrom(f wire.Frame, s *wire.Subscribe, want uint64, name string) {
	h.rep.Check(Heartbeat, name, s.FromVersion == want, fmt.Sprintf("SUBSCRIBE FromVersion %d, want %d", s.FromVersion, want))
	h.rep.Check(Heartbeat, "HELLO.LastVersion is the last version seen", h.hello.LastVersion == want,
		fmt.Sprintf("LastVersion %d, want %d", h.hello.LastVersion, want))
}

// event is the EVENT of version v.
func event(v uint64) *wire.Event {
	return &wire.Event{Version: v, Site: "conform", Kind: wire.EventCalled, Number: "A001", Service: "A", Counter: 1,
		TimeMS: time.Now().UnixMilli(), Status: wire.StatusCalled, TicketID: 1, CallCount: 1,
		ServiceDay: time.Now().UTC().Format("2006-01-02")}
}

// push sends the frames of ms (request id 0) after the answer, waits a
// moment for the device to take them in, then drops the connection.
func (h *harness) push(ms ...wire.Message) error {
	for _, m := range ms {
		if err := h.p.send(0, 0, m); err != nil {
			return err
		}
	}
	h.p.closed(300 * time.Millisecond) // heartbeats only, if anything
	h.drop()
	return nil
}

// resume runs one resume scenario: the device's SUBSCRIBE is answered by
// answer, the frames ms follow, the connection drops; the SUBSCRIBE after
// the reconnect must resume from version want.
func (h *harness) resume(ctx context.Context, name string, want uint64, answer func(wire.Frame) error, ms ...wire.Message) error {
	f, _, err := h.subscribe(ctx)
	if err != nil {
		return err
	}
	h.version = want
	if err := answer(f); err != nil {
		return err
	}
	if err := h.push(ms...); err != nil {
		return err
	}
	g, s, err := h.subscribe(ctx)
	if err != nil {
		return err
	}
	h.checkFrom(g, s, want, name)
	h.pending = &pending{g, s}
	return nil
}

// answerSnapshot answers a SUBSCRIBE with the SNAPSHOT of version v.
func (h *harness) answerSnapshot(v uint64) func(wire.Frame) error {
	return func(f wire.Frame) error {
		h.answered[h.key(f)] = true
		return h.p.send(f.RequestID, wire.FlagResponse, h.snapshot(v))
	}
}

// bookingEvent is the EVENT of version v of a booking (section 5a): a
// kind and tags older displays do not know, which they skip but count.
func bookingEvent(v uint64) *wire.Event {
	return &wire.Event{Version: v, Site: "conform", Kind: wire.EventBookingBooked, Service: "A", Actor: "api:conform",
		TimeMS: time.Now().UnixMilli(), ServiceDay: time.Now().UTC().Format("2006-01-02"),
		Resource: "dr-conform", BookingID: 7, SlotMS: time.Now().Add(time.Hour).UnixMilli()}
}

func (h *harness) stepEvents(ctx context.Context) error {
	// 102 is a booking event, then 102 again: a device applies an event
	// only if it is newer, and counts the versions of kinds it skips.
	return h.resume(ctx, "events are applied, of kinds the device may not know too: SUBSCRIBE resumes from the last version", 103, h.answerSnapshot(100),
		event(101), bookingEvent(102), event(103), event(102))
}

func (h *harness) stepGap(ctx context.Context) error {
	return h.resume(ctx, "a SNAPSHOT after a gap replaces the state", 500, h.answerSnapshot(500))
}

func (h *harness) stepUnsolicited(ctx context.Context) error {
	return h.resume(ctx, "an unsolicited SNAPSHOT replaces the state", 900, h.answerOK, h.snapshot(900))
}
