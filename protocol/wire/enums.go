package wire

import (
	"fmt"
	"slices"
)

// Role is what a device is (HELLO, WELCOME).
type Role uint8

// Roles.
const (
	// RoleKiosk takes tickets and asks status.
	RoleKiosk Role = 1
	// RoleKeypad acts for the one counter it is bound to.
	RoleKeypad Role = 2
	// RoleDisplay only subscribes to events.
	RoleDisplay Role = 3
	// RoleConsole subscribes and acts on any counter (supervisor).
	RoleConsole Role = 4
)

// Class is a ticket class (ordering within a service).
type Class uint8

// Ticket classes.
const (
	// ClassNormal is the default class.
	ClassNormal Class = 0
	// ClassVIP is served before normal tickets.
	ClassVIP Class = 1
	// ClassEmergency is served before everything.
	ClassEmergency Class = 2
	// ClassRevisit is a customer seen earlier today.
	ClassRevisit Class = 3
	// ClassAppointment is an appointment checked in.
	ClassAppointment Class = 4
	// ClassReentered is a no-show put back into the queue.
	ClassReentered Class = 5
	// ClassSiteFirst is the first value of a site's own classes (the bank
	// example's "priority"): 16 and above are numbered by the daemon from
	// the site's configuration and named in WELCOME.Classes.
	ClassSiteFirst Class = 16
)

// TicketStatus is the state of a ticket.
type TicketStatus uint8

// Ticket statuses.
const (
	// StatusUnknown means not set.
	StatusUnknown TicketStatus = 0
	// StatusWaiting is waiting to be called.
	StatusWaiting TicketStatus = 1
	// StatusCalled is called to a counter.
	StatusCalled TicketStatus = 2
	// StatusServing is being served.
	StatusServing TicketStatus = 3
	// StatusDone is served.
	StatusDone TicketStatus = 4
	// StatusNoShow did not come when called.
	StatusNoShow TicketStatus = 5
	// StatusCancelled was cancelled.
	StatusCancelled TicketStatus = 6
	// StatusExpired was still open at day rollover.
	StatusExpired TicketStatus = 7
)

// EventKind is the type of an EVENT.
type EventKind uint8

// Event kinds.
const (
	// EventIssued: a ticket was issued.
	EventIssued EventKind = 1
	// EventCalled: a ticket was called to a counter.
	EventCalled EventKind = 2
	// EventRecalled: a called ticket was announced again.
	EventRecalled EventKind = 3
	// EventNoShow: a called ticket did not show up.
	EventNoShow EventKind = 4
	// EventReentered: a no-show ticket went back to waiting.
	EventReentered EventKind = 5
	// EventTransferred: a ticket moved to another service or counter.
	EventTransferred EventKind = 6
	// EventServing: service started.
	EventServing EventKind = 7
	// EventDone: service finished.
	EventDone EventKind = 8
	// EventCancelled: a ticket was cancelled.
	EventCancelled EventKind = 9
	// EventExpired: a ticket expired at day rollover.
	EventExpired EventKind = 10
	// EventCounterOpened: a counter opened or resumed.
	EventCounterOpened EventKind = 11
	// EventCounterPaused: a counter paused.
	EventCounterPaused EventKind = 12
	// EventCounterClosed: a counter closed.
	EventCounterClosed EventKind = 13
	// EventPrintFailed: a ticket was issued but its paper copy did not
	// print (paper out, cover open, printer silent).
	EventPrintFailed EventKind = 14
	// EventBookingHeld: a place of a slot is held for a patient until the
	// hold is confirmed or expires (it counts as booked).
	EventBookingHeld EventKind = 15
	// EventBookingBooked: a place of a slot was booked.
	EventBookingBooked EventKind = 16
	// EventBookingConfirmed: a held place was confirmed (it was counted
	// as booked when held).
	EventBookingConfirmed EventKind = 17
	// EventBookingCancelled: a booking was cancelled; its place is free.
	EventBookingCancelled EventKind = 18
	// EventBookingCheckedIn: a booking was checked in and became the
	// ticket of TicketID and Number.
	EventBookingCheckedIn EventKind = 19
	// EventBookingMissed: a booking was not checked in by the end of its
	// slot and grace.
	EventBookingMissed EventKind = 20
	// EventBookingExpired: a hold ran out unconfirmed; its place is free.
	EventBookingExpired EventKind = 21
)

