package web

import (
	"context"
	"testing"

	"github.com/nowserving/nowserving/queue"
)

// TestStaffAudit: every action of the counter page, each event it
// writes (the DONE that calling next over a ticket being served makes
// too), names the person and the place in its actor, a clerk's and a
// supervisor's alike.
func TestStaffAudit(t *testing.T) {
	se := newStaffEnv(t, nil)
	se.issueN(4, "A")
	se.issue("F")
	before := lastVersion(t, se.env)
	li := se.person(t)
	li.login("li.na", "secret-pass")
	li.session()
	wang := se.person(t)
	wang.login("wang", "secret-pass")
	wang.session()
	n := 0
	act := func(p *person, counter, action, extra string) {
		t.Helper()
		n++
		wantStatus(t, p.act(counter, action, `{"key":"audit-`+string(rune('a'+n))+`-0001"`+extra+`}`), 200)
	}
	act(li, "5", "next", "")
	act(li, "5", "recall", "")
	act(li, "5", "start", "")
	act(li, "5", "next", "") // completes the ticket being served, calls the next
	act(li, "5", "noshow", "")
	act(li, "5", "call", `,"number":"A003"`)
	act(li, "5", "transfer", `,"to_counter":"6","reason":"audit"`)
	act(li, "5", "pause", "")
	act(li, "5", "resume", "")
	act(li, "5", "next", "")
	act(li, "5", "start", "")
	act(li, "5", "done", "")
	act(wang, "6", "next", "") // the transferred ticket, for counter 6
	act(wang, "6", "transfer", `,"to_service":"A"`)
	act(wang, "6", "next", "")
	evs, err := se.eng.Events(context.Background(), "main", before, 100)
	if err != nil {
		t.Fatal(err)
	}
	types := map[queue.EventType]bool{}
	for _, e := range evs {
		name, counter, ok := queue.ParseStaffActor(e.Actor)
		if !ok || counter != e.Counter || (counter == "5") != (name == "li.na") || (counter == "6") != (name == "wang") {
			t.Errorf("v%d %s %s at %q by %q: want user:NAME@counter-%s of the person who acted", e.Version, e.Type, e.Number, e.Counter, e.Actor, e.Counter)
		}
		types[e.Type] = true
	}
	for _, want := range []queue.EventType{queue.EventCalled, queue.EventRecalled, queue.EventServing, queue.EventDone, queue.EventNoShow,
		queue.EventTransferred, queue.EventCounterPaused, queue.EventCounterOpened} {
		if !types[want] {
			t.Errorf("no %s event among %d", want, len(evs))
		}
	}
	if len(evs) != 16 {
		t.Errorf("%d events for 15 actions (one next completing too), want 16", len(evs))
	}
}
