package web

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/nowserving/nowserving/booking"
)

// The door of the appointments listener. Past its places, connections
// wait in the kernel's accept queue at no cost to the daemon; but that
// queue is bounded (net.core.somaxconn, 4096 here), and when a rush
// filled it the kernel dropped the handshakes that came next, and then
// the half-open connections of clients that had sent their request:
// 1,050-1,648 requests a rush got "connection reset by peer", thousands
// more a timeout after 30 s. So the door accepts the connections that
// waited in the queue a poll (doorPoll) while every place stayed taken,
// and those past doorDepth at once, and answers each a canned 429
// overloaded with Retry-After, after reading its request (closing with an
// unread request would itself send a reset), without net/http's
// goroutine, parse of the route, or handler.
//
// A connection given a place keeps it for its next requests (until it is
// idle AppointmentIdle): a waiting one is shed within a poll or two, so
// none waits behind it long, and an answer need not close its connection
// to let the next one in. Closing every answer given while the places
// were full, as this listener did, made each request of a rush a
// connection of its own: in bench/rush.sh the accepts, closes and the
// door's answers to the clients' new connections were half the daemon's
// CPU, and the clients' dials more of the machine's (the CPU another
// site's kiosks wait for); kept open, the rush's 409s and 429s are
// answered on connections already open.

// doorDepth is how deep the accept queue may grow before the door sheds
// what is past it at once: well below somaxconn, so the kernel never
// drops.
const doorDepth = 1024

// doorPoll is how often the door looks at the queue's depth while every
// place is taken, so the longest a connection waits there for a place
// (two polls at most), and doorTimeout how long a shed client has to send
// its request and read its answer: as long as a connection may stay idle
// (DefaultAppointmentIdle), since it may be shed a poll after it
// connects, and a client on a loaded machine may write its request only seconds after
// its handshake (closed before, it reads an EOF, not the 429). Each waits
// on a goroutine of its own, in the poller.
const (
	doorPoll    = 10 * time.Millisecond
	doorTimeout = DefaultAppointmentIdle
)

// The door answers each shed connection on a goroutine of its own, at
// most doorDepth at once (past those the door waits for one to end). Two
// goroutines answering them in turn, as it did, waited up to doorTimeout
// on each connection an HTTP client dialled and then left unused (it got
// an idle one first, see doorFirstRequest): in a rush the shed connections
// then piled up behind, the door stopped accepting, the kernel's queue
// overflowed and dropped handshakes, and clients timed out after 30 s.
// A shed connection's goroutine waits in the poller, not for a CPU.

// doorListener serves at most cap(places) connections at once, as
// netutil.LimitListener does, and sheds at the door what is past the
// accept queue's depth.
type doorListener struct {
	net.Listener
	places chan struct{}
	// depth is how many connections wait in the accept queue; false
	// when the system does not say (then nothing is shed).
	depth func() (int, bool)
	deep  int
	// aged sheds the connections that waited a poll (see shedPast);
	// seen is how many of those in the queue at the last poll were not
	// accepted since (only Accept's goroutine uses it).
	aged bool
	seen int
	// timeout is doorTimeout (longer in tests).
	timeout time.Duration
	// shedding holds a token per connection being answered at the door,
	// and shed holds those connections (Close ends their wait).
	shedding chan struct{}
	shed     sync.Map // net.Conn → struct{}
	done     chan struct{}
	once     sync.Once
	wg       sync.WaitGroup
}

// newDoor wraps ln, a TCP listener, with places places.
func newDoor(ln net.Listener, places int) *doorListener {
	d := &doorListener{Listener: ln, places: make(chan struct{}, places), deep: doorDepth, aged: true, timeout: doorTimeout,
		shedding: make(chan struct{}, doorDepth), done: make(chan struct{})}
	d.depth = func() (int, bool) { return acceptQueue(ln) }
	return d
}

// Accept returns the next connection once a place is free; while none is,
// it sheds the connections that waited (see shedPast).
func (d *doorListener) Accept() (net.Conn, error) {
	tick := time.NewTicker(doorPoll)
	defer tick.Stop()
	for {
		select {
		case d.places <- struct{}{}:
			return d.accept()
		case <-tick.C:
			select {
			case d.places <- struct{}{}: // freed as the poll came
				return d.accept()
			default:
			}
			if err := d.shedPast(); err != nil {
				return nil, err
			}
		case <-d.done:
			return nil, net.ErrClosed
		}
	}
}

