package client_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/internal/testkit/logtest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/client"
	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// These tests run the client against the real daemon (protocol.Server on a
// SQLite engine) through a proxy that can cut connections at chosen frames.

func site() queue.Site {
	cs := []queue.CounterService{{Service: "A", Weight: 1}}
	return queue.Site{
		ID: "hq", Location: time.UTC, Rollover: 4 * time.Hour,
		Services: []queue.Service{{Code: "A", Prefix: "A", Width: 3, AvgService: time.Minute, MaxReentries: 2}},
		Counters: []queue.Counter{{ID: "1", Services: cs}, {ID: "2", Services: cs}},
	}
}

var secret = protocoltest.Secret

func devices() []protocol.Device {
	return []protocol.Device{
		{ID: "kiosk-1", Role: wire.RoleKiosk, Site: "hq", Secret: secret("kiosk-1")},
		{ID: "keypad-1", Role: wire.RoleKeypad, Site: "hq", Counter: "1", Secret: secret("keypad-1")},
		{ID: "display-1", Role: wire.RoleDisplay, Site: "hq", Secret: secret("display-1")},
		{ID: "console-1", Role: wire.RoleConsole, Site: "hq", Secret: secret("console-1")},
	}
}

// startDaemon starts a real daemon; opts, when not nil, adjusts the server
// options.
func startDaemon(t *testing.T, opts func(*protocol.Opts)) *protocoltest.Daemon {
	t.Helper()
	return protocoltest.Start(t, site(), devices(), opts)
}

// proxy forwards frames between clients and the daemon. While muted for a
// request type, it forwards the first such request, swallows the daemon's
// answer and cuts the connection: the request was applied, the answer lost.
type proxy struct {
	*conntest.Server // Accepted: the client connections
	t                *testing.T
	target           string

	mu      sync.Mutex
	refuse  bool
	cutOn   wire.MsgType // 0: none
	cutDone chan struct{}
	onCut   func() // runs after the cut, before new connections are let in
}

func newProxy(t *testing.T, target string) *proxy {
	p := &proxy{Server: conntest.Listen(t), t: t, target: target}
	p.Serve(p.relay)
	return p
}

func (p *proxy) setRefuse(v bool) {
	p.mu.Lock()
	p.refuse = v
	p.mu.Unlock()
}

// cutAfterAnswer arms the proxy: the next request of type t is applied by
// the daemon but its answer never reaches the client.
func (p *proxy) cutAfterAnswer(t wire.MsgType) chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutOn = t
	p.cutDone = make(chan struct{})
	return p.cutDone
}

// relay passes client connection c on to the daemon, unless refusing.
func (p *proxy) relay(c net.Conn) {
	p.mu.Lock()
	refuse := p.refuse
	p.mu.Unlock()
	if refuse {
		c.Close()
		return
	}
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.Keep(s)
	var muted sync.Mutex
	mute := false
	go pump(c, s, func(f wire.Frame) bool { // client -> daemon
		p.mu.Lock()
		if p.cutOn != 0 && f.Type == p.cutOn {
			p.cutOn = 0
			muted.Lock()
			mute = true
			muted.Unlock()
		}
		p.mu.Unlock()
		return true
	})
	pump(s, c, func(f wire.Frame) bool { // daemon -> client
		muted.Lock()
		m := mute
		muted.Unlock()
		if m && f.Flags&wire.FlagResponse != 0 {
			// The answer arrived: the request was applied. Lose it.
			c.Close()
			s.Close()
			p.mu.Lock()
			done, hook := p.cutDone, p.onCut
			p.mu.Unlock()
			if hook != nil {
				hook()
			}
			close(done)
			return false
		}
		return true
	})
}

// pump passes the frames read from src on to dst while pass lets them
// through; a failed read closes dst, a failed write src.
func pump(src, dst net.Conn, pass func(wire.Frame) bool) {
	br := bufio.NewReader(src)
	for {
		f, err := wire.ReadFrame(br, 0)
		if err != nil {
			dst.Close()
			return
		}
		if !pass(f) {
			return
		}
		if _, err := dst.Write(wire.AppendFrame(nil, f)); err != nil {
			src.Close()
			return
		}
	}
}

func opts(id string, role wire.Role) client.Opts {
	return client.Opts{
		DeviceID: id, Secret: secret(id), Role: role, Logger: logtest.New(),
		Timeout: 3 * time.Second, Retries: 10, MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
	}
}

