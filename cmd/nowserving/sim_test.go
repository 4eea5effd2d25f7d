package main

import (
	"strings"
	"testing"
	"time"

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
		{wire.Event{Version: 4, Kind: wire.EventTransferred, Number: "A001", Service: "B", Counter: 3}, "v4 TRANSFERRED A001 in B for counter 3"},
		{wire.Event{Version: 5, Kind: wire.EventCounterPaused, Counter: 5}, "v5 COUNTER_PAUSED 5"},
		{wire.Event{Version: 6, Kind: wire.EventCancelled, Number: "A002"}, "v6 CANCELLED A002"},
		{wire.Event{Version: 7, Kind: 99, Number: "A002"}, "v7 99 A002"},
	} {
		if got := eventLine(&tc.e); got != tc.want {
			t.Errorf("eventLine(%+v) = %q, want %q", tc.e, got, tc.want)
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
		if got := ticketLine(&tc.t); got != tc.want {
			t.Errorf("ticketLine(%+v) = %q, want %q", tc.t, got, tc.want)
		}
	}
}

func TestWaitText(t *testing.T) {
	for sec, want := range map[uint32]string{0: "none", 59: "under a minute", 60: "about 1 minute", 89: "about 1 minute", 90: "about 2 minutes", 360: "about 6 minutes"} {
		if got := waitText(sec); got != want {
			t.Errorf("waitText(%d) = %q, want %q", sec, got, want)
		}
	}
}

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		bad  bool
	}{
		{"5/s", 5, false}, {"5", 5, false}, {"120/m", 2, false}, {"3600/h", 1, false},
		{"0/s", 0, true}, {"x/s", 0, true}, {"5/d", 0, true}, {"-1", 0, true},
	} {
		got, err := parseRate(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("parseRate(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func TestParseClass(t *testing.T) {
	if c, err := parseClass("VIP"); err != nil || c != wire.ClassVIP {
		t.Errorf("parseClass(VIP) = %v, %v", c, err)
	}
	if _, err := parseClass("gold"); err == nil {
		t.Error("parseClass(gold): want an error")
	}
}

func TestCounterNum(t *testing.T) {
	for in, want := range map[string]uint32{"": 0, "5": 5, "12": 12} {
		if got, err := counterNum(in); err != nil || got != want {
			t.Errorf("counterNum(%q) = %d, %v", in, got, err)
		}
	}
	for _, in := range []string{"0", "A", "-1"} {
		if _, err := counterNum(in); err == nil {
			t.Errorf("counterNum(%q): want an error", in)
		}
	}
}

func TestParseRSS(t *testing.T) {
	got, err := parseRSS(strings.NewReader("Name:\tnowserving\nVmPeak:\t 9 kB\nVmRSS:\t   12345 kB\nThreads: 4\n"))
	if err != nil || got != 12345*1024 {
		t.Errorf("parseRSS = %d, %v; want %d", got, err, 12345*1024)
	}
	if _, err := parseRSS(strings.NewReader("Name: x\n")); err == nil {
		t.Error("parseRSS without VmRSS: want an error")
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{50: 51 * time.Millisecond, 99: 99 * time.Millisecond, 100: 100 * time.Millisecond, 0: time.Millisecond} {
		if got := percentile(d, p); got != want {
			t.Errorf("percentile(%v) = %v, want %v", p, got, want)
		}
	}
	if percentile(nil, 50) != 0 {
		t.Error("percentile of nothing should be 0")
	}
}
