package web

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue"
)

// heldStore holds every read transaction while armed, until a release is
// sent or its context ends, counting the reads held at once.
type heldStore struct {
	queue.Store
	armed   atomic.Bool
	held    atomic.Int64
	most    atomic.Int64
	release chan struct{}
}

func (s *heldStore) View(ctx context.Context, fn func(context.Context, queue.Tx) error) error {
	if s.armed.Load() {
		n := s.held.Add(1)
		for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
		}
		select {
		case <-s.release:
		case <-ctx.Done():
		}
		s.held.Add(-1)
	}
	return s.Store.View(ctx, fn)
}

// appointmentsEnv is newEnv with a resource to list and book and the
// appointments API on a listener of its own, serving at most conns
// connections at once, its reads held by the store while armed; the
// address is its listener's.
func appointmentsEnv(t *testing.T, conns int, mod func(*Opts)) (*env, *heldStore, net.Listener) {
	ln := conntest.Listener(t)
	var st *heldStore
	e := newEnv(t, func(qo *queue.Opts, wo *Opts) {
		st = &heldStore{Store: qo.Store, release: make(chan struct{})}
		qo.Store = st
		wo.Appointments, wo.AppointmentConns, wo.ReadBudget = ln.Addr().String(), conns, time.Hour
		sched := queue.Schedule{Open: 10 * time.Hour, Close: 12 * time.Hour, Slot: 15 * time.Minute, Capacity: 1, DaysAhead: 7, OpensAt: 7 * time.Hour}
		qo.Sites[0].Resources = []queue.Resource{{ID: "dr", Service: "A", Schedule: sched}}
		if mod != nil {
			mod(wo)
		}
	})
	if _, err := e.eng.GenerateSlots(context.Background()); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- e.srv.ServeAppointments(ln) }()
	t.Cleanup(func() {
		st.armed.Store(false)
		e.srv.Shutdown(context.Background())
		if err := <-served; err != ErrServerClosed {
			t.Errorf("ServeAppointments after Shutdown: %v, want ErrServerClosed", err)
		}
	})
	return e, st, ln
}

// rawRequest sends a slot list request of dr on date over a connection of
// its own to addr, returning the connection to read the answer from.
func rawRequest(t *testing.T, addr, date string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "GET /api/v1/sites/main/slots?resource=dr&date=%s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", date, testToken)
	return c, bufio.NewReader(c)
}

// TestAppointmentsMisdirected: with a listener of its own, every
// operation of the appointments API is 421 misdirected on the main
// listener, naming the other address, and served there; the rest of the
// API stays on the main listener, and the appointments listener answers it
// 421 too.
func TestAppointmentsMisdirected(t *testing.T) {
	e, _, ln := appointmentsEnv(t, 4, nil)
	for _, op := range []struct{ method, path string }{
		{"GET", "/api/v1/sites/main/slots?resource=dr&date=2026-03-03"},
		{"POST", "/api/v1/sites/main/appointments"},
		{"GET", "/api/v1/sites/main/appointments/1"},
		{"DELETE", "/api/v1/sites/main/appointments/1"},
		{"POST", "/api/v1/sites/main/appointments/1/confirm"},
		{"POST", "/api/v1/sites/main/appointments/1/check-in"},
	} {
		p := decode[Problem](t, e.do(op.method, op.path, "", `{}`), http.StatusMisdirectedRequest)
		if p.Code != "misdirected" || !strings.Contains(p.Detail, ln.Addr().String()) {
			t.Errorf("%s %s on the main listener: %+v, want misdirected naming %s", op.method, op.path, p, ln.Addr())
		}
	}
	at := "http://" + ln.Addr().String()
	if l := decode[slotList](t, doAt(t, at, "GET", "/api/v1/sites/main/slots?resource=dr&date=2026-03-03", ""), http.StatusOK); len(l.Slots) != 8 {
		t.Errorf("the list on the appointments listener: %d slots, want 8", len(l.Slots))
	}
	if p := decode[Problem](t, doAt(t, at, "POST", "/api/v1/sites/main/tickets", `{"service":"A"}`), http.StatusMisdirectedRequest); p.Code != "misdirected" {
		t.Errorf("a ticket on the appointments listener: %+v, want 421 misdirected", p)
	}
	resp := e.do("POST", "/api/v1/sites/main/tickets", "", `{"service":"A"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("a ticket on the main listener: %d, want 201", resp.StatusCode)
	}
}

// TestAppointmentsShedKeepsConnection: a request shed 429 overloaded on
// the appointments listener is answered with Retry-After on a connection
// kept open (closing it made the client dial again, which cost more than
// the answer), and the next request on it is served.
func TestAppointmentsShedKeepsConnection(t *testing.T) {
	_, st, ln := appointmentsEnv(t, 4, func(o *Opts) { o.MaxSlotReads = 1 })
	st.armed.Store(true)
	_, heldBR := rawRequest(t, ln.Addr().String(), "2026-03-03")
	poll.Until(t, "the first list is held at the store", func() bool { return st.held.Load() == 1 })
	c, br := rawRequest(t, ln.Addr().String(), "2026-03-04")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Close || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("a second list while one is read: %d, close %v, Retry-After %q; want 429, kept open, 1", resp.StatusCode, resp.Close, resp.Header.Get("Retry-After"))
	}
	st.armed.Store(false)
	st.release <- struct{}{}
	if resp, err := http.ReadResponse(heldBR, nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the held list once released: %v, %v; want 200", resp, err)
	}
	fmt.Fprintf(c, "GET /api/v1/sites/main/slots?resource=dr&date=2026-03-04 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", testToken)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the next request on the shed connection: %v, %v; want 200", resp, err)
	}
}

// doAt sends an API request with the test token to the server at base.
func doAt(t *testing.T, base, method, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestAppointmentsUnusedConnection: a connection that is given the only
// place and sends nothing (an HTTP client's dial it did not need) gives
// the place up after doorFirstRequest, well before the 5 s header
// timeout, so that the next request is served (not shed at the door).
func TestAppointmentsUnusedConnection(t *testing.T) {
	e, _, ln := appointmentsEnv(t, 1, nil)
	idle, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	poll.Until(t, "the unused connection holds the place", func() bool { return e.srv.appts.open.Load() == 1 })
	poll.Until(t, "the unused connection gives the place up", func() bool { return e.srv.appts.open.Load() == 0 })
	c, br := rawRequest(t, ln.Addr().String(), "2026-03-03")
	c.SetReadDeadline(time.Now().Add(appointmentHeaderTimeout - time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("a list behind an unused connection: %v, want it served once the place is given up", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a list behind an unused connection: %d, want 200", resp.StatusCode)
	}
}