func dial(t *testing.T, addr, id string, role wire.Role) *client.Client {
	t.Helper()
	c, err := client.Dial(context.Background(), addr, opts(id, role))
	if err != nil {
		t.Fatalf("dial %s: %v", id, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func issued(t *testing.T, addr string) uint32 {
	t.Helper()
	c := dial(t, addr, "console-1", wire.RoleConsole)
	defer c.Close()
	s, err := c.Snapshot(context.Background(), 0)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	for _, sv := range s.Services {
		if sv.Code == "A" {
			return sv.Issued
		}
	}
	t.Fatalf("no service A in %+v", s)
	return 0
}

// A kiosk whose connection drops after TAKE_TICKET was applied retries
// and gets the same ticket: over a new connection, and also when the
// daemon was restarted in between.
func TestRealRetryGetsSameTicket(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) {
			d := startDaemon(t, nil)
			p := newProxy(t, d.Addr)
			c := dial(t, p.Addr(), "kiosk-1", wire.RoleKiosk)
			ctx := context.Background()
			first, err := c.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{})
			if err != nil {
				t.Fatal(err)
			}
			if restart {
				p.onCut = func() { d.Restart() }
			}
			cut := p.cutAfterAnswer(wire.TypeTakeTicket)
			got, err := c.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{})
			if err != nil {
				t.Fatalf("TakeTicket across the cut: %v", err)
			}
			select {
			case <-cut:
			default:
				t.Fatal("the proxy never cut the connection")
			}
			if got.Number == first.Number || got.Number != "A002" {
				t.Errorf("ticket after retry = %s, want A002 (first was %s)", got.Number, first.Number)
			}
			if n := issued(t, d.Addr); n != 2 {
				t.Errorf("daemon issued %d tickets, want 2", n)
			}
			next, err := c.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{})
			if err != nil || next.Number != "A003" {
				t.Errorf("next ticket = %v, %v; want A003", next, err)
			}
		})
	}
}

// take has kiosk k take n normal tickets of service A.
func take(t *testing.T, k *client.Client, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if _, err := k.TakeTicket(context.Background(), "A", wire.ClassNormal, client.TicketOpts{}); err != nil {
			t.Fatal(err)
		}
	}
}

// A display that reconnects receives exactly the events it missed, in
// order, then live ones.
func TestRealSubscribeResume(t *testing.T) {
	d := startDaemon(t, nil)
	p := newProxy(t, d.Addr)
	ctx := context.Background()
	k := dial(t, d.Addr, "kiosk-1", wire.RoleKiosk)
	take(t, k, 2)
	disp := dial(t, p.Addr(), "display-1", wire.RoleDisplay)
	from := disp.Welcome().Version
	s, err := disp.Subscribe(ctx, client.Filter{FromVersion: from})
	if err != nil {
		t.Fatal(err)
	}
	var got []*wire.Event
	next := func(n int) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for i := 0; i < n; i++ {
			select {
			case u, ok := <-s.Updates():
				if !ok {
					t.Fatalf("subscription ended: %v", s.Err())
				}
				if u.Snapshot != nil {
					t.Fatalf("unexpected snapshot at v%d", u.Snapshot.Version)
				}
				got = append(got, u.Event)
			case <-timeout:
				t.Fatalf("waited for %d events, got %d", n, i)
			}
		}
	}
	take(t, k, 3)
	next(3)
	p.setRefuse(true)
	p.CutAll()
	take(t, k, 4) // missed while away
	p.setRefuse(false)
	next(4)
	take(t, k, 1)
	next(1)
	for i, e := range got {
		if want := from + uint64(i) + 1; e.Version != want || e.Kind != wire.EventIssued {
			t.Errorf("event %d: v%d %s, want v%d issued", i, e.Version, e.Kind, want)
		}
	}
	select {
	case u := <-s.Updates():
		t.Errorf("extra update %+v", u)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestRealErrors(t *testing.T) {
	d := startDaemon(t, nil)
	ctx := context.Background()
	k := dial(t, d.Addr, "kiosk-1", wire.RoleKiosk)
	_, err := k.TakeTicket(ctx, "Z", wire.ClassNormal, client.TicketOpts{})
	if !errors.Is(err, wire.ErrUnknownService) {
		t.Errorf("unknown service: %v", err)
	}
	if _, err := k.CallNext(ctx, 1); !errors.Is(err, wire.ErrForbidden) {
		t.Errorf("kiosk calling: %v, want ErrForbidden", err)
	}
	kp := dial(t, d.Addr, "keypad-1", wire.RoleKeypad)
	if _, err := kp.CallNext(ctx, 0); !errors.Is(err, wire.ErrNoTicketWaiting) {
		t.Errorf("call on an empty queue: %v, want ErrNoTicketWaiting", err)
	}
	if _, err := kp.CallNext(ctx, 2); !errors.Is(err, wire.ErrWrongCounter) {
		t.Errorf("keypad 1 acting for 2: %v, want ErrWrongCounter", err)
	}
	o := opts("kiosk-1", wire.RoleKiosk)
	o.Secret = []byte("not the secret at all")
	if _, err := client.Dial(ctx, d.Addr, o); !errors.Is(err, wire.ErrAuthFailed) {
		t.Errorf("wrong secret: %v, want ErrAuthFailed", err)
	}
	// A ticket's whole life.
	tk, err := k.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		do   func() (*wire.Ticket, error)
		want wire.TicketStatus
	}{
		{func() (*wire.Ticket, error) { return kp.CallNext(ctx, 0) }, wire.StatusCalled},
		{func() (*wire.Ticket, error) { return kp.Recall(ctx, 0, "") }, wire.StatusCalled},
		{func() (*wire.Ticket, error) { return kp.Start(ctx, 0, "") }, wire.StatusServing},
		{func() (*wire.Ticket, error) { return kp.Complete(ctx, 0, "") }, wire.StatusDone},
	}
	for i, st := range steps {
		got, err := st.do()
		if err != nil || got.Number != tk.Number || got.Status != st.want {
			t.Errorf("step %d: %+v, %v; want %s %s", i, got, err, tk.Number, st.want)
		}
	}
	st, err := k.Status(ctx, tk.Number)
	if err != nil || st.Status != wire.StatusDone {
		t.Errorf("status: %+v, %v; want done", st, err)
	}
}

