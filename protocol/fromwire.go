package protocol

import (
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// A reader on the far side of a connection (the console) folds what the
// daemon sends with the same reducer as the daemon's own readers
// (package view). QueueEvent and QueueSnapshot turn the frames back into the
// queue's values, inverting eventMsg and snapshotBody through the same
// tables.

// QueueEvent is the queue event an EVENT frame carries; false for an event
// kind the queue does not have (COUNTER_CLOSED, or a kind newer than this
// build). Times are whole milliseconds, as on the wire.
func QueueEvent(m *wire.Event) (queue.Event, bool) {
	kind, detail := m.Kind, ""
	if kind == wire.EventBookingConfirmed {
		kind, detail = wire.EventBookingBooked, queue.DetailConfirmed
	}
	typ, ok := fromWire(eventToWire, kind)
	if !ok {
		return queue.Event{}, false
	}
	e := queue.Event{
		Site: m.Site, Version: int64(m.Version), Type: typ, TicketID: int64(m.TicketID), Number: m.Number,
		Service: m.Service, Issuer: m.Issuer, Day: m.TicketDay, Counter: queue.CounterID(m.Counter), Actor: m.Actor,
		CallCount: int(m.CallCount), FromQueue: m.FromService, FromCounter: queue.CounterID(m.FromCounter),
		Waited: time.Duration(m.WaitedMS) * time.Millisecond, ServiceTime: time.Duration(m.ServiceMS) * time.Millisecond,
	}
	if m.TimeMS != 0 {
		e.At = time.UnixMilli(m.TimeMS)
	}
	if typ == queue.EventTransferred && m.ToCounter != 0 {
		e.Detail = queue.DetailToCounter + queue.CounterID(m.ToCounter)
	}
	if typ.IsBooking() {
		e.Detail, e.Resource, e.BookingID = detail, m.Resource, int64(m.BookingID)
		if m.SlotMS != 0 {
			e.SlotAt = time.UnixMilli(m.SlotMS)
		}
		if e.Day == "" {
			e.Day = m.ServiceDay
		}
		return e, true
	}
	if m.TicketID == 0 {
		return e, true // a counter event
	}
	e.Status, _ = fromWire(statusToWire, m.Status)
	e.From, _ = fromWire(statusToWire, m.From)
	e.Class, _ = fromWire(classToWire, m.Class)
	if e.Issuer == "" {
		e.Issuer = e.Service
	}
	if e.Day == "" {
		e.Day = m.ServiceDay
	}
	return e, true
}

// QueueSnapshot is the snapshot a SNAPSHOT frame carries. Waits are whole
// seconds, as on the wire; a counter's ticket carries its id, number,
// status and queue only.
func QueueSnapshot(m *wire.Snapshot) queue.Snapshot {
	snap := queue.Snapshot{Site: m.Site, Day: m.ServiceDay, Version: int64(m.Version)}
	if m.TimeMS != 0 {
		snap.At = time.UnixMilli(m.TimeMS)
	}
	for _, si := range m.Services {
		snap.Services = append(snap.Services, queue.ServiceStatus{
			Code: si.Code, Waiting: int(si.Waiting), LongestWait: time.Duration(si.LongestWaitS) * time.Second,
			AvgWait: time.Duration(si.AvgWaitS) * time.Second, AvgService: time.Duration(si.AvgServiceS) * time.Second,
			Issued: int(si.Issued), Called: int(si.Called), Served: int(si.Served), NoShows: int(si.NoShows),
			Cancelled: int(si.Cancelled), Open: si.Open, Full: si.Full,
		})
	}
	for _, ci := range m.Counters {
		cs := queue.CounterStatus{ID: queue.CounterID(ci.ID), Served: int(ci.Served)}
		cs.Mode, _ = fromWire(modeToWire, ci.State)
		if ci.SinceMS != 0 {
			cs.Since = time.UnixMilli(ci.SinceMS)
		}
		if ci.Number != "" {
			st, _ := fromWire(statusToWire, ci.Status)
			cs.Ticket = &queue.Ticket{ID: int64(ci.TicketID), Site: m.Site, Number: ci.Number, Status: st,
				Queue: ci.Service, Counter: cs.ID}
		}
		snap.Counters = append(snap.Counters, cs)
	}
	for _, r := range m.Resources {
		snap.Resources = append(snap.Resources, queue.ResourceDay{Resource: r.ID, Day: m.ServiceDay, Booked: int(r.Booked),
			CheckedIn: int(r.CheckedIn), Missed: int(r.Missed), Cancelled: int(r.Cancelled)})
	}
	return snap
}

// fromWire inverts one of the tables onto the wire; false for a wire value
// none maps to.
func fromWire[Q comparable, W comparable](m map[Q]W, w W) (Q, bool) {
	for q, v := range m {
		if v == w {
			return q, true
		}
	}
	var zero Q
	return zero, false
}
