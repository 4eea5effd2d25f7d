package conform

import (
	"errors"
	"fmt"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
)

// forbidden is a request the role may not send, or 0.
func forbidden(r wire.Role) wire.MsgType {
	for t := wire.TypeTakeTicket; t <= wire.TypeReprint; t++ {
		if !wire.RoleActions(r).Allows(t) {
			return t
		}
	}
	return 0
}

func (c *checker) checkRequests() {
	d, ok := c.session(Requests, "STATUS is answered with SNAPSHOT", c.o.Devices[0].Role)
	if !ok {
		return
	}
	defer d.close()
	f, err := d.exchange(0, &wire.Status{})
	c.rep.Check(Requests, "STATUS is answered with SNAPSHOT", err == nil && f.Type == wire.TypeSnapshot, fmt.Sprintf("%s %s %v", f.Type, describe(f), err))
	if t := forbidden(d.cred.Role); t != 0 {
		m, _ := wire.New(t)
		d.nextID++
		f, err := d.rawExchange(d.nextID, encode(d.nextID, 0, m))
		d.wantError(Session, "a request outside WELCOME's Allowed gets ERROR 0x12, the connection stays open", f, err, 0x12, false)
	}
	k, ok := c.session(Requests, "TAKE_TICKET without Service gets ERROR 0x04", wire.RoleKiosk, wire.RoleConsole)
	if !ok {
		return
	}
	defer k.close()
	f, err = k.exchange(0, &wire.TakeTicket{IdemKey: fmt.Sprintf("conform-nosvc-%d", c.fresh())})
	k.wantError(Requests, "TAKE_TICKET without Service gets ERROR 0x04", f, err, 0x04, false)
	f, err = k.exchange(0, &wire.TakeTicket{IdemKey: fmt.Sprintf("conform-svc-%d", c.fresh()), Service: "no-such-service"})
	k.wantError(Errors, "TAKE_TICKET for an unknown service gets ERROR 0x20", f, err, 0x20, false)
}

func (c *checker) checkIdempotency() {
	const name = "a request sent again with RETRY returns the first result"
	if _, ok := c.role(wire.RoleKiosk, wire.RoleConsole); !ok {
		c.checkPauseRetry()
		return
	}
	k, ok := c.session(Retries, name, wire.RoleKiosk, wire.RoleConsole)
	if !ok {
		return
	}
	take := &wire.TakeTicket{IdemKey: fmt.Sprintf("conform-%d", c.fresh()), Service: c.service()}
	var first, again wire.Ticket
	if err := k.do(k.nextID+1, 0, take, &first); err != nil {
		c.rep.Fail(Retries, name, "TAKE_TICKET: %v", err)
		k.close()
		return
	}
	err := k.do(k.nextID, wire.FlagRetry, take, &again)
	c.rep.Check(Retries, name, err == nil && again.ID == first.ID && again.Number == first.Number,
		fmt.Sprintf("first %s (id %d), retry %s (id %d) %v", first.Number, first.ID, again.Number, again.ID, err))
	c.rep.Check(Requests, "TICKET carries the event version of the change", first.Version != 0, "Version 0")
	boot := c.boot
	k.close()
	c.checkDerivedKey(boot)
	if len(c.welcome.Services) < 2 {
		c.rep.Skip(Retries, "the same key for another request gets ERROR 0x29", "the site has one service")
		return
	}
	k, ok = c.session(Retries, "the same key for another request gets ERROR 0x29", wire.RoleKiosk, wire.RoleConsole)
	if !ok {
		return
	}
	defer k.close()
	other := *take
	other.Service = c.welcome.Services[1].Code
	f, err := k.exchange(0, &other)
	k.wantError(Retries, "the same key for another request gets ERROR 0x29", f, err, 0x29, false)
}

