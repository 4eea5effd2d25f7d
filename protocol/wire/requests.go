package wire

// The requests a device sends (0x10..0x1F). In every request tag 1 is the
// idempotency key, tag 2 the counter, tag 3 the ticket number, tag 4 the
// service and tag 10 the site.

// TakeTicket asks for a new ticket (kiosk). Wire type TAKE_TICKET (0x10).
type TakeTicket struct {
	// IdemKey: idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Service: service code, e.g. "A".
	Service string
	// Class: ticket class, a value of WELCOME `Classes`; 0: normal.
	Class Class
	// WantESCPOS: true: the TICKET answer carries the ticket rendered as ESC/POS bytes.
	WantESCPOS bool
	// Language: language tag for the printed ticket, e.g. "en", "zh".
	Language string
	// Site: site code; empty: the device's site.
	Site string
}

var _ = declare[TakeTicket](TypeTakeTicket, "TAKE_TICKET", fields{
	1:  "IdemKey id",
	4:  "Service id required",
	7:  "Class",
	8:  "WantESCPOS",
	9:  "Language",
	10: "Site id",
})

// CallNext calls the next waiting ticket to a counter. Wire type CALL_NEXT (0x11).
type CallNext struct {
	// IdemKey: idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Counter: counter the action is for; 0: the keypad's own counter.
	Counter uint32
	// Service: only call from this service; empty: the counter's policy.
	Service string
	// Site: site code; empty: the device's site.
	Site string
}

var _ = declare[CallNext](TypeCallNext, "CALL_NEXT", fields{
	1:  "IdemKey id",
	2:  "Counter",
	4:  "Service id",
	10: "Site id",
})

// CounterAction is the payload of RECALL, NO_SHOW, START and COMPLETE: they
// act on the ticket the counter is handling, and Number is ignored (so a
// retried request cannot fail once the ticket has moved on).
type CounterAction struct {
	// IdemKey: idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Counter: counter the action is for; 0: the keypad's own counter.
	Counter uint32
	// Number: ticket number text; empty: the ticket the counter is handling.
	Number string
	// Site: site code; empty: the device's site.
	Site string
}

// counterActionFields declares the fields of every CounterAction.
var counterActionFields = fields{
	1:  "IdemKey id",
	2:  "Counter",
	3:  "Number id",
	10: "Site id",
}

// NumberAction is the payload of CALL_NUMBER, REENTER and CANCEL: they act
// on the ticket Number names.
type NumberAction struct {
	// IdemKey: idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Counter: counter the action is for; 0: the keypad's own counter.
	Counter uint32
	// Number: ticket number text, e.g. "A023".
	Number string
	// Site: site code; empty: the device's site.
	Site string
}

// numberActionFields declares the fields of every NumberAction.
var numberActionFields = fields{
	1:  "IdemKey id",
	2:  "Counter",
	3:  "Number id required",
	10: "Site id",
}

// The ticket actions: each carries one of the two payloads above.
type (
	// CallNumber calls a given waiting ticket to a counter. Wire type CALL_NUMBER (0x12).
	CallNumber NumberAction
	// Recall announces a called ticket again. Wire type RECALL (0x13).
	Recall CounterAction
	// NoShow marks a called ticket as not shown up. Wire type NO_SHOW (0x14).
	NoShow CounterAction
	// Reenter puts a no-show ticket back into its queue. Wire type REENTER (0x15).
	Reenter NumberAction
	// Start starts serving a called ticket. Wire type START (0x16).
	Start CounterAction
	// Complete finishes serving a ticket. Wire type COMPLETE (0x17).
	Complete CounterAction
	// Cancel cancels a waiting or called ticket. Wire type CANCEL (0x19).
	Cancel NumberAction
)

var (
	_ = declare[CallNumber](TypeCallNumber, "CALL_NUMBER", numberActionFields)
	_ = declare[Recall](TypeRecall, "RECALL", counterActionFields)
	_ = declare[NoShow](TypeNoShow, "NO_SHOW", counterActionFields)
	_ = declare[Reenter](TypeReenter, "REENTER", numberActionFields)
	_ = declare[Start](TypeStart, "START", counterActionFields)
	_ = declare[Complete](TypeComplete, "COMPLETE", counterActionFields)
	_ = declare[Cancel](TypeCancel, "CANCEL", numberActionFields)
)

// Transfer sends a called or serving ticket to another service or counter. Wire type TRANSFER (0x18).
type Transfer struct {
	// IdemKey: idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Counter: counter the action is for; 0: the keypad's own counter.
	Counter uint32
	// Number: ticket number text; empty: the ticket the counter is handling.
	Number string
	// ToService: target service code; empty: same service.
	ToService string
	// ToCounter: target counter; 0: any counter of the service.
	ToCounter uint32
	// Site: site code; empty: the device's site.
	Site string
}

