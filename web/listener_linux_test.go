package web

import (
	"bufio"
	"net"
	"net/http"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nowserving/nowserving/internal/testkit/poll"
)

// backlog is how many connections wait in ln's accept queue, not yet
// accepted by the daemon: Linux reports it of a listening socket as
// TCP_INFO's unacked.
func backlog(t *testing.T, ln net.Listener) int {
	t.Helper()
	rc, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var info *unix.TCPInfo
	var ierr error
	if err := rc.Control(func(fd uintptr) { info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil || ierr != nil {
		t.Fatalf("TCP_INFO of the listener: %v %v", err, ierr)
	}
	return int(info.Unacked)
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