// CounterState is the state of a counter in a SNAPSHOT.
type CounterState uint8

// Counter states.
const (
	// CounterClosed is not serving.
	CounterClosed CounterState = 0
	// CounterOpen is serving and can be called to.
	CounterOpen CounterState = 1
	// CounterPaused is temporarily not called to.
	CounterPaused CounterState = 2
)

var (
	roleNames   = []string{1: "kiosk", 2: "keypad", 3: "display", 4: "console"}
	classNames  = []string{"normal", "vip", "emergency", "revisit", "appointment", "reentered"}
	statusNames = []string{"unknown", "waiting", "called", "serving", "done", "no_show", "cancelled", "expired"}
	eventNames  = []string{1: "issued", 2: "called", 3: "recalled", 4: "no_show", 5: "reentered", 6: "transferred", 7: "serving", 8: "done", 9: "cancelled", 10: "expired", 11: "counter_opened", 12: "counter_paused", 13: "counter_closed", 14: "print_failed",
		15: "booking_held", 16: "booking_booked", 17: "booking_confirmed", 18: "booking_cancelled", 19: "booking_checked_in", 20: "booking_missed", 21: "booking_expired"}
	counterNames = []string{"closed", "open", "paused"}
)

func enumName(names []string, v uint8) string {
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%d", v)
}

// enumNamed is the value whose name is name, the inverse of enumName for
// the names of the table.
func enumNamed(names []string, name string) (uint8, bool) {
	i := slices.Index(names, name)
	if name == "" || i < 0 {
		return 0, false
	}
	return uint8(i), true
}

// String returns the lower-case name of r, or its number if unknown.
func (r Role) String() string { return enumName(roleNames, uint8(r)) }

// RoleNamed returns the role whose String is name (kiosk, keypad, display
// or console); false for any other name.
func RoleNamed(name string) (Role, bool) {
	v, ok := enumNamed(roleNames, name)
	return Role(v), ok
}

// known reports whether r is one of the four roles (option known: HELLO
// claims a role the daemon must recognise).
func (r Role) known() bool { return int(r) < len(roleNames) && roleNames[r] != "" }

// String returns the lower-case name of c, or its number if unknown.
func (c Class) String() string { return enumName(classNames, uint8(c)) }

// ClassNamed returns the class whose String is name (normal, vip,
// emergency, revisit, appointment or reentered); false for any other name.
func ClassNamed(name string) (Class, bool) {
	v, ok := enumNamed(classNames, name)
	return Class(v), ok
}

// String returns the lower-case name of s, or its number if unknown.
func (s TicketStatus) String() string { return enumName(statusNames, uint8(s)) }

// String returns the lower-case name of k, or its number if unknown.
func (k EventKind) String() string { return enumName(eventNames, uint8(k)) }

// String returns the lower-case name of s, or its number if unknown.
func (s CounterState) String() string { return enumName(counterNames, uint8(s)) }

// Actions is the WELCOME bitmask of requests a device may send: bit n set
// allows request type 0x10+n.
type Actions uint32

// Allow returns the Actions allowing every request type in ts; types that are
// not requests are ignored.
func Allow(ts ...MsgType) Actions {
	var a Actions
	for _, t := range ts {
		if t.IsRequest() {
			a |= 1 << (t - 0x10)
		}
	}
	return a
}

// Allows reports whether a allows request type t.
func (a Actions) Allows(t MsgType) bool {
	return t.IsRequest() && a&(1<<(t-0x10)) != 0
}

// RoleActions returns the requests a role may send, as in the role table of
// PROTOCOL.md; the daemon sends it in WELCOME.Allowed. An unknown role may
// send nothing.
func RoleActions(r Role) Actions {
	switch r {
	case RoleKiosk:
		return Allow(TypeTakeTicket, TypeStatus, TypeCheckIn)
	case RoleKeypad:
		return Allow(TypeCallNext, TypeCallNumber, TypeRecall, TypeNoShow, TypeReenter, TypeStart,
			TypeComplete, TypeTransfer, TypePause, TypeResume, TypeStatus, TypeSubscribe)
	case RoleDisplay:
		return Allow(TypeSubscribe, TypeStatus)
	case RoleConsole:
		var a Actions
		for t := MsgType(0x10); t <= TypeCheckIn; t++ {
			a |= Allow(t)
		}
		return a
	}
	return 0
}