// checkDerivedKey: without IdemKey, the same boot nonce and request id on
// a new connection name the same request.
func (c *checker) checkDerivedKey(_ uint64) {
	const name = "without IdemKey, the same boot nonce and request id on a new connection return the same ticket"
	cred, _ := c.role(wire.RoleKiosk, wire.RoleConsole)
	boot := c.fresh()
	var tickets [2]wire.Ticket
	for i := range tickets {
		k, err := c.login(cred, boot)
		if err != nil {
			c.rep.Fail(Retries, name, "%v", err)
			return
		}
		fl := wire.Flags(0)
		if i > 0 {
			fl = wire.FlagRetry
		}
		err = k.do(100, fl, &wire.TakeTicket{Service: c.service()}, &tickets[i])
		k.close()
		if err != nil {
			c.rep.Fail(Retries, name, "TAKE_TICKET %d: %v", i+1, err)
			return
		}
	}
	c.rep.Check(Retries, name, tickets[0].ID == tickets[1].ID, fmt.Sprintf("first %s, retry %s", tickets[0].Number, tickets[1].Number))
}

// checkPauseRetry is the idempotency check of a keypad: PAUSE sent again.
func (c *checker) checkPauseRetry() {
	const name = "a request sent again with RETRY returns the first result"
	d, ok := c.session(Retries, name, wire.RoleKeypad)
	if !ok {
		return
	}
	defer d.close()
	p := &wire.Pause{IdemKey: fmt.Sprintf("conform-pause-%d", c.fresh()), Reason: "conformance"}
	var first, again wire.OK
	err := d.do(d.nextID+1, 0, p, &first)
	if err == nil {
		err = d.do(d.nextID, wire.FlagRetry, p, &again)
	}
	c.rep.Check(Retries, name, err == nil && first.Version == again.Version && first.Version != 0,
		fmt.Sprintf("PAUSE version %d, its retry %d, %v", first.Version, again.Version, err))
	_, _ = d.exchange(0, &wire.Resume{IdemKey: fmt.Sprintf("conform-resume-%d", c.fresh())})
}

func (c *checker) checkSubscribe() {
	const snap, replay = "SUBSCRIBE from 0 is answered with SNAPSHOT, then EVENTs of the changes", "SUBSCRIBE from a version replays the events after it"
	sub, ok := c.session(Heartbeat, snap, wire.RoleDisplay, wire.RoleConsole, wire.RoleKeypad)
	if !ok {
		c.rep.Skip(Heartbeat, replay, "no subscriber")
		return
	}
	var s wire.Snapshot
	if err := sub.do(sub.nextID+1, 0, &wire.Subscribe{}, &s); err != nil {
		c.rep.Fail(Heartbeat, snap, "%v", err)
		sub.close()
		return
	}
	k, ok := c.session(Heartbeat, replay, wire.RoleKiosk, wire.RoleConsole)
	if !ok {
		sub.close()
		return
	}
	_, err := k.exchange(0, &wire.TakeTicket{IdemKey: fmt.Sprintf("conform-sub-%d", c.fresh()), Service: c.service()})
	k.close()
	ev := sub.event(c.o.Timeout)
	c.rep.Check(Heartbeat, snap, err == nil && ev != nil && ev.Version == s.Version+1, fmt.Sprintf("snapshot v%d, then %v (take: %v)", s.Version, eventVersion(ev), err))
	sub.close()
	sub, ok = c.session(Heartbeat, replay, sub.cred.Role)
	if !ok {
		return
	}
	defer sub.close()
	f, err := sub.exchange(0, &wire.Subscribe{FromVersion: s.Version})
	ev = sub.event(c.o.Timeout)
	c.rep.Check(Heartbeat, replay, err == nil && f.Type != wire.TypeError && ev != nil && ev.Version == s.Version+1,
		fmt.Sprintf("answer %s, then %v", f.Type, eventVersion(ev)))
}

