package wire

// The daemon's answers and pushes (OK, TICKET, SNAPSHOT, EVENT) and the
// records a SNAPSHOT carries.

// OK is the generic success answer. Wire type OK (0x20).
type OK struct {
	// Version: event version the request produced; 0: none.
	Version uint64
	// LCD: short lines for a keypad display (repeated).
	LCD []string
}

var _ = declare[OK](TypeOK, "OK", fields{
	1: "Version",
	2: "LCD",
})

// Ticket describes one ticket: the answer to TAKE_TICKET, calls and STATUS. Wire type TICKET (0x21).
type Ticket struct {
	// ID: ticket id, unique in the daemon.
	ID uint64
	// Site: site code.
	Site string
	// Service: service code.
	Service string
	// Number: number text, e.g. "A023".
	Number string
	// Class: class.
	Class Class
	// Status: status.
	Status TicketStatus
	// Counter: counter handling it, or the counter a waiting ticket was transferred to; 0: none.
	Counter uint32
	// CallCount: times called.
	CallCount uint16
	// IssuedMS: issue time, Unix milliseconds.
	IssuedMS int64
	// CalledMS: last call time, Unix milliseconds; 0: not called.
	CalledMS int64
	// PeopleAhead: waiting tickets called before this one.
	PeopleAhead uint32
	// WaitSeconds: estimated wait, seconds.
	WaitSeconds uint32
	// ESCPOS: ticket rendered for the printer (only when asked).
	ESCPOS []byte
	// LCD: short lines for a keypad display (repeated), e.g. "A023 -> 5".
	LCD []string
	// ServiceDay: service day, "2006-01-02".
	ServiceDay string
	// Version: event version of the change; 0: none.
	Version uint64
	// NotPrinted: true: the ticket is issued but the daemon's printer did not print it (answer to TAKE_TICKET).
	NotPrinted bool
	// PrintError: why it did not print, e.g. "paper out"; empty when it printed.
	PrintError string
	// AppointmentMS: slot start of the booking a CHECK_IN turned into this ticket, Unix milliseconds; 0: none.
	AppointmentMS int64
}

var _ = declare[Ticket](TypeTicket, "TICKET", fields{
	1:  "ID",
	2:  "Site",
	3:  "Service",
	4:  "Number",
	5:  "Class",
	6:  "Status",
	7:  "Counter",
	8:  "CallCount",
	9:  "IssuedMS",
	10: "CalledMS",
	11: "PeopleAhead",
	12: "WaitSeconds",
	13: "ESCPOS",
	14: "LCD",
	15: "ServiceDay",
	16: "Version",
	17: "NotPrinted",
	18: "PrintError",
	19: "AppointmentMS",
})

// ResourcePageBytes bounds the encoded ResourceInfo records of one SNAPSHOT,
// so that a SNAPSHOT of a site of any number of resources fits its frame
// (MaxPayload) beside its services, counters and devices.
const ResourcePageBytes = 32 << 10

// Snapshot is the state of a site: its services, counters and bookable resources. Wire type SNAPSHOT (0x22).
type Snapshot struct {
	// Version: event version the snapshot reflects.
	Version uint64
	// Site: site code.
	Site string
	// ServiceDay: service day, "2006-01-02".
	ServiceDay string
	// TimeMS: daemon clock, Unix milliseconds.
	TimeMS int64
	// Services: one record per service (repeated).
	Services []ServiceInfo
	// Counters: one record per counter (repeated).
	Counters []CounterInfo
	// Devices: health of the site's devices (repeated).
	Devices []DeviceInfo
	// Resources: the bookable resources and their appointments of ServiceDay, one page of at most ResourcePageBytes (repeated).
	Resources []ResourceInfo
	// Recent: to a console, the last events of the day up to Version, oldest first, which the snapshot already counts (repeated).
	Recent []Event
	// ResourceTotal: bookable resources the device's filter selects, listed here or not.
	ResourceTotal uint32
	// ResourceNext: the last resource of this page when more follow: STATUS ResourceAfter asks for the next page; empty: the list is complete.
	ResourceNext string
}

var _ = declare[Snapshot](TypeSnapshot, "SNAPSHOT", fields{
	1:  "Version",
	2:  "Site",
	3:  "ServiceDay",
	4:  "TimeMS",
	5:  "Services",
	6:  "Counters",
	7:  "Devices",
	8:  "Resources",
	9:  "Recent",
	10: "ResourceTotal",
	11: "ResourceNext",
})

// Event is one committed state change, pushed to subscribers in version order. Wire type EVENT (0x23).
type Event struct {
	// Version: per-site version, +1 per event.
	Version uint64
	// Site: site code.
	Site string
	// Kind: what happened.
	Kind EventKind
	// Number: ticket number text; empty for counter events.
	Number string
	// Service: service code.
	Service string
	// Counter: counter; 0: none.
	Counter uint32
	// Actor: device id or operator.
	Actor string
	// TimeMS: time, Unix milliseconds.
	TimeMS int64
	// Status: ticket status after the event.
	Status TicketStatus
	// TicketID: ticket id.
	TicketID uint64
	// CallCount: times called.
	CallCount uint16
	// ServiceDay: service day, "2006-01-02".
	ServiceDay string
	// From: ticket status before the event; 0 on ISSUED and counter events; on RECALLED and PRINT_FAILED the status after it.
	From TicketStatus
	// FromService: queue the ticket was in before the event; differs from Service after a transfer.
	FromService string
	// FromCounter: counter that held the ticket before the event; 0: none.
	FromCounter uint32
	// Issuer: service that issued the number (Service is the queue it is in now); empty: Service.
	Issuer string
	// Class: the ticket's class.
	Class Class
	// WaitedMS: milliseconds from the ticket's issue to the event; on its first CALLED (CallCount 1), its wait.
	WaitedMS uint32
	// ServiceMS: on DONE, milliseconds from the start of service (SERVING) to the event.
	ServiceMS uint32
	// TicketDay: the ticket's service day, "2006-01-02", or for a booking event its slot's; empty: ServiceDay.
	TicketDay string
	// Resource: the bookable resource of a booking event (Service is the service it serves).
	Resource string
	// BookingID: booking id of a booking event.
	BookingID uint64
	// SlotMS: slot start of a booking event, Unix milliseconds.
	SlotMS int64
	// ToCounter: on TRANSFERRED to one counter, the counter the ticket now waits for (Counter transferred it); 0: none.
	ToCounter uint32
}

