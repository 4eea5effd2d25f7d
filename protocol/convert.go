package protocol

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/view"
)

// statusOf maps an engine error onto what a device is told. Domain
// refusals keep the detail the engine gave (it names the ticket, service or
// counter) after the code's table message; anything else is logged by the
// caller and reported with the code's message alone.
func statusOf(err error) (se *wire.StatusError, internal bool) {
	if err == nil {
		return nil, false
	}
	var ws *wire.StatusError
	if errors.As(err, &ws) {
		return ws, false
	}
	for _, m := range errorMap {
		if errors.Is(err, m.err) {
			return m.status.WithMsg(refusalMsg(err, m.err, m.status)), false
		}
	}
	switch {
	case errors.Is(err, queue.ErrClosed):
		return shuttingDown, false
	case errors.Is(err, queue.ErrConflict), errors.Is(err, queue.ErrAborted):
		return wire.ErrBusy, true
	case errors.Is(err, queue.ErrUnavailable):
		return wire.ErrStoreUnavailable, true
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return wire.ErrBusy.WithMsg("server busy: request timed out"), true
	}
	return wire.ErrInternal, true
}

// refusalMsg is the message of a refusal: the code's table message, then
// the detail the engine wrote after the sentinel ("%w: detail"), if it
// wrote the refusal that way; a refusal wrapped by another layer (whose
// text may name the store) gets the table message alone.
func refusalMsg(err, sentinel error, st *wire.StatusError) string {
	var te *queue.TransitionError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s: ticket %s is %s: cannot %s", st.Msg, te.Number, te.Status, te.Action)
	}
	var early *queue.CheckInEarlyError
	if errors.As(err, &early) {
		return fmt.Sprintf("%s: booking %s: come back at %s", st.Msg, early.Code, early.ComeBack())
	}
	var ce *queue.ClosedError
	if errors.As(err, &ce) {
		return st.Msg + ": " + ce.Notice()
	}
	// A refused check-in names the booking by the code the kiosk sent,
	// as 0x2B and 0x2C do, so that its screen can show it back (§5a).
	var be *queue.BookingStateError
	if errors.As(err, &be) {
		return fmt.Sprintf("%s: booking %s is %s: cannot %s", st.Msg, bookingName(be.ID, be.Code), be.Status, be.Action)
	}
	var late *queue.CheckInLateError
	if errors.As(err, &late) {
		return fmt.Sprintf("%s: booking %s: %s", st.Msg, bookingName(late.ID, late.Code), late.Reason)
	}
	detail, ok := strings.CutPrefix(err.Error(), sentinel.Error()+": ")
	if !ok || strings.Contains(detail, "queue: ") {
		return st.Msg
	}
	return st.Msg + ": " + detail
}

// bookingName is how a refusal names a booking: its code when known,
// else its id.
func bookingName(id int64, code string) string {
	if code != "" {
		return code
	}
	return strconv.FormatInt(id, 10)
}

var errorMap = []struct {
	err    error
	status *wire.StatusError
}{
	{queue.ErrUnknownService, wire.ErrUnknownService},
	{queue.ErrServiceFull, wire.ErrServiceFull},
	{queue.ErrServiceClosed, wire.ErrServiceClosed},
	{queue.ErrNoneWaiting, wire.ErrNoTicketWaiting},
	{queue.ErrInvalidTransition, wire.ErrInvalidTransition},
	{queue.ErrCounterBusy, wire.ErrInvalidTransition},
	{queue.ErrCounterIdle, wire.ErrInvalidTransition},
	{queue.ErrNotFound, wire.ErrUnknownTicket},
	{queue.ErrReentryLimit, wire.ErrReentryLimit},
	{queue.ErrCounterPaused, wire.ErrCounterPaused},
	{queue.ErrUnknownCounter, wire.ErrUnknownCounter},
	{queue.ErrKeyReused, wire.ErrKeyReused},
	{queue.ErrBadRequest, wire.ErrBadPayload},
	{queue.ErrUnknownSite, wire.ErrUnknownSite},
	{queue.ErrBookingNotFound, wire.ErrUnknownBooking},
	{queue.ErrCheckInEarly, wire.ErrCheckInEarly},
	{queue.ErrCheckInLate, wire.ErrCheckInLate},
	{queue.ErrBookingState, wire.ErrBookingNotActive},
}

var statusToWire = map[queue.Status]wire.TicketStatus{
	queue.StatusWaiting: wire.StatusWaiting, queue.StatusCalled: wire.StatusCalled, queue.StatusServing: wire.StatusServing,
	queue.StatusDone: wire.StatusDone, queue.StatusNoShow: wire.StatusNoShow, queue.StatusCancelled: wire.StatusCancelled,
	queue.StatusExpired: wire.StatusExpired,
}