// accept takes the connection at the head of the queue into the place
// Accept holds.
func (d *doorListener) accept() (net.Conn, error) {
	c, err := d.Listener.Accept()
	if err != nil {
		<-d.places
		return nil, err
	}
	d.seen = max(d.seen-1, 0) // the oldest waiting
	return newPlaceConn(c, func() { <-d.places }), nil
}

// shedPast accepts the connections to shed and hands them to the
// door's goroutines: those past the queue's depth, and those that were in the
// queue at the last poll and still are (the queue is first in, first
// out: they are its oldest), which waited a poll while every place was
// taken.
func (d *doorListener) shedPast() error {
	n, ok := d.depth()
	if !ok {
		return nil
	}
	shed := max(n-d.deep, 0)
	if d.aged {
		shed = max(shed, min(d.seen, n))
	}
	d.seen = n - shed
	for range shed {
		c, err := d.Listener.Accept()
		if err != nil {
			return err
		}
		select {
		case d.shedding <- struct{}{}:
			d.shed.Store(c, struct{}{})
			d.wg.Go(func() {
				defer func() { d.shed.Delete(c); <-d.shedding }()
				shedConn(c, d.timeout)
			})
		case <-d.done:
			c.Close()
			return net.ErrClosed
		}
	}
	return nil
}

// Close closes the listener and ends the shed connections' wait for
// their requests (up to doorTimeout), waiting for their goroutines.
func (d *doorListener) Close() error {
	err := d.Listener.Close()
	d.once.Do(func() { close(d.done) })
	d.shed.Range(func(c, _ any) bool {
		c.(net.Conn).SetDeadline(time.Now())
		return true
	})
	d.wg.Wait()
	return err
}

// doorAnswer is the answer of a connection shed at the door.
var doorAnswer = func() []byte {
	p := problemOf(booking.ErrOverloaded) // the same code and title as a handler's refusal
	body, _ := json.Marshal(Problem{Type: ProblemType + p.code, Title: p.title, Status: p.status,
		Detail: "every place of the appointments listener stayed taken while this connection waited for one", Code: p.code})
	body = append(body, '\n')
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/problem+json\r\nCache-Control: no-store\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: ")
	b.WriteString(strconv.Itoa(len(body)) + "\r\n\r\n")
	b.Write(body)
	return b.Bytes()
}()

// shedReaders keeps the 4 KB readers of shed connections: in a rush the
// door sheds thousands a second (shedding was a fifth of the daemon's CPU
// at 6,000 lists a second), each with a reader of its own before.
var shedReaders = sync.Pool{New: func() any { return bufio.NewReader(nil) }}

// shedConn reads c's request, body included (at most maxBody), answers it
// doorAnswer and closes c, all within timeout: its client reads a 429,
// never a reset.
func shedConn(c net.Conn, timeout time.Duration) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	r := shedReaders.Get().(*bufio.Reader)
	r.Reset(c)
	defer func() { r.Reset(nil); shedReaders.Put(r) }()
	req, err := http.ReadRequest(r)
	if err != nil {
		return
	}
	if n, _ := io.Copy(io.Discard, io.LimitReader(req.Body, maxBody+1)); n > maxBody {
		return
	}
	c.Write(doorAnswer)
}

// doorFirstRequest is how long a connection given a place has to send
// its first request: an HTTP client that dials while it waits for an
// idle connection, and gets one first, keeps the new connection unused
// in its pool, and after a rush a thousand such connections, accepted in
// turn, held every place for the 5 s header timeout each: 1,024 in the
// queue keep 64 places 16 s at 1 s each, less than a client's timeout of
// 30 s. A client sends its request one round trip after its handshake,
// and one that waited in the queue has sent it already.
const doorFirstRequest = time.Second

// placeConn gives its place back once, when it is closed. Until its first
// request's first bytes arrive, its read deadline is at most
// doorFirstRequest from its accept.
type placeConn struct {
	net.Conn
	once    sync.Once
	release func()
	mu      sync.Mutex
	first   time.Time // the first request's deadline; zero once it came
}

func newPlaceConn(c net.Conn, release func()) *placeConn {
	p := &placeConn{Conn: c, release: release, first: time.Now().Add(doorFirstRequest)}
	c.SetReadDeadline(p.first)
	return p
}

func (c *placeConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.mu.Lock()
		c.first = time.Time{}
		c.mu.Unlock()
	}
	return n, err
}

// SetReadDeadline sets t, or the first request's deadline when it is
// earlier and the request has not come yet.
func (c *placeConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	if f := c.first; !f.IsZero() && (t.IsZero() || t.After(f)) {
		t = f
	}
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *placeConn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetWriteDeadline(t); err != nil {
		return err
	}
	return c.SetReadDeadline(t)
}

func (c *placeConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
