package web

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

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
// holds, two are served (their reads at the store) and three wait in the
// kernel's backlog, unread; each answer given while full closes its
// connection, so each read released lets one waiting client in, until
// all five are answered 200. The store never holds more than two at once.
func TestAppointmentConnsLimit(t *testing.T) {
	const places, clients = 2, 5
	e, st, ln := appointmentsEnv(t, places, nil)
	st.armed.Store(true)
	answers := make(chan int, clients)
	for range clients {
		_, br := rawRequest(t, ln.Addr().String(), "2026-03-03")
		go func(br *bufio.Reader) {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				answers <- 0
				return
			}
			resp.Body.Close()
			answers <- resp.StatusCode
		}(br)
	}
	for done := 0; done < clients; done++ {
		serving, waiting := min(places, clients-done), max(clients-done-places, 0)
		poll.Until(t, "the clients served and waiting", func() bool {
			return st.held.Load() == int64(serving) && backlog(t, ln) == waiting && e.srv.appts.open.Load() <= places
		})
		st.release <- struct{}{}
		if code := <-answers; code != http.StatusOK {
			t.Errorf("answer %d: status %d, want 200", done+1, code)
		}
	}
	if most := st.most.Load(); most > places {
		t.Errorf("the store held %d lists at once, want at most the %d places", most, places)
	}
}

// TestDoorShedsPastTheQueue: with the one place taken and the accept
// queue allowed two, the door answers the connections past those 429
// overloaded with Retry-After, after reading their request, and closes
// them without a reset, while the place is still taken; the two in the
// queue are served once it is free.
func TestDoorShedsPastTheQueue(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := newDoor(ln, 1)
	d.deep = 2
	release := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Connection", "close") // the place goes to the next
	})}
	go srv.Serve(d)
	t.Cleanup(func() { srv.Close() })
	send := func() *bufio.Reader {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(10 * time.Second)) // a request not answered fails, not hangs
		fmt.Fprintf(c, "POST /api/v1/sites/main/appointments HTTP/1.1\r\nHost: x\r\nContent-Length: 25\r\n\r\n{\"slot\":1,\"patient\":\"p\"}\n")
		return bufio.NewReader(c)
	}
	held := send()
	poll.Until(t, "the first request holds the place", func() bool { return len(d.places) == 1 && backlog(t, ln) == 0 })
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
	close(release)
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
