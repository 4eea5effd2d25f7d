package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/internal/testkit/parttest"
	"github.com/nowserving/nowserving/queue"
)

// TestEventsResume: a client reads from ?from=, drops, and resumes with
// Last-Event-ID without missing or repeating an event; live events follow.
func TestEventsResume(t *testing.T) {
	e := newEnv(t, nil)
	e.issueN(3, "A")
	r := newSSE(t, e.do("GET", "/api/v1/sites/main/events?from=1", "", ""))
	for _, want := range []int64{2, 3} {
		ev := r.next()
		got := unmarshal[Event](t, ev.Data)
		if ev.ID != strconv.FormatInt(want, 10) || got.Version != want || got.Type != "ISSUED" {
			t.Fatalf("event id %s %+v, want version %d", ev.ID, got, want)
		}
	}
	e.issue("A") // version 4, while connected
	if ev := r.next(); ev.ID != "4" {
		t.Fatalf("live event id %s, want 4", ev.ID)
	}
	// Reconnect as EventSource does: Last-Event-ID wins over ?from=.
	e.call("5") // version 5, while disconnected
	r2 := newSSE(t, e.do("GET", "/api/v1/sites/main/events?from=0", "", "", "Last-Event-ID", "4"))
	ev := r2.next()
	got := unmarshal[Event](t, ev.Data)
	if ev.ID != "5" || got.Type != "CALLED" || got.Number != "A001" || got.Counter != "5" {
		t.Fatalf("resumed with %s %+v, want 5 CALLED A001 at 5", ev.ID, got)
	}
	// Without a version the stream starts now.
	r3 := newSSE(t, e.do("GET", "/api/v1/sites/main/events", "", ""))
	e.issue("A")
	if ev := r3.next(); ev.ID != "6" {
		t.Fatalf("fresh stream started at %s, want 6", ev.ID)
	}
}

// TestEventsGap: a client too far behind gets a snapshot, then live events.
func TestEventsGap(t *testing.T) {
	e := newEnv(t, func(q *queue.Opts, _ *Opts) { q.FeedSize, q.MaxReplay = 2, 2 })
	e.issueN(5, "A")
	r := newSSE(t, e.do("GET", "/api/v1/sites/main/events?from=0", "", ""))
	ev := r.next()
	if ev.Event != "snapshot" || ev.ID != "5" {
		t.Fatalf("got %q id %s, want a snapshot at 5", ev.Event, ev.ID)
	}
	if sn := unmarshal[Snapshot](t, ev.Data); sn.Services[0].Waiting != 5 {
		t.Errorf("snapshot: %+v", sn)
	}
	e.issue("A")
	if ev := r.next(); ev.ID != "6" || ev.Event != "" {
		t.Fatalf("after the snapshot: %q id %s, want message 6", ev.Event, ev.ID)
	}
}

func TestHeartbeat(t *testing.T) {
	e := newEnv(t, func(_ *queue.Opts, o *Opts) { o.Heartbeat = 20 * time.Millisecond })
	resp := e.do("GET", "/api/v1/sites/main/events", "", "")
	buf := make([]byte, 64)
	deadline := time.Now().Add(5 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		n, err := resp.Body.Read(buf)
		got += string(buf[:n])
		if err != nil || len(got) > 30 {
			break
		}
	}
	if want := "retry: 1000\n\n: ping\n\n"; len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("stream began %q, want %q", got, want)
	}
}

func TestDisplayStream(t *testing.T) {
	e := newEnv(t, nil)
	e.issue("A")
	e.issue("A")
	e.call("5") // A001 before the display connects: listed as a recent call
	r := newSSE(t, e.do("GET", "/display/main/events", "-", ""))
	st := unmarshal[DisplayState](t, r.nextOf("state").Data)
	if st.Name != "Main Hall" || len(st.Calls) != 1 || st.Calls[0].Number != "A001" || st.Calls[0].CounterName != "Counter 5" ||
		st.Services[0].Name != "General" || st.Services[0].Waiting != 1 || st.Services[1].Name != "F" {
		t.Fatalf("first state: %+v", st)
	}
	e.eng.Start(context.Background(), queue.CounterRequest{Request: queue.Request{Site: "main", Device: "k"}, Counter: "5"})
	e.call("5") // completes A001, calls A002
	c := unmarshal[Call](t, r.nextOf("call").Data)
	if c.Number != "A002" || c.Counter != "5" || c.Recall {
		t.Fatalf("call: %+v", c)
	}
	st = unmarshal[DisplayState](t, r.nextOf("state").Data)
	if len(st.Calls) != 2 || st.Calls[0].Number != "A002" || st.Calls[1].Number != "A001" || st.Services[0].Waiting != 0 {
		t.Fatalf("state after call: %+v", st)
	}
	// A reconnecting display gets the whole picture again.
	r2 := newSSE(t, e.do("GET", "/display/main/events", "-", "", "Last-Event-ID", "1"))
	st2 := unmarshal[DisplayState](t, r2.nextOf("state").Data)
	if len(st2.Calls) != 2 || st2.Calls[0].Number != "A002" || st2.Version != st.Version {
		t.Fatalf("state on reconnect: %+v", st2)
	}
}

