package web

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
)

// backlog is how many connections wait in ln's accept queue, not yet
// accepted by the daemon.
func backlog(t *testing.T, ln net.Listener) int {
	t.Helper()
	n, ok := acceptQueue(ln)
	if !ok {
		t.Fatal("the accept queue's depth is not known")
	}
	return n
}

// TestAppointmentConnsLimit: with five clients connected to an
// appointments listener of two places, each sending a slot list the store
// holds, two are served (their reads at the store) and the three that
// wait for a place are answered 429 at the door while the two are held,
// within a poll or two, none left in the kernel's backlog; the two are
// then answered 200 and keep their connections, on which the next
// request is served. The store never holds more than two at once.
func TestAppointmentConnsLimit(t *testing.T) {
	const places, clients = 2, 5
	e, st, ln := appointmentsEnv(t, places, nil)
	st.armed.Store(true)
	type answer struct {
		code int
		c    net.Conn
		br   *bufio.Reader
	}
	answers := make(chan answer, clients)
	for range clients {
		c, br := rawRequest(t, ln.Addr().String(), "2026-03-03")
		go func() {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				answers <- answer{}
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			answers <- answer{resp.StatusCode, c, br}
		}()
	}
	for range clients - places {
		if a := <-answers; a.code != http.StatusTooManyRequests {
			t.Errorf("a client waiting for a place: status %d, want 429", a.code)
		}
	}
	if n := backlog(t, ln); n != 0 || st.held.Load() != places || e.srv.appts.open.Load() > places {
		t.Errorf("after the door: %d in the backlog, %d reads held, %d connections served; want 0, %d, at most %d", n, st.held.Load(), e.srv.appts.open.Load(), places, places)
	}
	st.armed.Store(false)
	var served answer
	for range places {
		st.release <- struct{}{}
		if served = <-answers; served.code != http.StatusOK {
			t.Fatalf("a served client: status %d, want 200", served.code)
		}
	}
	fmt.Fprintf(served.c, "GET /api/v1/sites/main/slots?resource=dr&date=2026-03-04 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", testToken)
	if resp, err := http.ReadResponse(served.br, nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the next request on a served connection: %v, %v; want 200", resp, err)
	}
	if most := st.most.Load(); most > places {
		t.Errorf("the store held %d lists at once, want at most the %d places", most, places)
	}
}

// TestDoorShedsWaiting: with the one place taken, the door answers the
// connections that wait for it 429 overloaded once they waited a poll or
// two, though the queue is far from its depth, while the place is still
// taken; the request holding it is then served.
func TestDoorShedsWaiting(t *testing.T) {
	_, ln, release, held := heldDoor(t, nil)
	const waiting = 3
	for range waiting {
		resp, err := http.ReadResponse(doorSend(t, ln.Addr().String()), nil)
		if err != nil {
			t.Fatalf("a request waiting for the place: %v, want 429", err)
		}
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" {
			t.Errorf("a request waiting for the place: %d, Retry-After %q; want 429, 1", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	if n := backlog(t, ln); n != 0 {
		t.Errorf("%d connections left in the queue, want 0", n)
	}
	release()
	if resp, err := http.ReadResponse(held, nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the held request: %v, %v; want 200", resp, err)
	}
}

// TestDoorSilentConnections: connections an HTTP client dialled and left
// unused, shed at the door, do not hold up the answers of the ones shed
// after them (each is answered on its own), however long the door would
// wait for their requests; Close ends that wait.
func TestDoorSilentConnections(t *testing.T) {
	d, ln, _, _ := heldDoor(t, func(d *doorListener) { d.timeout = time.Hour })
	for range 4 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	poll.Until(t, "the silent connections shed", func() bool { return len(d.shedding) == 4 })
	resp, err := http.ReadResponse(doorSend(t, ln.Addr().String()), nil)
	if err != nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a request behind silent connections: %v, %v; want 429", resp, err)
	}
	resp.Body.Close()
	d.Close() // ends their wait, rather than waiting for it
	if n := len(d.shedding); n != 0 {
		t.Errorf("%d connections still shed after Close, want 0", n)
	}
}

// heldDoor serves a door of one place, changed by mod, whose handler
// answers (Connection: close, so the place goes to the next) once release
// is called, and sends it a request that holds the place; it returns the
// door, its listener, release and the held request's answer to read.
func heldDoor(t *testing.T, mod func(*doorListener)) (*doorListener, net.Listener, func(), *bufio.Reader) {
	t.Helper()
	ln := conntest.Listener(t)
	d := newDoor(ln, 1)
	if mod != nil {
		mod(d)
	}
	released := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(released) }) }
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-released
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Connection", "close")
	})}
	go srv.Serve(d)
	t.Cleanup(func() { release(); srv.Close() })
	held := doorSend(t, ln.Addr().String())
	poll.Until(t, "the first request holds the place", func() bool { return len(d.places) == 1 && backlog(t, ln) == 0 })
	return d, ln, release, held
}

// doorSend sends a booking request over a connection of its own to addr,
// returning the reader of its answer.
func doorSend(t *testing.T, addr string) *bufio.Reader {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second)) // a request not answered fails, not hangs
	fmt.Fprintf(c, "POST /api/v1/sites/main/appointments HTTP/1.1\r\nHost: x\r\nContent-Length: 25\r\n\r\n{\"slot\":1,\"patient\":\"p\"}\n")
	return bufio.NewReader(c)
}

// TestDoorShedsPastTheQueue: with the one place taken and the accept
// queue allowed two (and the door not shedding by the wait), the door
// answers the connections past those 429 overloaded with Retry-After, after reading their request, and closes
// them without a reset, while the place is still taken; the two in the
// queue are served once it is free.
func TestDoorShedsPastTheQueue(t *testing.T) {
	_, ln, release, held := heldDoor(t, func(d *doorListener) { d.deep, d.aged = 2, false }) // only the depth sheds here
	send := func() *bufio.Reader { return doorSend(t, ln.Addr().String()) }
	const waiting, past = 2, 3
	answers := make(chan *http.Response, waiting+past)
	errs := make(chan error, waiting+past)
	for range waiting + past {
		go func(br *bufio.Reader) {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				errs <- err
				return
			}
			io.Copy(io.Discard, resp.Body)
			answers <- resp
		}(send())
	}
	for range past {
		select {
		case resp := <-answers:
			if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" || !resp.Close ||
				resp.Header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("a request past the queue: %d, Retry-After %q, close %v, %s; want 429, 1, closed, a problem",
					resp.StatusCode, resp.Header.Get("Retry-After"), resp.Close, resp.Header.Get("Content-Type"))
			}
		case err := <-errs:
			t.Fatalf("a request past the queue: %v, want 429", err)
		}
	}
	if n := backlog(t, ln); n != waiting {
		t.Errorf("%d connections in the queue after the door shed, want %d", n, waiting)
	}
	release()
	if resp, err := http.ReadResponse(held, nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the held request: %v, %v; want 200", resp, err)
	}
	for range waiting {
		select {
		case resp := <-answers:
			if resp.StatusCode != http.StatusOK {
				t.Errorf("a request that waited in the queue: %d, want 200", resp.StatusCode)
			}
		case err := <-errs:
			t.Errorf("a request that waited in the queue: %v, want 200", err)
		}
	}
}