var eventToWire = map[queue.EventType]wire.EventKind{
	queue.EventIssued: wire.EventIssued, queue.EventCalled: wire.EventCalled, queue.EventRecalled: wire.EventRecalled,
	queue.EventNoShow: wire.EventNoShow, queue.EventReentered: wire.EventReentered, queue.EventTransferred: wire.EventTransferred,
	queue.EventServing: wire.EventServing, queue.EventDone: wire.EventDone, queue.EventCancelled: wire.EventCancelled,
	queue.EventExpired: wire.EventExpired, queue.EventCounterOpened: wire.EventCounterOpened,
	queue.EventCounterPaused: wire.EventCounterPaused, queue.EventPrintFailed: wire.EventPrintFailed,
	queue.EventBookingHeld: wire.EventBookingHeld, queue.EventBookingBooked: wire.EventBookingBooked,
	queue.EventBookingCancelled: wire.EventBookingCancelled, queue.EventBookingCheckedIn: wire.EventBookingCheckedIn,
	queue.EventBookingMissed: wire.EventBookingMissed, queue.EventBookingExpired: wire.EventBookingExpired,
}

var modeToWire = map[queue.CounterMode]wire.CounterState{
	queue.CounterOpen: wire.CounterOpen, queue.CounterPaused: wire.CounterPaused, queue.CounterClosed: wire.CounterClosed,
}

// ticketMsg is the TICKET answer for t of site; pos may be nil.
func ticketMsg(site *queue.Site, t *queue.Ticket, pos *queue.Position) *wire.Ticket {
	m := &wire.Ticket{
		Class: wireClass(site, t.Class),
		ID:    uint64(t.ID), Site: t.Site, Service: t.Queue, Number: t.Number,
		Status: statusToWire[t.Status], Counter: queue.CounterNumber(t.Counter),
		CallCount: uint16(min(t.CallCount, 0xFFFF)), ServiceDay: t.Day, Version: uint64(max(t.Version, 0)),
	}
	if m.Service == "" {
		m.Service = t.Service
	}
	if t.Status == queue.StatusWaiting && t.TargetCounter != "" {
		// Transferred to a counter: the one it now waits for.
		m.Counter = queue.CounterNumber(t.TargetCounter)
	}
	if !t.IssuedAt.IsZero() {
		m.IssuedMS = t.IssuedAt.UnixMilli()
	}
	if !t.CalledAt.IsZero() {
		m.CalledMS = t.CalledAt.UnixMilli()
	}
	if pos != nil {
		m.PeopleAhead = uint32(max(pos.Ahead, 0))
		m.WaitSeconds = uint32(max(pos.Wait.Seconds(), 0))
		if !pos.Appointment.IsZero() {
			m.AppointmentMS = pos.Appointment.UnixMilli()
		}
	}
	return m
}

// eventMsg is the EVENT frame for ev; false for event types devices are
// not told about.
func eventMsg(site *queue.Site, ev *queue.Event) (*wire.Event, bool) {
	k, ok := eventToWire[ev.Type]
	if !ok {
		return nil, false
	}
	m := &wire.Event{
		Version: uint64(ev.Version), Site: ev.Site, Kind: k, Number: ev.Number, Service: ev.Service,
		Counter: queue.CounterNumber(ev.Counter), Actor: ev.Actor, Status: statusToWire[ev.Status],
		TicketID: uint64(ev.TicketID), CallCount: uint16(min(ev.CallCount, 0xFFFF)),
		From: statusToWire[ev.From], FromService: ev.FromQueue, FromCounter: queue.CounterNumber(ev.FromCounter),
		Class: wireClass(site, ev.Class), WaitedMS: millis(ev.Waited), ServiceMS: millis(ev.ServiceTime),
	}
	if ev.Issuer != ev.Service {
		m.Issuer = ev.Issuer
	}
	if to := ev.ToCounter(); to != "" {
		m.ToCounter = queue.CounterNumber(to)
	}
	if !ev.At.IsZero() {
		m.TimeMS = ev.At.UnixMilli()
		m.ServiceDay = site.Day(ev.At)
	}
	if ev.Day != m.ServiceDay {
		m.TicketDay = ev.Day
	}
	if ev.Type.IsBooking() {
		// What a console counts per resource; nothing of the patient.
		m.Resource, m.BookingID = ev.Resource, uint64(max(ev.BookingID, 0))
		if !ev.SlotAt.IsZero() {
			m.SlotMS = ev.SlotAt.UnixMilli()
		}
		if ev.Type == queue.EventBookingBooked && ev.Detail == queue.DetailConfirmed {
			m.Kind = wire.EventBookingConfirmed
		}
	}
	return m, true
}