// event returns the first EVENT received (or kept) within d, or nil.
func (d *dconn) event(wait time.Duration) *wire.Event {
	end := time.Now().Add(wait)
	for len(d.events) == 0 && time.Now().Before(end) {
		f, err := d.read(time.Until(end))
		if err != nil {
			return nil
		}
		var e wire.Event
		if f.Type == wire.TypeEvent && e.Decode(f.Payload) == nil {
			d.events = append(d.events, &e)
		}
	}
	if len(d.events) == 0 {
		return nil
	}
	e := d.events[0]
	d.events = d.events[1:]
	return e
}

func eventVersion(e *wire.Event) string {
	if e == nil {
		return "no EVENT"
	}
	return fmt.Sprintf("EVENT v%d", e.Version)
}

func (c *checker) checkHeartbeats() {
	const beat, drop = "the daemon sends HEARTBEAT (request id 0) when idle", "a device silent for 3 intervals gets ERROR 0x34 and a close"
	const cadence = "the daemon heartbeats after one interval without a frame, not much sooner nor later"
	d, ok := c.session(Heartbeat, beat, c.o.Devices[0].Role)
	if !ok {
		return
	}
	defer d.close()
	hb := time.Duration(d.w.HeartbeatMS) * time.Millisecond
	start, beats, last := time.Now(), 0, uint16(0)
	// The gaps between the frames the daemon sent, WELCOME the first.
	prev, shortest, longest := start, time.Duration(0), time.Duration(0)
	closed := false
	for end := start.Add(5 * hb); !closed && time.Now().Before(end); {
		f, err := d.read(time.Until(end))
		switch {
		case errors.Is(err, errTimeout):
		case err != nil:
			closed = true
		case f.Type == wire.TypeHeartbeat && f.RequestID == 0:
			beats++
			gap := time.Since(prev)
			prev = time.Now()
			if shortest == 0 || gap < shortest {
				shortest = gap
			}
			longest = max(longest, gap)
		case f.Type == wire.TypeError:
			var e wire.ErrorMsg
			_ = e.Decode(f.Payload)
			last = e.Code
		}
	}
	took := time.Since(start)
	c.rep.Check(Heartbeat, beat, beats >= 2, fmt.Sprintf("%d HEARTBEATs in %s (interval %s)", beats, took.Round(time.Millisecond), hb))
	// Section 7: a HEARTBEAT "whenever it has sent no frame for one
	// interval". A daemon's timer ticks, and the network and scheduler
	// delay it: 0.8 to 1.5 intervals is taken as that.
	c.rep.Check(Heartbeat, cadence, beats >= 2 && shortest >= hb*8/10 && longest <= hb*3/2,
		fmt.Sprintf("%d HEARTBEATs %s to %s apart, interval %s", beats, shortest.Round(time.Millisecond), longest.Round(time.Millisecond), hb))
	c.rep.Check(Heartbeat, drop, closed && last == 0x34 && took >= hb*5/2,
		fmt.Sprintf("closed %v after %s, last ERROR 0x%02x", closed, took.Round(time.Millisecond), last))
}

func (c *checker) checkRateLimit() {
	const name = "past the bucket, requests get ERROR 0x30 with RetryAfterMS"
	if c.welcome.RateLimit == 0 {
		c.rep.Skip(Limits, name, "WELCOME announces no rate limit")
		return
	}
	d, ok := c.session(Limits, name, c.o.Devices[0].Role)
	if !ok {
		return
	}
	defer d.close()
	n := min(3*int(d.w.RateBurst)+10, 500) // enough to empty the bucket even on a slow daemon
	for i := 1; i <= n; i++ {
		_ = d.send(uint32(i)+d.nextID, 0, &wire.Status{})
	}
	limited, answered, after := 0, 0, uint32(0)
	for answered < n {
		f, err := d.read(c.o.Timeout)
		if err != nil {
			break
		}
		if f.Type == wire.TypeHeartbeat || f.Type == wire.TypeEvent {
			continue
		}
		answered++
		c.checkAnswer(f, f.RequestID)
		var e wire.ErrorMsg
		if f.Type == wire.TypeError && e.Decode(f.Payload) == nil && e.Code == 0x30 {
			limited++
			after = max(after, e.RetryAfterMS)
		}
	}
	c.rep.Check(Limits, name, limited > 0 && after > 0 && answered == n,
		fmt.Sprintf("%d of %d answered, %d limited, RetryAfterMS %d (RateLimit %d, RateBurst %d)", answered, n, limited, after, d.w.RateLimit, d.w.RateBurst))
}

