package sqlstore_test

import (
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
)

// TestEventBody: the JSON of a notification is the event id and every set
// field of the event, snake_case, times in RFC 3339 and durations in ms.
func TestEventBody(t *testing.T) {
	at := time.Date(2026, 3, 2, 8, 33, 0, 0, time.FixedZone("CST", 8*3600))
	e := &queue.Event{Site: "s1", Version: 42, Type: queue.EventCalled, TicketID: 7, Number: "A012", Service: "A",
		Issuer: "A", Day: "2026-03-02", Class: queue.ClassVIP, Status: queue.StatusCalled, Counter: "5", Actor: "keypad-5",
		At: at, CallCount: 1, From: queue.StatusWaiting, FromQueue: "A", Waited: 90500 * time.Millisecond}
	got, err := sqlstore.EventBody("7d44b6a2-5a3e-4c1e-9f00-0123456789ab", e)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"actor":"keypad-5","at":"2026-03-02T00:33:00Z","call_count":1,"class":"vip","counter":"5",` +
		`"day":"2026-03-02","from":"WAITING","from_queue":"A","id":"7d44b6a2-5a3e-4c1e-9f00-0123456789ab","issuer":"A",` +
		`"number":"A012","service":"A","site":"s1","status":"CALLED","ticket_id":7,"type":"CALLED","version":42,"waited_ms":90500}`
	if string(got) != want {
		t.Errorf("EventBody =\n%s\nwant\n%s", got, want)
	}
}
