package sim

import (
	"testing"

	"github.com/nowserving/nowserving/protocol/wire"
)

func TestEventLine(t *testing.T) {
	for _, tc := range []struct {
		e    wire.Event
		want string
	}{
		{wire.Event{Version: 12, Kind: wire.EventCalled, Number: "A023", Counter: 5, CallCount: 1}, "v12 CALLED A023 -> 5"},
		{wire.Event{Version: 13, Kind: wire.EventRecalled, Number: "A023", Counter: 5, CallCount: 2}, "v13 RECALLED A023 -> 5 (call 2)"},
		{wire.Event{Version: 1, Kind: wire.EventIssued, Number: "A001", Service: "A"}, "v1 ISSUED A001 in A"},
		{wire.Event{Version: 2, Kind: wire.EventServing, Number: "A001", Counter: 1}, "v2 SERVING A001 at 1"},
		{wire.Event{Version: 3, Kind: wire.EventDone, Number: "A001", Counter: 1}, "v3 DONE A001 at 1"},
		{wire.Event{Version: 4, Kind: wire.EventTransferred, Number: "A001", Service: "B", Counter: 3}, "v4 TRANSFERRED A001 in B (from counter 3)"},
		{wire.Event{Version: 5, Kind: wire.EventTransferred, Number: "A002", Service: "R", Counter: 1, ToCounter: 3}, "v5 TRANSFERRED A002 in R for counter 3 (from counter 1)"},
		{wire.Event{Version: 5, Kind: wire.EventCounterPaused, Counter: 5}, "v5 COUNTER_PAUSED 5"},
		{wire.Event{Version: 6, Kind: wire.EventCancelled, Number: "A002"}, "v6 CANCELLED A002"},
		{wire.Event{Version: 7, Kind: 99, Number: "A002"}, "v7 99 A002"},
		{wire.Event{Version: 58, Kind: wire.EventBookingBooked, Resource: "dr-li", SlotMS: 1796607000000}, "v58 BOOKING_BOOKED dr-li 2026-12-07T01:30Z"},
		{wire.Event{Version: 59, Kind: wire.EventBookingCheckedIn, Resource: "dr-li", SlotMS: 1796002200000, Number: "A024"},
			"v59 BOOKING_CHECKED_IN dr-li 2026-11-30T01:30Z -> A024"},
	} {
		if got := EventLine(&tc.e); got != tc.want {
			t.Errorf("EventLine(%+v) = %q, want %q", tc.e, got, tc.want)
		}
	}
}

func TestTicketLine(t *testing.T) {
	for _, tc := range []struct {
		t    wire.Ticket
		want string
	}{
		{wire.Ticket{Number: "A001", Status: wire.StatusCalled, Counter: 1, CallCount: 1}, "A001 called -> 1"},
		{wire.Ticket{Number: "A001", Status: wire.StatusCalled, Counter: 1, CallCount: 3}, "A001 called -> 1 (call 3)"},
		{wire.Ticket{Number: "A001", Status: wire.StatusServing, Counter: 1}, "A001 serving at 1"},
		{wire.Ticket{Number: "A001", Status: wire.StatusDone, Counter: 1}, "A001 done"},
		{wire.Ticket{Number: "A001", Status: wire.StatusWaiting, Service: "B", PeopleAhead: 2}, "A001 waiting in B, 2 ahead"},
		{wire.Ticket{Number: "A001", Status: wire.StatusWaiting, Service: "B", Counter: 3}, "A001 waiting in B for counter 3, 0 ahead"},
	} {
		if got := TicketLine(&tc.t); got != tc.want {
			t.Errorf("TicketLine(%+v) = %q, want %q", tc.t, got, tc.want)
		}
	}
}

func TestWaitText(t *testing.T) {
	for sec, want := range map[uint32]string{0: "none", 59: "under a minute", 60: "about 1 minute", 89: "about 1 minute", 90: "about 2 minutes", 360: "about 6 minutes", 7200: "about 120 minutes", 7201: "more than 2 hours", 51600: "more than 2 hours"} {
		if got := WaitText(sec); got != want {
			t.Errorf("WaitText(%d) = %q, want %q", sec, got, want)
		}
	}
}

func TestParseClass(t *testing.T) {
	if c, err := ParseClass("VIP"); err != nil || c != wire.ClassVIP {
		t.Errorf("ParseClass(VIP) = %v, %v", c, err)
	}
	if _, err := ParseClass("gold"); err == nil {
		t.Error("ParseClass(gold): want an error")
	}
}

func TestCounterNum(t *testing.T) {
	for in, want := range map[string]uint32{"": 0, "5": 5, "12": 12} {
		if got, err := CounterNum(in); err != nil || got != want {
			t.Errorf("CounterNum(%q) = %d, %v", in, got, err)
		}
	}
	for _, in := range []string{"0", "A", "-1"} {
		if _, err := CounterNum(in); err == nil {
			t.Errorf("CounterNum(%q): want an error", in)
		}
	}
}