func (c *checker) checkWrongMAC() {
	const name = "a wrong MAC gets ERROR 0x10 and a close"
	cred := c.o.Devices[0]
	d, err := c.dial()
	if err != nil {
		c.rep.Fail(Session, name, "%v", err)
		return
	}
	defer d.close()
	f, err := d.exchange(0, &wire.Hello{DeviceID: cred.ID, Role: cred.Role, ProtocolVersion: 1, BootNonce: c.fresh()})
	if err != nil || f.Type != wire.TypeChallenge {
		c.rep.Fail(Session, name, "HELLO got %s %v", f.Type, err)
		return
	}
	f, err = d.exchange(0, &wire.Auth{MAC: make([]byte, wire.NonceSize)})
	d.wantError(Session, name, f, err, 0x10, true)
}

// checkFailedHandshakes: after 5 failed handshakes in a row from one
// address, the 6th HELLO is refused with ERROR 0x30 and RetryAfterMS,
// without a CHALLENGE (section 8); the right MAC after the pause is
// welcomed and clears the count. It runs last: the kit's own address
// backs off.
func (c *checker) checkFailedHandshakes() {
	const five, sixth = "5 failed handshakes in a row are each challenged", "the 6th HELLO after 5 failures gets ERROR 0x30 with RetryAfterMS and a close"
	const after = "after RetryAfterMS, the right MAC is welcomed"
	cred := c.o.Devices[0]
	// A success first clears what earlier checks left.
	d, err := c.login(cred, c.fresh())
	if err != nil {
		c.rep.Fail(Limits, five, "%v", err)
		return
	}
	d.close()
	for i := 1; i <= 5; i++ {
		d, err := c.dial()
		if err != nil {
			c.rep.Fail(Limits, five, "%v", err)
			return
		}
		f, err := d.exchange(0, &wire.Hello{DeviceID: cred.ID, Role: cred.Role, ProtocolVersion: 1, BootNonce: c.fresh()})
		if err != nil || f.Type != wire.TypeChallenge {
			c.rep.Fail(Limits, five, "HELLO after %d failures got %s %s %v", i-1, f.Type, describe(f), err)
			d.close()
			return
		}
		f, err = d.exchange(0, &wire.Auth{MAC: make([]byte, wire.NonceSize)})
		d.close()
		if err != nil || f.Type != wire.TypeError {
			c.rep.Fail(Limits, five, "wrong MAC %d got %s %v", i, f.Type, err)
			return
		}
	}
	c.rep.Pass(Limits, five)
	d, err = c.dial()
	if err != nil {
		c.rep.Fail(Limits, sixth, "%v", err)
		return
	}
	f, err := d.exchange(0, &wire.Hello{DeviceID: cred.ID, Role: cred.Role, ProtocolVersion: 1, BootNonce: c.fresh()})
	var e wire.ErrorMsg
	refused := err == nil && f.Type == wire.TypeError && e.Decode(f.Payload) == nil && e.Code == 0x30 && e.RetryAfterMS > 0
	if !refused {
		c.rep.Fail(Limits, sixth, "answered %s %s %v", f.Type, describe(f), err)
	} else {
		_, closed := d.closed(c.o.Timeout)
		c.rep.Check(Limits, sixth, closed, "the connection stayed open")
	}
	d.close()
	if refused {
		time.Sleep(time.Duration(e.RetryAfterMS)*time.Millisecond + 50*time.Millisecond)
	}
	d, err = c.login(cred, c.fresh())
	c.rep.Check(Limits, after, err == nil, fmt.Sprint(err))
	if err == nil {
		d.close()
	}
}