// snapshotBody is the SNAPSHOT answer for snap, without device health.
func snapshotBody(site *queue.Site, snap *queue.Snapshot) *wire.Snapshot {
	m := &wire.Snapshot{Version: uint64(snap.Version), Site: snap.Site, ServiceDay: snap.Day}
	if !snap.At.IsZero() {
		m.TimeMS = snap.At.UnixMilli()
	}
	names := map[string]string{}
	targets := map[string]time.Duration{}
	for _, sv := range site.Services {
		names[sv.Code] = site.PickName(sv.Names, "", sv.Code)
		targets[sv.Code] = sv.WaitTarget
	}
	for _, st := range snap.Services {
		m.Services = append(m.Services, wire.ServiceInfo{
			Code: st.Code, Name: names[st.Code], Waiting: uint32(st.Waiting), Served: uint32(st.Served),
			Issued: uint32(st.Issued), Open: st.Open && !st.Full,
			NoShows: uint32(st.NoShows), Cancelled: uint32(st.Cancelled), Full: st.Full,
			LongestWaitS: seconds(st.LongestWait), AvgWaitS: seconds(st.AvgWait), AvgServiceS: seconds(st.AvgService),
			WaitTargetS: seconds(targets[st.Code]), Called: uint32(st.Called),
		})
	}
	cnames := map[string]string{}
	for _, c := range site.Counters {
		cnames[c.ID] = site.PickName(c.Names, "", "Counter "+c.ID)
	}
	for _, c := range snap.Counters {
		ci := wire.CounterInfo{ID: queue.CounterNumber(c.ID), Name: cnames[c.ID], State: modeToWire[c.Mode], Served: uint32(c.Served)}
		if !c.Since.IsZero() {
			ci.SinceMS = c.Since.UnixMilli()
		}
		if c.Ticket != nil {
			ci.Number, ci.Status, ci.Service = c.Ticket.Number, statusToWire[c.Ticket.Status], c.Ticket.Queue
			ci.TicketID = uint64(c.Ticket.ID)
		}
		m.Counters = append(m.Counters, ci)
	}
	m.Resources = resourceInfos(site, snap)
	return m
}

// resourceInfos are the appointments of the snapshot's day of every
// resource of the site, configured ones first.
func resourceInfos(site *queue.Site, snap *queue.Snapshot) []wire.ResourceInfo {
	var out []wire.ResourceInfo
	at := map[string]int{}
	for _, r := range site.Resources {
		at[r.ID] = len(out)
		out = append(out, wire.ResourceInfo{ID: r.ID, Name: site.PickName(r.Names, "", r.ID), Service: r.Service})
	}
	for _, rd := range snap.Resources {
		if rd.Day != snap.Day {
			continue
		}
		i, ok := at[rd.Resource]
		if !ok {
			i = len(out)
			at[rd.Resource] = i
			out = append(out, wire.ResourceInfo{ID: rd.Resource, Name: rd.Resource})
		}
		r := &out[i]
		r.Booked, r.CheckedIn, r.Missed, r.Cancelled = count32(rd.Booked), count32(rd.CheckedIn), count32(rd.Missed), count32(rd.Cancelled)
	}
	return out
}

// count32 is n for a u32 field, 0 for negative counts.
func count32(n int) uint32 { return uint32(min(max(n, 0), 1<<32-1)) }

// millis is d in whole milliseconds for the wire, 0 for negative
// durations.
func millis(d time.Duration) uint32 {
	if d <= 0 {
		return 0
	}
	return uint32(min(d/time.Millisecond, 1<<32-1))
}

// seconds is d in whole seconds for the wire, 0 for negative durations.
func seconds(d time.Duration) uint32 {
	if d <= 0 {
		return 0
	}
	return uint32(min(d/time.Second, 1<<32-1))
}

// waitingFor counts the tickets waiting in the services a counter serves.
func waitingFor(site *queue.Site, v *view.Site, counter string) int {
	n := 0
	for _, sv := range v.Services {
		if serves(site, counter, sv.Code) {
			n += sv.Waiting
		}
	}
	return n
}

// pageResources keeps, of a SNAPSHOT's resources, those of only (nil: all)
// after the resource after (""; from the first), as many whole records
// as fit in wire.ResourcePageBytes: ResourceTotal counts what only selects,
// ResourceNext names the last one listed when more follow. An after that
// only does not select is ERROR 0x04.
func pageResources(m *wire.Snapshot, only map[string]bool, after string) error {
	rs := m.Resources
	if only != nil {
		rs = slices.DeleteFunc(rs, func(r wire.ResourceInfo) bool { return !only[r.ID] })
	}
	m.ResourceTotal, m.ResourceNext = uint32(len(rs)), ""
	if after != "" {
		i := slices.IndexFunc(rs, func(r wire.ResourceInfo) bool { return r.ID == after })
		if i < 0 {
			return wire.ErrBadPayload.WithMsg("unknown resource: " + after)
		}
		rs = rs[i+1:]
	}
	size := 0
	for i := range rs {
		size += resourceSize(&rs[i])
		if size > wire.ResourcePageBytes && i > 0 {
			rs, m.ResourceNext = rs[:i], rs[i-1].ID
			break
		}
	}
	m.Resources = rs
	return nil
}

// resourceSize is the bytes r takes in a SNAPSHOT: its record's field
// header and its fields, each a header and its value (a u32 in 4 bytes),
// those left empty not sent.
func resourceSize(r *wire.ResourceInfo) int {
	n := wire.FieldHeaderSize
	for _, s := range [...]string{r.ID, r.Name, r.Service} {
		if s != "" {
			n += wire.FieldHeaderSize + len(s)
		}
	}
	for _, v := range [...]uint32{r.Booked, r.CheckedIn, r.Missed, r.Cancelled} {
		if v != 0 {
			n += wire.FieldHeaderSize + 4
		}
	}
	return n
}