var _ = declare[Transfer](TypeTransfer, "TRANSFER", fields{
	1:  "IdemKey id",
	2:  "Counter",
	3:  "Number id",
	5:  "ToService id required=to",
	6:  "ToCounter required=to",
	10: "Site id",
})

// Pause pauses a counter: it is not called to. Wire type PAUSE (0x1A).
type Pause struct {
	// IdemKey: idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Counter: counter the action is for; 0: the keypad's own counter.
	Counter uint32
	// Site: site code; empty: the device's site.
	Site string
	// Reason: free text for the console, e.g. "break".
	Reason string
}

var _ = declare[Pause](TypePause, "PAUSE", fields{
	1:  "IdemKey id",
	2:  "Counter",
	10: "Site id",
	12: "Reason",
})

// Resume reopens a paused counter. Wire type RESUME (0x1B).
type Resume struct {
	// IdemKey: idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// Counter: counter the action is for; 0: the keypad's own counter.
	Counter uint32
	// Site: site code; empty: the device's site.
	Site string
}

var _ = declare[Resume](TypeResume, "RESUME", fields{
	1:  "IdemKey id",
	2:  "Counter",
	10: "Site id",
})

// Status asks for the state of a ticket (answer TICKET) or of a site, service or counter (answer SNAPSHOT). Wire type STATUS (0x1C).
type Status struct {
	// Counter: only this counter.
	Counter uint32
	// Number: ticket number text: answer is TICKET.
	Number string
	// Service: only this service.
	Service string
	// Site: site code; empty: the device's site.
	Site string
	// Resources: only these bookable resources in the SNAPSHOT (repeated); none: a page of every resource.
	Resources []string
	// ResourceAfter: the SNAPSHOT's resource page starts after this resource (a SNAPSHOT's ResourceNext); empty: the first page.
	ResourceAfter string
}

var _ = declare[Status](TypeStatus, "STATUS", fields{
	2:  "Counter",
	3:  "Number id",
	4:  "Service id",
	10: "Site id",
	16: "Resources id",
	17: "ResourceAfter id",
})

// Subscribe asks for the site's events, starting after a version. Wire type SUBSCRIBE (0x1D).
type Subscribe struct {
	// Counters: only events of these counters (repeated); none: all.
	Counters []uint32
	// Services: only events of these services (repeated); none: all.
	Services []string
	// Site: site code; empty: the device's site.
	Site string
	// FromVersion: last version seen; events with a greater version follow. 0: SNAPSHOT first.
	FromVersion uint64
	// Snapshot: true: always send a SNAPSHOT before the events.
	Snapshot bool
	// Resources: only these bookable resources in a SNAPSHOT and only their booking events (repeated); none: all.
	Resources []string
}

var _ = declare[Subscribe](TypeSubscribe, "SUBSCRIBE", fields{
	2:  "Counters",
	4:  "Services id",
	10: "Site id",
	11: "FromVersion",
	13: "Snapshot",
	16: "Resources id",
})

// Reprint prints a ticket of today again on a network printer (console only). It changes no state, so it carries no idempotency key: a retried REPRINT prints again. Wire type REPRINT (0x1E).
type Reprint struct {
	// Number: ticket number text.
	Number string
	// Site: site code; empty: the device's site.
	Site string
	// Printer: printer id from the daemon configuration; empty: the printer of the kiosk that issued the ticket.
	Printer string
}

var _ = declare[Reprint](TypeReprint, "REPRINT", fields{
	3:  "Number id required",
	10: "Site id",
	12: "Printer id",
})

// CheckIn turns a booking into a ticket (kiosk, console): the patient types or scans the booking code. On time the ticket is of class appointment; the TICKET answer carries AppointmentMS. Wire type CHECK_IN (0x1F).
type CheckIn struct {
	// IdemKey: idempotency key, at most 64 bytes; empty: derived from device id, boot nonce and request id.
	IdemKey string
	// WantESCPOS: true: the TICKET answer carries the ticket rendered as ESC/POS bytes.
	WantESCPOS bool
	// Language: language tag for the printed ticket, e.g. "en", "zh".
	Language string
	// Site: site code; empty: the device's site.
	Site string
	// Code: booking code as printed or sent at booking, e.g. "K7P3X9QM" (case, spaces and dashes ignored).
	Code string
}

var _ = declare[CheckIn](TypeCheckIn, "CHECK_IN", fields{
	1:  "IdemKey id",
	8:  "WantESCPOS",
	9:  "Language",
	10: "Site id",
	15: "Code id required",
})