func TestTicketStream(t *testing.T) {
	e := newEnv(t, nil)
	e.issue("A")
	e.issue("A")
	r := newSSE(t, e.do("GET", "/t/main/A002/events", "-", ""))
	st := unmarshal[TicketStatus](t, r.nextOf("status").Data)
	if st.Ticket.Number != "A002" || st.Ahead != 1 || st.ServiceName != "General" || st.SiteName != "Main Hall" {
		t.Fatalf("first status: %+v", st)
	}
	e.call("5")
	st = unmarshal[TicketStatus](t, r.nextOf("status").Data)
	if st.Ticket.Status != "WAITING" || st.Ahead != 0 {
		t.Fatalf("after A001 was called: %+v", st)
	}
	e.eng.Start(context.Background(), queue.CounterRequest{Request: queue.Request{Site: "main", Device: "k"}, Counter: "5"})
	r.nextOf("status")
	e.call("5")
	st = unmarshal[TicketStatus](t, r.nextOf("status").Data)
	if st.Ticket.Status != "CALLED" || st.CalledToCounter != "5" || st.CounterName != "Counter 5" {
		t.Fatalf("when called: %+v", st)
	}
	if resp := e.do("GET", "/t/main/A999/events", "-", ""); resp.StatusCode != 404 {
		t.Errorf("stream of an unknown ticket: %d", resp.StatusCode)
	}
	// The QR code names the day: yesterday's A002 is not today's.
	p := decode[Problem](t, e.do("GET", "/t/main/A002/events?day=2026-03-01", "-", ""), 404)
	if p.Code != "ticket_not_found" || !strings.Contains(p.Detail, "2026-03-01") {
		t.Errorf("ticket of another day: %+v", p)
	}
	today := newSSE(t, e.do("GET", "/t/main/A002/events?day=2026-03-02", "-", ""))
	if st := unmarshal[TicketStatus](t, today.nextOf("status").Data); st.Ticket.Number != "A002" || st.Lang != "en" {
		t.Errorf("ticket of today: %+v", st)
	}
}

// TestShutdown: Shutdown ends open event streams and Serve returns
// ErrServerClosed.
func TestShutdown(t *testing.T) {
	e := newEnv(t, nil)
	ln := conntest.Listener(t)
	part := Part{Server: e.srv, Listener: ln}
	served := parttest.Go(context.Background(), part)
	resp, err := http.Get("http://" + ln.Addr().String() + "/display/main/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := newSSE(t, resp)
	r.nextOf("state")
	if !parttest.Stop(t, part, served) {
		t.FailNow()
	}
	if err := e.srv.Serve(ln); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Serve after Shutdown: %v, want ErrServerClosed", err)
	}
}

func TestTicketURL(t *testing.T) {
	for _, tc := range []struct{ base, site, number, day, want string }{
		{"https://q.example.org/", "main", "A023", "2026-03-02", "https://q.example.org/t/main/A023?day=2026-03-02"},
		{"http://10.0.0.5:7480", "main", "VIP001", "", "http://10.0.0.5:7480/t/main/VIP001"},
		{"http://h", "a b", "A/1", "2026-03-02", "http://h/t/a%20b/A%2F1?day=2026-03-02"},
	} {
		if got := TicketURL(tc.base, tc.site, tc.number, tc.day); got != tc.want {
			t.Errorf("TicketURL(%q, %q, %q, %q) = %q, want %q", tc.base, tc.site, tc.number, tc.day, got, tc.want)
		}
	}
}

func TestMaxStreams(t *testing.T) {
	e := newEnv(t, func(_ *queue.Opts, o *Opts) { o.MaxStreams = 1 })
	first := newSSE(t, e.do("GET", "/display/main/events", "-", ""))
	first.nextOf("state")
	p := decode[Problem](t, e.do("GET", "/api/v1/sites/main/events", "", ""), 503)
	if p.Code != "too_many_streams" {
		t.Errorf("second stream: %+v", p)
	}
	if r := e.do("GET", "/healthz", "-", ""); r.StatusCode != 200 {
		t.Errorf("plain requests refused too: %d", r.StatusCode)
	}
}

// TestReloadReachesOpenStreams: a reload (SetSites) sends a fresh state to
// an open display stream and a fresh status to an open ticket page, with
// the new names and languages, without waiting for an event; the stream
// goes on after it.
func TestReloadReachesOpenStreams(t *testing.T) {
	e := newEnv(t, nil)
	e.issue("A")
	d := newSSE(t, e.do("GET", "/display/main/events", "-", ""))
	tk := newSSE(t, e.do("GET", "/t/main/A001/events", "-", ""))
	if st := unmarshal[DisplayState](t, d.nextOf("state").Data); st.Services[0].Names["en"] != "General" {
		t.Fatalf("first state: %+v", st)
	}
	tk.nextOf("status")
	next := testSite()
	next.Languages = []string{"zh", "en"}
	next.Counters[0].Names = map[string]string{"en": "Room 5", "zh": "5号诊室"}
	next.Services[0].Names = map[string]string{"en": "General medicine", "zh": "内科"}
	if err := e.eng.SetSites([]queue.Site{next}); err != nil {
		t.Fatal(err)
	}
	st := unmarshal[DisplayState](t, d.nextOf("state").Data)
	if st.Lang != "zh" || st.Services[0].Names["zh"] != "内科" || st.Services[0].Name != "内科" {
		t.Errorf("state after reload: lang %s, service %+v", st.Lang, st.Services[0])
	}
	if ts := unmarshal[TicketStatus](t, tk.nextOf("status").Data); ts.ServiceName != "内科" || ts.Langs[0] != "zh" {
		t.Errorf("ticket status after reload: %+v", ts)
	}
	e.call("5") // the stream goes on, under the new names
	if c := unmarshal[Call](t, d.nextOf("call").Data); c.CounterNames["zh"] != "5号诊室" {
		t.Errorf("call after reload: %+v", c)
	}
}
