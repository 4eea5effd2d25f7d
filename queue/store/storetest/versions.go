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
	pause := queue.CounterRequest{Request: en.req(), Counter: "2"}
	ops := []struct {
		name string
		run  func() (int64, error)
	}{
		{"CallNext", func() (int64, error) { tk, err := en.e.CallNext(en.ctx, call); return tk.Version, err }},
		{"Pause", func() (int64, error) { cs, err := en.e.Pause(en.ctx, pause); return cs.Version, err }},
	}
	got := make([]int64, len(ops))
	for i, op := range ops {
		v, err := op.run()
		if err != nil {
			t.Fatalf("%s: %v", op.name, err)
		}
		if want := last(); v != want {
			t.Errorf("%s: version %d, want %d", op.name, v, want)
		}
		got[i] = v
	}
	// Retries return the first versions, not the site's latest.
	again, err := en.e.IssuePosition(en.ctx, issue)
	if err != nil || again.Ticket.Version != first {
		t.Errorf("IssuePosition retried: version %d (%v), want %d", again.Ticket.Version, err, first)
	}
	for i, op := range ops {
		if v, err := op.run(); err != nil || v != got[i] {
			t.Errorf("%s retried: version %d (%v), want %d", op.name, v, err, got[i])
		}
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