// When the display was away for more events than the daemon replays, it
// gets a SNAPSHOT, then the events after it.
func TestRealSubscribeSnapshotOnGap(t *testing.T) {
	d := startDaemon(t, func(o *protocol.Opts) { o.MaxReplay = 2 })
	p := newProxy(t, d.Addr)
	ctx := context.Background()
	k := dial(t, d.Addr, "kiosk-1", wire.RoleKiosk)
	take(t, k, 1) // v1: subscribing from version 0 would ask for a snapshot
	disp := dial(t, p.Addr(), "display-1", wire.RoleDisplay)
	s, err := disp.Subscribe(ctx, client.Filter{FromVersion: disp.Welcome().Version})
	if err != nil {
		t.Fatal(err)
	}
	next := func() client.Update {
		t.Helper()
		u, ok := poll.Recv(t, s.Updates(), "an update")
		if !ok {
			t.Fatalf("subscription ended: %v", s.Err())
		}
		return u
	}
	take(t, k, 1)
	if u := next(); u.Event == nil || u.Event.Version != 2 {
		t.Fatalf("first update %+v, want event v2", u)
	}
	p.setRefuse(true)
	p.CutAll()
	take(t, k, 5) // v3..v7: more than the daemon replays
	p.setRefuse(false)
	u := next()
	if u.Snapshot == nil || u.Snapshot.Version != 7 {
		t.Fatalf("after the gap: %+v, want a snapshot at v7", u)
	}
	var issued uint32
	for _, sv := range u.Snapshot.Services {
		issued += sv.Issued
	}
	if issued != 7 {
		t.Errorf("snapshot shows %d issued, want 7", issued)
	}
	take(t, k, 1)
	if u := next(); u.Event == nil || u.Event.Version != 8 {
		t.Errorf("after the snapshot: %+v, want event v8", u)
	}
	if s.Version() != 8 {
		t.Errorf("Version = %d, want 8", s.Version())
	}
}

func TestRealTLS(t *testing.T) {
	cert, pool := protocoltest.SelfSigned(t)
	d := startDaemon(t, func(o *protocol.Opts) {
		o.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	})
	ctx := context.Background()
	o := opts("kiosk-1", wire.RoleKiosk)
	o.TLSConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	c, err := client.Dial(ctx, d.Addr, o)
	if err != nil {
		t.Fatalf("dial over TLS: %v", err)
	}
	defer c.Close()
	if tk, err := c.TakeTicket(ctx, "A", wire.ClassNormal, client.TicketOpts{}); err != nil || tk.Number != "A001" {
		t.Errorf("ticket over TLS: %v, %v", tk, err)
	}
	// Without the CA the client refuses the daemon's certificate.
	o.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	var ue x509.UnknownAuthorityError
	if _, err := client.Dial(ctx, d.Addr, o); !errors.As(err, &ue) || errors.Is(err, client.ErrUnreachable) {
		t.Errorf("dial trusting nothing: %v, want a certificate error (not 'unreachable')", err)
	}
}

// TestDialRetriesRefusal: a daemon at its session cap answers 0x32, which
// is retryable; Dial tries again with back-off and gets in once a place
// frees, while an unreachable daemon still fails at once.
func TestDialRetriesRefusal(t *testing.T) {
	d := startDaemon(t, func(o *protocol.Opts) { o.MaxConns = 1 })
	first := dial(t, d.Addr, "kiosk-1", wire.RoleKiosk)
	var log logtest.Buffer
	waits := opts("display-1", wire.RoleDisplay)
	waits.Logger = log.Logger()
	refused := func() bool { return strings.Contains(log.String(), "dial refused for now") }
	freed := make(chan struct{})
	go func() { // the place frees once the dial was refused
		defer close(freed)
		poll.Within(poll.Timeout, 5*time.Millisecond, refused)
		first.Close()
	}()
	c, err := client.Dial(context.Background(), d.Addr, waits)
	if err != nil {
		t.Fatalf("dial while the cap frees after a refusal: %v", err)
	}
	defer c.Close()
	<-freed
	if !refused() {
		t.Error("dial got in before the only place was freed")
	}

	o := opts("display-1", wire.RoleDisplay)
	o.Timeout = 200 * time.Millisecond
	_, err = client.Dial(context.Background(), d.Addr, o) // c holds the place
	var se *wire.StatusError
	if !errors.As(err, &se) || se.Code != wire.ErrTooManyConnections.Code {
		t.Errorf("dial at a cap that stays full: %v, want ERROR 0x32 after Timeout", err)
	}
}