var _ = declare[Event](TypeEvent, "EVENT", fields{
	1:  "Version",
	2:  "Site",
	3:  "Kind",
	4:  "Number",
	5:  "Service",
	6:  "Counter",
	7:  "Actor",
	8:  "TimeMS",
	9:  "Status",
	10: "TicketID",
	11: "CallCount",
	12: "ServiceDay",
	13: "From",
	14: "FromService",
	15: "FromCounter",
	16: "Issuer",
	17: "Class",
	18: "WaitedMS",
	19: "ServiceMS",
	20: "TicketDay",
	21: "Resource",
	22: "BookingID",
	23: "SlotMS",
	24: "ToCounter",
})

// ServiceInfo is one service in a SNAPSHOT.
type ServiceInfo struct {
	// Code: service code.
	Code string
	// Name: display name.
	Name string
	// Waiting: tickets waiting.
	Waiting uint32
	// Served: tickets done today.
	Served uint32
	// Issued: tickets issued today.
	Issued uint32
	// LastCalled: number last called.
	LastCalled string
	// Open: true: kiosks may take tickets now.
	Open bool
	// NoShows: tickets marked no-show today.
	NoShows uint32
	// Cancelled: tickets cancelled today.
	Cancelled uint32
	// LongestWaitS: seconds the longest-waiting ticket has waited now.
	LongestWaitS uint32
	// AvgWaitS: average seconds from issue to call today.
	AvgWaitS uint32
	// AvgServiceS: average seconds from start to done today.
	AvgServiceS uint32
	// Full: true: the daily cap is reached.
	Full bool
	// WaitTargetS: the service's wait target in seconds; 0: none.
	WaitTargetS uint32
	// Called: tickets issued by the service today and called at least once (the AvgWaitS is over them).
	Called uint32
}

var _ = declareRecord[ServiceInfo](fields{
	1:  "Code",
	2:  "Name",
	3:  "Waiting",
	4:  "Served",
	5:  "Issued",
	6:  "LastCalled",
	7:  "Open",
	8:  "NoShows",
	9:  "Cancelled",
	10: "LongestWaitS",
	11: "AvgWaitS",
	12: "AvgServiceS",
	13: "Full",
	14: "WaitTargetS",
	15: "Called",
})

// CounterInfo is one counter in a SNAPSHOT.
type CounterInfo struct {
	// ID: counter id.
	ID uint32
	// Name: display name.
	Name string
	// State: open, paused or closed.
	State CounterState
	// Number: ticket it is handling; empty: none.
	Number string
	// Status: status of that ticket.
	Status TicketStatus
	// Service: service of that ticket.
	Service string
	// SinceMS: when the state or the ticket last changed, Unix milliseconds; 0: never.
	SinceMS int64
	// Served: tickets this counter finished today.
	Served uint32
	// TicketID: id of the ticket it is handling; 0: none.
	TicketID uint64
}

var _ = declareRecord[CounterInfo](fields{
	1: "ID",
	2: "Name",
	3: "State",
	4: "Number",
	5: "Status",
	6: "Service",
	7: "SinceMS",
	8: "Served",
	9: "TicketID",
})

// DeviceInfo is the health of one device in a SNAPSHOT.
type DeviceInfo struct {
	// ID: device id, printer id, or "PORT#ADDR" for an LED board or wired keypad.
	ID string
	// Kind: "led", "printer", "keypad" (wired), "device" (a protocol keypad, kiosk or display), "voice".
	Kind string
	// Counter: counter it belongs to; 0: none (hall board, printer, zone).
	Counter uint32
	// Online: true: it answered or is connected.
	Online bool
	// Detail: what is wrong, e.g. "paper_out", "not connected"; empty when fine.
	Detail string
}

var _ = declareRecord[DeviceInfo](fields{
	1: "ID",
	2: "Kind",
	3: "Counter",
	4: "Online",
	5: "Detail",
})

// ResourceInfo is one bookable resource in a SNAPSHOT: its appointments of the snapshot's service day.
type ResourceInfo struct {
	// ID: resource id, e.g. "dr-li".
	ID string
	// Name: display name.
	Name string
	// Service: service code its check-ins get a ticket of.
	Service string
	// Booked: bookings holding a place, not checked in or missed yet.
	Booked uint32
	// CheckedIn: bookings checked in (each became a ticket).
	CheckedIn uint32
	// Missed: bookings not checked in by the end of their slot and grace.
	Missed uint32
	// Cancelled: bookings cancelled and holds expired.
	Cancelled uint32
}

var _ = declareRecord[ResourceInfo](fields{
	1: "ID",
	2: "Name",
	3: "Service",
	4: "Booked",
	5: "CheckedIn",
	6: "Missed",
	7: "Cancelled",
})
