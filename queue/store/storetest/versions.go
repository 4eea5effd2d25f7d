package storetest

import (
	"testing"

	"github.com/nowserving/nowserving/queue"
)

// testResultVersions: every operation's result carries the version of the
// last event it made, and a retry with the same key gets the first one's,
// also when events came in between (PROTOCOL.md: TICKET tag 16, OK tag 1).
func testResultVersions(t *testing.T, open func(t *testing.T) queue.Store) {
	en := newEnv(t, open)
	last := func() int64 {
		t.Helper()
		v, err := en.e.LastVersion(en.ctx, "hq")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	issue := queue.IssueRequest{Request: en.req(), Service: "A"}
	pos, err := en.e.IssuePosition(en.ctx, issue)
	if err != nil {
		t.Fatal(err)
	}
	if v := last(); pos.Ticket.Version != v || v == 0 {
		t.Errorf("IssuePosition: version %d, want %d", pos.Ticket.Version, v)
	}
	first := pos.Ticket.Version
	en.issue("A", "")
	call := queue.CounterRequest{Request: en.req(), Counter: "1"}
	tk, err := en.e.CallNext(en.ctx, call)
	if err != nil {
		t.Fatal(err)
	}
	if v := last(); tk.Version != v {
		t.Errorf("CallNext: version %d, want %d", tk.Version, v)
	}
	pause := queue.CounterRequest{Request: en.req(), Counter: "2"}
	cs, err := en.e.Pause(en.ctx, pause)
	if err != nil {
		t.Fatal(err)
	}
	if v := last(); cs.Version != v {
		t.Errorf("Pause: version %d, want %d", cs.Version, v)
	}
	// Retries return the first versions, not the site's latest.
	again, err := en.e.IssuePosition(en.ctx, issue)
	if err != nil || again.Ticket.Version != first {
		t.Errorf("IssuePosition retried: version %d (%v), want %d", again.Ticket.Version, err, first)
	}
	tk2, err := en.e.CallNext(en.ctx, call)
	if err != nil || tk2.Version != tk.Version {
		t.Errorf("CallNext retried: version %d (%v), want %d", tk2.Version, err, tk.Version)
	}
	cs2, err := en.e.Pause(en.ctx, pause)
	if err != nil || cs2.Version != cs.Version {
		t.Errorf("Pause retried: version %d (%v), want %d", cs2.Version, err, cs.Version)
	}
	// Serving, then CALL_NEXT completes it and calls the next: the version
	// is the CALLED event's, the last of the two.
	if _, err := en.e.Start(en.ctx, queue.CounterRequest{Request: en.req(), Counter: "1"}); err != nil {
		t.Fatal(err)
	}
	tk3, err := en.e.CallNext(en.ctx, queue.CounterRequest{Request: en.req(), Counter: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if v := last(); tk3.Version != v {
		t.Errorf("CallNext after serving: version %d, want %d (the CALLED event)", tk3.Version, v)
	}
}
