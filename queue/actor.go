package queue

import "strings"

// StaffActor is the actor of what a person does at a counter from a
// browser page: "user:NAME@counter-ID", the person and the place, in the
// event and as the device half of the idempotency key. A device's actor is
// its id (keypad-3, kiosk-1).
func StaffActor(name, counter string) string { return "user:" + name + "@counter-" + counter }

// ParseStaffActor splits a StaffActor into the person and the counter; ok
// is false for any other actor (a device id, "api:NAME", "rollover").
func ParseStaffActor(actor string) (name, counter string, ok bool) {
	rest, ok := strings.CutPrefix(actor, "user:")
	if !ok {
		return "", "", false
	}
	name, counter, ok = strings.Cut(rest, "@counter-")
	if !ok || name == "" {
		return "", "", false
	}
	return name, counter, true
}
