package web

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

const (
	testToken  = "secret-token-0123456789"
	otherToken = "other-token-0123456789"
)

// embedded returns the file name of the files the server serves,
// failing the test without it.
func embedded(t *testing.T, name string) []byte {
	t.Helper()
	b, err := files.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func testSite() queue.Site {
	return queue.Site{
		ID: "main", Location: time.UTC, Names: map[string]string{"en": "Main Hall"},
		Services: []queue.Service{
			{Code: "A", Prefix: "A", Width: 3, AvgService: 5 * time.Minute, Names: map[string]string{"en": "General"}},
			{Code: "F", Prefix: "F", Width: 3, AvgService: 5 * time.Minute, DailyCap: 1},
		},
		Counters: []queue.Counter{
			{ID: "5", Names: map[string]string{"en": "Counter 5"}, Services: []queue.CounterService{{Service: "A", Weight: 1}}, Policy: queue.PolicyStrict},
			{ID: "6", Services: []queue.CounterService{{Service: "F", Weight: 1}}, Policy: queue.PolicyStrict},
		},
	}
}

type env struct {
	t     testing.TB
	eng   *queue.Engine
	srv   *Server
	http  *httptest.Server
	clock *storetest.Clock
}

// newEnv runs a real engine on SQLite behind a test HTTP server. The
// database starts as a copy of one migrated once per test process
// (storetest.SQLiteMigrated): the web's tests are about what comes after
// the migrations, which the store's own tests cover.
func newEnv(t testing.TB, mod func(*queue.Opts, *Opts)) *env {
	t.Helper()
	st := storetest.SQLiteMigrated(t)
	c := storetest.FixedClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	qo := queue.Opts{Store: st, Sites: []queue.Site{testSite()}, Clock: c.Now}
	wo := Opts{Clock: c.Now, Tokens: []TokenInfo{
		{Name: "his", Token: testToken},
		{Name: "elsewhere", Token: otherToken, Sites: []string{"other"}},
	}}
	if mod != nil {
		mod(&qo, &wo)
	}
	eng := storetest.StartEngine(t, qo)
	wo.Engine = eng
	srv, err := New(wo)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(answered.wrap(srv))
	t.Cleanup(func() {
		srv.stop() // end the streams so Close does not wait for them
		hs.Close()
	})
	return &env{t: t, eng: eng, srv: srv, http: hs, clock: c}
}

// serveAgain starts a server of o on addr, where a stopped one listened,
// as a daemon coming back does; it stops when t ends.
func serveAgain(t *testing.T, addr string, o Opts) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	hs := &httptest.Server{Listener: ln, Config: &http.Server{Handler: srv.Handler()}}
	hs.Start()
	t.Cleanup(func() { srv.stop(); hs.Close() })
}

// do sends a request with the test token unless token is "-".
func (e *env) do(method, path, token, body string, hdr ...string) *http.Response {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.http.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if token != "-" {
		if token == "" {
			token = testToken
		}
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// decode reads a JSON body into v and checks the status.
func decode[T any](t testing.TB, resp *http.Response, status int) T {
	t.Helper()
	var v T
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d; body %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, status, b)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

func (e *env) issue(service string) queue.Ticket {
	e.t.Helper()
	return e.ticket(e.eng.Issue(context.Background(), queue.IssueRequest{Request: queue.Request{Site: "main", Device: "kiosk"}, Service: service}))
}

// issueN issues n tickets of service, as a kiosk does.
func (e *env) issueN(n int, service string) {
	e.t.Helper()
	for range n {
		e.issue(service)
	}
}

func (e *env) call(counter string) queue.Ticket {
	e.t.Helper()
	return e.ticket(e.eng.CallNext(context.Background(), queue.CounterRequest{Request: queue.Request{Site: "main", Device: "keypad"}, Counter: counter}))
}

// ticket returns what an engine action answered, failing the test on err.
func (e *env) ticket(tk queue.Ticket, err error) queue.Ticket {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
	return tk
}

// sseEvent is one parsed Server-Sent Event.
type sseEvent struct {
	ID, Event, Data string
}

// sseReader parses a text/event-stream, skipping comments and retry lines.
type sseReader struct {
	t  *testing.T
	br *bufio.Reader
	ch chan sseEvent
}

func newSSE(t *testing.T, resp *http.Response) *sseReader {
	t.Helper()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream: status %d, type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	r := &sseReader{t: t, br: bufio.NewReader(resp.Body), ch: make(chan sseEvent, 100)}
	go func() {
		defer close(r.ch)
		var ev sseEvent
		for {
			line, err := r.br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "":
				if ev.Data != "" {
					r.ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.ID = line[4:]
			case strings.HasPrefix(line, "event: "):
				ev.Event = line[7:]
			case strings.HasPrefix(line, "data: "):
				ev.Data = line[6:]
			}
		}
	}()
	return r
}

// next returns the next event within 5 s.
func (r *sseReader) next() sseEvent {
	r.t.Helper()
	select {
	case ev, ok := <-r.ch:
		if !ok {
			r.t.Fatal("stream ended")
		}
		return ev
	case <-time.After(5 * time.Second):
		r.t.Fatal("no event within 5 s")
	}
	return sseEvent{}
}

// nextOf skips events until one named event.
func (r *sseReader) nextOf(event string) sseEvent {
	r.t.Helper()
	for {
		if ev := r.next(); ev.Event == event {
			return ev
		}
	}
}

func unmarshal[T any](t *testing.T, data string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(data), &v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return v
}
