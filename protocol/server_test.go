package protocol_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/conntest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

func TestWelcome(t *testing.T) {
	en := newEnv(t, func(o *protocol.Opts) { o.Heartbeat = 5 * time.Second; o.RateLimit = 7 })
	tests := []struct {
		id      string
		role    wire.Role
		counter uint32
		allowed []wire.MsgType
	}{
		{"kiosk-1", wire.RoleKiosk, 0, []wire.MsgType{wire.TypeTakeTicket, wire.TypeStatus, wire.TypeCheckIn}},
		{"keypad-3", wire.RoleKeypad, 3, []wire.MsgType{wire.TypeCallNext, wire.TypeCallNumber, wire.TypeRecall, wire.TypeNoShow,
			wire.TypeReenter, wire.TypeStart, wire.TypeComplete, wire.TypeTransfer, wire.TypePause, wire.TypeResume,
			wire.TypeStatus, wire.TypeSubscribe}},
		{"display-1", wire.RoleDisplay, 0, []wire.MsgType{wire.TypeSubscribe, wire.TypeStatus}},
		{"console-1", wire.RoleConsole, 0, []wire.MsgType{wire.TypeTakeTicket, wire.TypeCallNext, wire.TypeCallNumber,
			wire.TypeRecall, wire.TypeNoShow, wire.TypeReenter, wire.TypeStart, wire.TypeComplete, wire.TypeTransfer,
			wire.TypeCancel, wire.TypePause, wire.TypeResume, wire.TypeStatus, wire.TypeSubscribe, wire.TypeReprint, wire.TypeCheckIn}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			_, w := en.login(tt.id, 1)
			if w.Role != tt.role || w.Counter != tt.counter || w.Site != "hq" {
				t.Errorf("role %v counter %d site %q, want %v %d hq", w.Role, w.Counter, w.Site, tt.role, tt.counter)
			}
			if want := wire.Allow(tt.allowed...); w.Allowed != want {
				t.Errorf("allowed %b, want %b", w.Allowed, want)
			}
			if w.HeartbeatMS != 5000 || w.RateLimit != 7 || w.MaxPayload != wire.MaxPayload {
				t.Errorf("heartbeat %d rate %d max %d", w.HeartbeatMS, w.RateLimit, w.MaxPayload)
			}
			if w.ServiceDay != "2026-11-30" {
				t.Errorf("service day %q", w.ServiceDay)
			}
		})
	}
}

func TestKioskAndKeypad(t *testing.T) {
	en := newEnv(t, nil)
	kiosk, _ := en.login("kiosk-1", 1)
	var nums []string
	for i := 0; i < 3; i++ {
		tk := kiosk.ticket(&wire.TakeTicket{Service: "A"})
		if tk.PeopleAhead != uint32(i) || tk.WaitSeconds != uint32(i*60) {
			// 5 open counters share the 5-minute average service time.
			t.Errorf("ticket %d: ahead %d wait %d s, want %d and %d", i, tk.PeopleAhead, tk.WaitSeconds, i, i*60)
		}
		if tk.Status != wire.StatusWaiting || tk.Site != "hq" || tk.Service != "A" || tk.ServiceDay != "2026-11-30" {
			t.Errorf("ticket %+v", tk)
		}
		nums = append(nums, tk.Number)
	}
	if strings.Join(nums, ",") != "A001,A002,A003" {
		t.Fatalf("numbers %v", nums)
	}
	kp, _ := en.login("keypad-2", 1)
	tk := kp.ticket(&wire.CallNext{})
	if tk.Number != "A001" || tk.Status != wire.StatusCalled || tk.Counter != 2 {
		t.Errorf("call next: %+v", tk)
	}
	if got, want := strings.Join(tk.LCD, "|"), "A001 -> 2|2 waiting"; got != want {
		t.Errorf("LCD %q, want %q", got, want)
	}
	tk = kp.ticket(&wire.Recall{})
	if tk.CallCount != 2 {
		t.Errorf("recall: call count %d", tk.CallCount)
	}
	if tk = kp.ticket(&wire.Start{}); tk.Status != wire.StatusServing || tk.LCD[0] != "A001 serving" {
		t.Errorf("start: %+v", tk)
	}
	if tk = kp.ticket(&wire.Complete{Counter: 2}); tk.Status != wire.StatusDone {
		t.Errorf("complete: %+v", tk)
	}
	if tk = kp.ticket(&wire.CallNumber{Number: "A003"}); tk.Number != "A003" {
		t.Errorf("call number: %+v", tk)
	}
	if tk = kp.ticket(&wire.NoShow{}); tk.Status != wire.StatusNoShow {
		t.Errorf("no-show: %+v", tk)
	}
	if tk = kp.ticket(&wire.Reenter{Number: "A003"}); tk.Status != wire.StatusWaiting || tk.Class != wire.ClassReentered {
		t.Errorf("re-enter: %+v", tk)
	}
	kp.ticket(&wire.CallNext{})
	if tk = kp.ticket(&wire.Transfer{ToService: "B"}); tk.Status != wire.StatusWaiting || tk.Service != "B" {
		t.Errorf("transfer: %+v", tk)
	}
	ok, isOK := kp.do(&wire.Pause{Reason: "break"}).(*wire.OK)
	if !isOK || strings.Join(ok.LCD, "|") != "Counter 2|paused" {
		t.Errorf("pause: %+v", ok)
	}
	kp.wantError(&wire.CallNext{}, wire.ErrCounterPaused.Code)
	if _, isOK := kp.do(&wire.Resume{}).(*wire.OK); !isOK {
		t.Errorf("resume: not OK")
	}
	// STATUS with a number: the ticket and its position.
	st := kiosk.ticket(&wire.Status{Number: nums[1]})
	if st.Number != nums[1] {
		t.Errorf("status: %+v", st)
	}
	// STATUS without: the snapshot.
	snap, isSnap := kiosk.do(&wire.Status{}).(*wire.Snapshot)
	if !isSnap || len(snap.Services) != 3 || len(snap.Counters) != 5 || snap.Services[0].Name != "General" {
		t.Fatalf("snapshot: %+v", snap)
	}
	var issuedN, served uint32
	for _, sv := range snap.Services {
		issuedN += sv.Issued
		served += sv.Served
	}
	if issuedN != 3 || served != 1 {
		t.Errorf("snapshot: %d issued, %d served, want 3 and 1: %+v", issuedN, served, snap.Services)
	}
	// Console acts on any counter but must name it.
	con, _ := en.login("console-1", 1)
	con.wantError(&wire.CallNext{}, wire.ErrBadPayload.Code)
	kiosk.ticket(&wire.TakeTicket{Service: "A"})
	if tk = con.ticket(&wire.CallNext{Counter: 4}); tk.Counter != 4 || len(tk.LCD) != 0 {
		t.Errorf("console call: %+v", tk)
	}
	if tk = con.ticket(&wire.Cancel{Number: tk.Number}); tk.Status != wire.StatusCancelled {
		t.Errorf("console cancel: %+v", tk)
	}
}

func TestDomainErrors(t *testing.T) {
	en := newEnv(t, nil)
	kiosk, _ := en.login("kiosk-1", 1)
	kp, _ := en.login("keypad-1", 1)
	wantRefusals(t, []refusal{
		{"nothing waiting", kp, &wire.CallNext{}, wire.ErrNoTicketWaiting.Code, ""},
		{"unknown service", kiosk, &wire.TakeTicket{Service: "Z"}, wire.ErrUnknownService.Code, ""},
		{"full", kiosk, &wire.TakeTicket{Service: "F"}, 0, ""},
		{"full again", kiosk, &wire.TakeTicket{Service: "F"}, wire.ErrServiceFull.Code, ""},
		{"idle counter", kp, &wire.Start{}, wire.ErrInvalidTransition.Code, ""},
		{"unknown ticket", kp, &wire.CallNumber{Number: "A999"}, wire.ErrUnknownTicket.Code, ""},
		{"unknown class", kiosk, &wire.TakeTicket{Service: "A", Class: 99}, wire.ErrBadPayload.Code, ""},
		{"no printing", kiosk, &wire.TakeTicket{Service: "A", WantESCPOS: true}, wire.ErrBadPayload.Code, ""},
		{"other site", kiosk, &wire.TakeTicket{Service: "A", Site: "elsewhere"}, wire.ErrForbidden.Code, ""},
		{"key too long", kiosk, &wire.TakeTicket{Service: "A", IdemKey: strings.Repeat("k", 65)}, wire.ErrBadPayload.Code, ""},
	})
}

func TestRender(t *testing.T) {
	en := newEnv(t, func(o *protocol.Opts) {
		o.Render = func(site string, tk queue.Ticket, pos queue.Position, lang string) ([]byte, error) {
			return []byte(fmt.Sprintf("%s|%s|%d|%s", site, tk.Number, pos.Ahead, lang)), nil
		}
	})
	kiosk, _ := en.login("kiosk-1", 1)
	kiosk.ticket(&wire.TakeTicket{Service: "B"})
	tk := kiosk.ticket(&wire.TakeTicket{Service: "B", WantESCPOS: true, Language: "zh"})
	if got, want := string(tk.ESCPOS), "hq|B002|1|zh"; got != want {
		t.Errorf("ESC/POS %q, want %q", got, want)
	}
}

// TestEndToEnd: kiosks take tickets while keypads call concurrently;
// displays see every event exactly once and in order.
func TestEndToEnd(t *testing.T) {
	en := newEnv(t, nil)
	const kiosks, perKiosk, keypads = 4, 10, 3
	displays := make([]*client, 2)
	for i := range displays {
		displays[i], _ = en.login(fmt.Sprintf("display-%d", i+1), 1)
	}
	// display-1 starts from scratch (snapshot), display-2 from version 0
	// with a snapshot asked for explicitly: both see every later event.
	for _, d := range displays {
		if _, ok := d.do(&wire.Subscribe{Snapshot: true}).(*wire.Snapshot); !ok {
			t.Fatal("subscribe: no snapshot")
		}
	}
	var wg sync.WaitGroup
	issued := make(chan string, kiosks*perKiosk)
	for k := 0; k < kiosks; k++ {
		cl, _ := en.login(fmt.Sprintf("kiosk-%d", k+1), uint64(k+1))
		wg.Go(func() {
			for i := 0; i < perKiosk; i++ {
				svc := []string{"A", "B"}[i%2]
				m, err := cl.try(&wire.TakeTicket{Service: svc})
				if err != nil {
					t.Errorf("take ticket: %v", err)
					return
				}
				tk, ok := m.(*wire.Ticket)
				if !ok {
					t.Errorf("take ticket: got %+v", m)
					return
				}
				issued <- tk.Number
			}
		})
	}
	var calls sync.Map
	stop := make(chan struct{})
	var kwg sync.WaitGroup
	for k := 0; k < keypads; k++ {
		cl, _ := en.login(fmt.Sprintf("keypad-%d", k+1), 1)
		kwg.Go(func() {
			for {
				m, err := cl.try(&wire.CallNext{})
				if err != nil {
					t.Errorf("call next: %v", err)
					return
				}
				switch m := m.(type) {
				case *wire.Ticket:
					if prev, dup := calls.LoadOrStore(m.Number, m.Counter); dup {
						t.Errorf("%s called twice: counters %v and %d", m.Number, prev, m.Counter)
					}
					if _, err := cl.try(&wire.Start{}); err != nil {
						t.Errorf("start: %v", err)
						return
					}
					if _, err := cl.try(&wire.Complete{}); err != nil {
						t.Errorf("complete: %v", err)
						return
					}
				case *wire.ErrorMsg:
					if m.Code != wire.ErrNoTicketWaiting.Code {
						t.Errorf("call next: %+v", m)
						return
					}
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	kwg.Wait()
	close(issued)
	n := 0
	for range issued {
		n++
	}
	if n != kiosks*perKiosk {
		t.Fatalf("issued %d tickets, want %d", n, kiosks*perKiosk)
	}
	// Call what is left so every ticket was called once.
	kp, _ := en.login("keypad-5", 1)
	for {
		m, err := kp.try(&wire.CallNext{})
		if err != nil {
			t.Fatal(err)
		}
		tk, ok := m.(*wire.Ticket)
		if !ok {
			break
		}
		calls.Store(tk.Number, tk.Counter)
		kp.ticket(&wire.Start{})
		kp.ticket(&wire.Complete{})
	}
	called := 0
	calls.Range(func(any, any) bool { called++; return true })
	if called != n {
		t.Errorf("%d tickets called, want %d", called, n)
	}
	snap, err := en.Engine.Snapshot(context.Background(), "hq")
	if err != nil {
		t.Fatal(err)
	}
	// Each ticket: ISSUED, CALLED, SERVING, DONE.
	if want := int64(4 * n); snap.Version != want {
		t.Errorf("version %d, want %d", snap.Version, want)
	}
	for _, d := range displays {
		evs := d.eventsUntil(uint64(snap.Version))
		kinds := map[wire.EventKind]int{}
		for i, ev := range evs {
			if ev.Version != uint64(i+1) {
				t.Fatalf("%s: event %d has version %d: not exactly once in order", d.id, i, ev.Version)
			}
			kinds[ev.Kind]++
		}
		if kinds[wire.EventIssued] != n || kinds[wire.EventCalled] != n || kinds[wire.EventServing] != n || kinds[wire.EventDone] != n {
			t.Errorf("%s: kinds %v", d.id, kinds)
		}
		// Nothing more arrives.
		if _, m, err := d.readWithin(100 * time.Millisecond); err == nil {
			if _, hb := m.(*wire.Heartbeat); !hb {
				t.Errorf("%s: extra frame %+v", d.id, m)
			}
		}
	}
}

// try is do for goroutines: errors instead of t.Fatal.
func (cl *client) try(m wire.Message) (wire.Message, error) {
	id := cl.next
	cl.next++
	b, err := wire.EncodeMessage(nil, id, 0, m)
	if err != nil {
		return nil, err
	}
	_ = cl.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := cl.c.Write(b); err != nil {
		return nil, err
	}
	for {
		f, a, err := cl.read()
		if err != nil {
			return nil, err
		}
		if f.RequestID == id && f.Flags&wire.FlagResponse != 0 {
			return a, nil
		}
	}
}

// eventsUntil reads events until version v (after those already kept).
func (cl *client) eventsUntil(v uint64) []*wire.Event {
	cl.t.Helper()
	out := cl.evs
	cl.evs = nil
	for len(out) == 0 || out[len(out)-1].Version < v {
		_, m, err := cl.read()
		if err != nil {
			cl.t.Fatalf("%s: reading events (have %d, want up to %d): %v", cl.id, len(out), v, err)
		}
		if ev, ok := m.(*wire.Event); ok {
			out = append(out, ev)
		}
	}
	return out
}

// TestKeypadSubscriptionFiltered: a keypad following its counter gets the
// events of its counter and every ticket event of the services it serves
// (ISSUED, a call at another counter: what changes its "waiting"), not the
// rest of the site (PROTOCOL.md section 7).
func TestKeypadSubscriptionFiltered(t *testing.T) {
	en := newEnv(t, nil)
	kiosk, _ := en.login("kiosk-1", 1)
	kp1, _ := en.login("keypad-1", 1)
	kp2, _ := en.login("keypad-2", 1)
	kp1.wantError(&wire.Subscribe{Counters: []uint32{2}}, wire.ErrWrongCounter.Code)
	if _, ok := kp1.do(&wire.Subscribe{Counters: []uint32{1}, Snapshot: true}).(*wire.Snapshot); !ok {
		t.Fatal("subscribe: no snapshot")
	}
	kiosk.ticket(&wire.TakeTicket{Service: "A"}) // v1, ISSUED in A: counter 1 serves A
	kiosk.ticket(&wire.TakeTicket{Service: "F"}) // v2, ISSUED in F: not counter 1's
	kiosk.ticket(&wire.TakeTicket{Service: "B"}) // v3, ISSUED in B
	kp2.ticket(&wire.CallNext{})                 // v4, A001 called to counter 2
	kp2.do(&wire.Pause{})                        // v5, counter 2 paused: not counter 1's
	kp1.ticket(&wire.CallNext{})                 // v6, B001 called to counter 1
	// The answer to CALL_NEXT may come before or after its event.
	evs := kp1.eventsUntil(6)
	var got []string
	for _, ev := range evs {
		got = append(got, fmt.Sprintf("v%d %s %s@%d", ev.Version, ev.Kind, ev.Number, ev.Counter))
	}
	if want := "v1 issued A001@0|v3 issued B001@0|v4 called A001@2|v6 called B001@1"; strings.Join(got, "|") != want {
		t.Errorf("keypad-1 events:\n got %s\nwant %s", strings.Join(got, "|"), want)
	}
}

// TestResume: a display that reconnects with its last version receives
// exactly the events it missed; too far behind, a snapshot first.
func TestResume(t *testing.T) {
	en := newEnv(t, func(o *protocol.Opts) { o.MaxReplay = 5 })
	kiosk, _ := en.login("kiosk-1", 1)
	d, _ := en.login("display-1", 1)
	if _, ok := d.do(&wire.Subscribe{}).(*wire.Snapshot); !ok {
		t.Fatal("subscribe from 0: no snapshot")
	}
	for i := 0; i < 3; i++ {
		kiosk.ticket(&wire.TakeTicket{Service: "A"})
	}
	evs := d.eventsUntil(3)
	last := evs[len(evs)-1].Version
	d.c.Close()
	for i := 0; i < 4; i++ { // versions 4..7, missed
		kiosk.ticket(&wire.TakeTicket{Service: "B"})
	}
	d, w := en.login("display-1", 2)
	if w.Version != 7 {
		t.Errorf("welcome version %d, want 7", w.Version)
	}
	ok, isOK := d.do(&wire.Subscribe{FromVersion: last}).(*wire.OK)
	if !isOK || ok.Version != 7 {
		t.Fatalf("resume: got %+v, want OK at version 7", ok)
	}
	evs = d.eventsUntil(7)
	if len(evs) != 4 {
		t.Fatalf("got %d events, want the 4 missed", len(evs))
	}
	for i, ev := range evs {
		if ev.Version != last+1+uint64(i) || ev.Number != fmt.Sprintf("B%03d", i+1) {
			t.Errorf("event %d: version %d number %s", i, ev.Version, ev.Number)
		}
	}
	kiosk.ticket(&wire.TakeTicket{Service: "A"}) // live: version 8
	if evs = d.eventsUntil(8); len(evs) != 1 || evs[0].Number != "A004" {
		t.Errorf("live event: %+v", evs)
	}
	// 8 - 1 > MaxReplay: a snapshot at the current version, then live.
	snap, isSnap := d.do(&wire.Subscribe{FromVersion: 1}).(*wire.Snapshot)
	if !isSnap || snap.Version != 8 {
		t.Fatalf("large gap: got %+v, want SNAPSHOT at 8", snap)
	}
	kiosk.ticket(&wire.TakeTicket{Service: "A"})
	if evs = d.eventsUntil(9); len(evs) != 1 || evs[0].Version != 9 {
		t.Errorf("after snapshot: %+v", evs)
	}
	// A version from the future (another database): snapshot.
	if snap, isSnap = d.do(&wire.Subscribe{FromVersion: 1000}).(*wire.Snapshot); !isSnap || snap.Version != 9 {
		t.Errorf("future version: got %+v", snap)
	}
}

// TestCatchUpWhileLive: a subscriber that resumes behind the others
// catches up while events keep coming, and gets every event after its
// version once, in order, as does the live one.
func TestCatchUpWhileLive(t *testing.T) {
	// The displays read nothing while the 30 tickets are issued: on a
	// loaded machine that can take longer than three heartbeats, and a
	// display silent that long is dropped, which is not what this tests.
	en := newEnv(t, func(o *protocol.Opts) { o.IdleTimeout = 10 * time.Minute })
	live, _ := en.login("display-1", 1)
	live.do(&wire.Subscribe{Snapshot: true})
	issue := func(from, n int) {
		for i := range n {
			_, err := en.Engine.Issue(context.Background(), queue.IssueRequest{
				Request: queue.Request{Site: "hq", Device: "test", Key: fmt.Sprint(from + i)}, Service: "A"})
			if err != nil {
				t.Errorf("issue: %v", err)
			}
		}
	}
	issue(0, 10)
	live.eventsUntil(10)
	var wg sync.WaitGroup
	wg.Go(func() { issue(10, 30) })
	late, _ := en.login("display-2", 1)
	late.do(&wire.Subscribe{FromVersion: 2})
	wg.Wait()
	for _, cl := range []*client{live, late} {
		from := uint64(11)
		if cl == late {
			from = 3
		}
		evs := cl.eventsUntil(40)
		for i, ev := range evs {
			if ev.Version != from+uint64(i) {
				t.Fatalf("%s: event %d has version %d, want %d", cl.id, i, ev.Version, from+uint64(i))
			}
		}
	}
}

// TestKioskRetry: the connection drops after TAKE_TICKET; the retry (same
// boot nonce and request id) gets the same ticket, also after a restart.
func TestKioskRetry(t *testing.T) {
	en := newEnv(t, nil)
	const boot = 0x0123456789abcdef
	kiosk, _ := en.login("kiosk-1", boot)
	kiosk.write(7, 0, &wire.TakeTicket{Service: "A"})
	first := kiosk.await(7).(*wire.Ticket)
	kiosk.c.Close() // the kiosk never saw the answer

	kiosk, _ = en.login("kiosk-1", boot)
	kiosk.write(7, wire.FlagRetry, &wire.TakeTicket{Service: "A"})
	again, ok := kiosk.await(7).(*wire.Ticket)
	if !ok || again.ID != first.ID || again.Number != first.Number {
		t.Fatalf("retry got %+v, want ticket %s", again, first.Number)
	}
	// A new request id is a new ticket.
	kiosk.write(8, 0, &wire.TakeTicket{Service: "A"})
	if other := kiosk.await(8).(*wire.Ticket); other.Number == first.Number {
		t.Fatalf("request 8 got the ticket of request 7")
	}
	// An explicit key wins over the derived one and survives a reboot
	// (new boot nonce).
	kiosk.write(9, 0, &wire.TakeTicket{Service: "B", IdemKey: "flash-0042"})
	keyed := kiosk.await(9).(*wire.Ticket)

	en.Restart()
	kiosk, _ = en.login("kiosk-1", boot)
	kiosk.write(7, wire.FlagRetry, &wire.TakeTicket{Service: "A"})
	if again = kiosk.await(7).(*wire.Ticket); again.ID != first.ID {
		t.Fatalf("after restart: got %s, want %s", again.Number, first.Number)
	}
	kiosk2, _ := en.login("kiosk-1", boot+1)
	kiosk2.write(1234, wire.FlagRetry, &wire.TakeTicket{Service: "B", IdemKey: "flash-0042"})
	if again = kiosk2.await(1234).(*wire.Ticket); again.ID != keyed.ID {
		t.Fatalf("explicit key after reboot: got %s, want %s", again.Number, keyed.Number)
	}
}

// frame builds raw frame bytes: header fields as given, then payload and a
// CRC (correct unless crcDelta != 0).
func frame(magic [2]byte, version, typ byte, reqID uint32, declared uint32, payload []byte, crcDelta uint32) []byte {
	b := []byte{magic[0], magic[1], version, typ, 0}
	b = binary.BigEndian.AppendUint32(b, reqID)
	b = binary.BigEndian.AppendUint32(b, declared)
	b = append(b, payload...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b)+crcDelta)
}

var magic = [2]byte{wire.Magic0, wire.Magic1}

// TestBadInput: every bad input of issue 3 §4 is answered with an ERROR
// where the framing allows it, the connection is closed where it does not,
// and other sessions keep working.
func TestBadInput(t *testing.T) {
	en := newEnv(t, nil)
	bystander, _ := en.login("kiosk-8", 1)
	statusPayload, _ := (&wire.Status{}).AppendBinary(nil)
	takeTicket, _ := (&wire.TakeTicket{Service: "A"}).AppendBinary(nil)
	unknownTag := append(append([]byte(nil), takeTicket...), 200, 3, 0, 3, 'n', 'e', 'w') // tag 200, string "new"
	callNext2, _ := (&wire.CallNext{Counter: 2}).AppendBinary(nil)
	malformed := []byte{4, 3, 0, 9, 'A'} // field runs past the end
	tests := []struct {
		name   string
		device string // "" = send before any handshake
		send   []byte
		half   bool   // close our write side after sending
		code   uint16 // ERROR expected; 0: a normal answer
		closed bool   // the server closes the connection
	}{
		{"bad magic", "kiosk-1", frame([2]byte{'X', 'Y'}, 1, 0x1c, 3, 0, nil, 0), false, wire.ErrBadFrame.Code, true},
		{"bad version", "kiosk-1", frame(magic, 9, 0x1c, 3, 0, nil, 0), false, wire.ErrUnsupportedVersion.Code, true},
		{"bad crc", "kiosk-1", frame(magic, 1, 0x1c, 3, uint32(len(statusPayload)), statusPayload, 1), false, wire.ErrBadFrame.Code, true},
		{"oversized length", "kiosk-1", frame(magic, 1, 0x1c, 3, wire.MaxPayload+1, nil, 0)[:13], false, wire.ErrBadFrame.Code, true},
		{"truncated frame", "kiosk-1", frame(magic, 1, 0x10, 3, uint32(len(takeTicket)), takeTicket, 0)[:20], true, wire.ErrBadFrame.Code, true},
		{"unknown type", "kiosk-1", frame(magic, 1, 0x7f, 3, 0, nil, 0), false, wire.ErrUnsupportedType.Code, false},
		{"daemon-only type", "kiosk-1", frame(magic, 1, byte(wire.TypeWelcome), 3, 0, nil, 0), false, wire.ErrUnsupportedType.Code, false},
		{"malformed payload", "kiosk-1", frame(magic, 1, 0x10, 3, uint32(len(malformed)), malformed, 0), false, wire.ErrBadPayload.Code, false},
		{"unknown tag", "kiosk-1", frame(magic, 1, 0x10, 3, uint32(len(unknownTag)), unknownTag, 0), false, 0, false},
		{"wrong role", "kiosk-1", frame(magic, 1, 0x11, 3, 0, nil, 0), false, wire.ErrForbidden.Code, false},
		{"display takes ticket", "display-1", frame(magic, 1, 0x10, 3, uint32(len(takeTicket)), takeTicket, 0), false, wire.ErrForbidden.Code, false},
		{"another counter", "keypad-1", frame(magic, 1, 0x11, 3, uint32(len(callNext2)), callNext2, 0), false, wire.ErrWrongCounter.Code, false},
		{"no hello", "", frame(magic, 1, 0x1c, 1, 0, nil, 0), false, wire.ErrNotAuthenticated.Code, true},
		{"garbage first", "", []byte("GET / HTTP/1.0\r\n\r\n"), false, wire.ErrBadFrame.Code, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cl *client
			if tt.device == "" {
				cl = en.dial()
			} else {
				cl, _ = en.login(tt.device, 1)
			}
			cl.t = t
			cl.raw(tt.send)
			if tt.half {
				_ = cl.c.(*net.TCPConn).CloseWrite()
			}
			f, m, err := cl.read()
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			if e, isErr := m.(*wire.ErrorMsg); tt.code != 0 && (!isErr || e.Code != tt.code) {
				t.Fatalf("got %s %+v, want ERROR 0x%02x", f.Type, m, tt.code)
			} else if tt.code == 0 && isErr {
				t.Fatalf("got ERROR %+v, want an answer", e)
			}
			if tt.closed {
				if codes := cl.expectClose(); len(codes) != 0 {
					t.Errorf("more errors before close: %v", codes)
				}
			} else {
				// Still in session: a STATUS works.
				if _, ok := cl.do(&wire.Status{}).(*wire.Snapshot); !ok {
					t.Errorf("session did not survive")
				}
			}
			bystander.t = t
			bystander.ticket(&wire.TakeTicket{Service: "B"})
		})
	}
}

func TestAuthFailures(t *testing.T) {
	en := newEnv(t, nil)
	tests := []struct {
		name   string
		id     string
		role   wire.Role
		secret []byte
	}{
		{"wrong mac", "kiosk-1", wire.RoleKiosk, []byte("not the secret")},
		{"unknown device", "kiosk-99", wire.RoleKiosk, secretOf("kiosk-99")},
		{"role mismatch", "kiosk-1", wire.RoleConsole, secretOf("kiosk-1")},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := en.dial()
			cl.t = t
			_, err := cl.auth(tt.id, tt.role, 1, tt.secret)
			var se *wire.StatusError
			if !errors.As(err, &se) || se.Code != wire.ErrAuthFailed.Code || se.Msg != wire.ErrAuthFailed.Msg {
				t.Fatalf("got %v, want ERROR 0x10 with the same message for every cause", err)
			}
			if codes := cl.expectClose(); len(codes) != 0 {
				t.Errorf("errors after auth failure: %v", codes)
			}
			if got := en.Server.Stats().AuthFailures; got != int64(i+1) {
				t.Errorf("auth failures %d, want %d", got, i+1)
			}
		})
	}
}

func TestHandshakeTimeout(t *testing.T) {
	en := newEnv(t, func(o *protocol.Opts) { o.HandshakeTimeout = 200 * time.Millisecond })
	cl := en.dial()
	if codes := cl.expectClose(); len(codes) != 1 || codes[0] != wire.ErrTimeout.Code {
		t.Errorf("got %v, want ERROR 0x34 then close", codes)
	}
}

func TestHeartbeats(t *testing.T) {
	en := newEnv(t, func(o *protocol.Opts) { o.Heartbeat = 50 * time.Millisecond })
	// A silent peer is dropped after 3 intervals, after heartbeats. The
	// intervals run from the WELCOME, sent before login returns: start
	// the watch before it, or the check races the server's clock.
	start := time.Now()
	cl, w := en.login("display-1", 1)
	if w.HeartbeatMS != 50 {
		t.Fatalf("heartbeat %d ms", w.HeartbeatMS)
	}
	frames, codes := cl.readUntilError()
	beats := 0
	for _, f := range frames {
		if f.Type == wire.TypeHeartbeat {
			beats++
		}
	}
	if beats < 2 || len(codes) != 1 || codes[0] != wire.ErrTimeout.Code {
		t.Errorf("got %d heartbeats and errors %v, want ≥2 heartbeats then ERROR 0x34", beats, codes)
	}
	if el := time.Since(start); el < 150*time.Millisecond {
		t.Errorf("dropped after %v, before 3 intervals", el)
	}
	// A peer that sends heartbeats stays.
	cl, _ = en.login("display-2", 1)
	for i := 0; i < 8; i++ {
		cl.write(0, 0, &wire.Heartbeat{})
		time.Sleep(25 * time.Millisecond)
	}
	if _, ok := cl.do(&wire.Status{}).(*wire.Snapshot); !ok {
		t.Error("heartbeating peer lost its session")
	}
}

func TestRateLimit(t *testing.T) {
	en := newEnv(t, func(o *protocol.Opts) { o.RateLimit = 0.1; o.RateBurst = 5 })
	cl, _ := en.login("kiosk-1", 1)
	const n = 30
	for i := 0; i < n; i++ { // a flood, pipelined
		cl.write(uint32(100+i), 0, &wire.Status{})
	}
	ok, limited := 0, 0
	for i := 0; i < n; i++ {
		_, m, err := cl.read()
		if err != nil {
			t.Fatal(err)
		}
		switch m := m.(type) {
		case *wire.Snapshot:
			ok++
		case *wire.ErrorMsg:
			if m.Code != wire.ErrRateLimited.Code || !m.Retryable || m.RetryAfterMS == 0 {
				t.Fatalf("got %+v, want retryable ERROR 0x30 with RetryAfterMS", m)
			}
			limited++
		}
	}
	if ok < 5 || ok > 6 || limited != n-ok {
		t.Errorf("%d answered, %d limited; want the burst of 5 (+ refill) answered", ok, limited)
	}
	if got := en.Server.Stats().RateLimited; got != int64(limited) {
		t.Errorf("stats: %d rate limited, want %d", got, limited)
	}
	// Other devices have their own bucket.
	other, _ := en.login("kiosk-2", 1)
	other.ticket(&wire.TakeTicket{Service: "A"})
}

func TestMaxConns(t *testing.T) {
	en := newEnv(t, func(o *protocol.Opts) { o.MaxConns = 2 })
	a, _ := en.login("kiosk-1", 1)
	en.login("kiosk-2", 1)
	third := en.dial()
	if codes := third.expectClose(); len(codes) != 1 || codes[0] != wire.ErrTooManyConnections.Code {
		t.Errorf("third connection: %v, want ERROR 0x32", codes)
	}
	a.c.Close()
	en.waitConns(1)
	b, _ := en.login("kiosk-3", 1)
	b.ticket(&wire.TakeTicket{Service: "A"})
}

// TestSlowConsumer: a display that heartbeats but never reads is dropped
// once its backlog passes the bound (the daemon's SO_SNDBUF, then the send
// queue), with the socket buffers left as the kernel makes them and a write
// deadline too long to be what drops it; the others and the engine keep
// going.
func TestSlowConsumer(t *testing.T) {
	const maxEvents = 6000 // ~1 MB of EVENT frames: far more than the bound
	en := newEnv(t, func(o *protocol.Opts) {
		o.WriteTimeout, o.SendLag, o.IdleTimeout, o.SendQueueBytes = time.Minute, time.Minute, 300*time.Millisecond, 128<<10
	})
	stalled, _ := en.login("display-1", 1)
	stalled.do(&wire.Subscribe{Snapshot: true})
	healthy, _ := en.login("display-2", 1)
	healthy.do(&wire.Subscribe{Snapshot: true})
	kiosk, _ := en.login("kiosk-1", 1)
	// Heartbeats only: the idle time-out must not be what drops anyone.
	stop := make(chan struct{})
	var beats sync.WaitGroup
	for _, cl := range []*client{stalled, healthy, kiosk} {
		beats.Go(func() { cl.heartbeat(stop, 50*time.Millisecond) })
	}
	// The healthy display reads as events come, in order.
	var seen atomic.Int64
	go func() {
		for {
			_, m, err := healthy.read()
			if err != nil {
				return
			}
			if ev, ok := m.(*wire.Event); ok && seen.Load()+1 == int64(ev.Version) {
				seen.Add(1)
			}
		}
	}()

	n := 0
	for en.Server.Stats().SlowConsumers == 0 && n < maxEvents {
		var wg sync.WaitGroup
		for w := 0; w < 16; w++ {
			wg.Go(func() {
				_, err := en.Engine.Issue(context.Background(), queue.IssueRequest{
					Request: queue.Request{Site: "hq", Device: "test", Key: fmt.Sprint(n + w)}, Service: "A"})
				if err != nil {
					t.Errorf("issue: %v", err)
				}
			})
		}
		wg.Wait()
		n += 16
	}
	if got := en.Server.Stats().SlowConsumers; got != 1 {
		t.Fatalf("slow consumers %d after %d events, want 1", got, n)
	}
	// The healthy display got every event, in order; the kiosk still
	// works.
	poll.Until(t, "the healthy display has every event in order", func() bool { return seen.Load() == int64(n) })
	kiosk.ticket(&wire.TakeTicket{Service: "B"})
	close(stop)
	beats.Wait()
	// The stalled display finds the connection closed when it reads again,
	// ending in ERROR 0x33 when that frame made it.
	var got, bytes int
	frames, codes := stalled.readUntilError()
	for _, f := range frames {
		if f.Type == wire.TypeEvent {
			got++
			bytes += wire.HeaderSize + len(f.Payload) + wire.TrailerSize
		}
	}
	if len(codes) > 0 && codes[len(codes)-1] != wire.ErrSlowConsumer.Code {
		t.Errorf("stalled display: errors %v, want 0x33 last", codes)
	}
	t.Logf("stalled display dropped after %d events, of which %d (%d KiB) reached its socket", n, got, bytes>>10)
}

// TestLameDuck: Shutdown tells sessions, lets them finish, refuses new
// connections; Serve returns ErrServerClosed.
func TestLameDuck(t *testing.T) {
	en := newEnv(t, nil)
	kiosk, _ := en.login("kiosk-1", 1)
	display, _ := en.login("display-1", 1)
	display.do(&wire.Subscribe{Snapshot: true})
	kiosk.ticket(&wire.TakeTicket{Service: "A"})
	// A request in flight when Shutdown starts is answered or refused,
	// never lost.
	kiosk.write(50, 0, &wire.TakeTicket{Service: "A"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- en.Server.Shutdown(ctx) }()
	var answered bool
	var codes []uint16
	for {
		f, m, err := kiosk.read()
		if err != nil {
			break
		}
		if f.RequestID == 50 {
			_, answered = m.(*wire.Ticket)
		}
		if e, ok := m.(*wire.ErrorMsg); ok && f.RequestID == 0 {
			codes = append(codes, e.Code)
		}
	}
	if len(codes) != 1 || codes[0] != wire.ErrBusy.Code {
		t.Errorf("kiosk got errors %v, want one ERROR 0x31 (shutting down)", codes)
	}
	if dc := display.expectClose(); len(dc) != 1 || dc[0] != wire.ErrBusy.Code {
		t.Errorf("display got errors %v, want ERROR 0x31", dc)
	}
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := <-en.Served; !errors.Is(err, protocol.ErrServerClosed) {
		t.Errorf("Serve: %v", err)
	}
	en.Served <- protocol.ErrServerClosed // for stop
	if _, err := net.DialTimeout("tcp", en.Addr, time.Second); err == nil {
		t.Errorf("dial after shutdown succeeded")
	}
	snap, err := en.Engine.Snapshot(context.Background(), "hq")
	if err != nil {
		t.Fatal(err)
	}
	if issued := snap.Services[0].Issued; answered && issued != 2 || !answered && issued > 2 {
		t.Errorf("issued %d tickets, answered=%v", issued, answered)
	}
	// Serve after Shutdown returns at once.
	ln := conntest.Listener(t)
	if err := en.Server.Serve(ln); !errors.Is(err, protocol.ErrServerClosed) {
		t.Errorf("Serve after Shutdown: %v", err)
	}
}

func TestNewRejectsBadDevices(t *testing.T) {
	en := newEnv(t, nil)
	tests := []struct {
		name string
		d    protocol.Device
	}{
		{"no secret", protocol.Device{ID: "k", Role: wire.RoleKiosk, Site: "hq"}},
		{"unknown site", protocol.Device{ID: "k", Role: wire.RoleKiosk, Site: "nope", Secret: []byte("x")}},
		{"keypad without counter", protocol.Device{ID: "k", Role: wire.RoleKeypad, Site: "hq", Secret: []byte("x")}},
		{"keypad on unknown counter", protocol.Device{ID: "k", Role: wire.RoleKeypad, Site: "hq", Counter: "9", Secret: []byte("x")}},
		{"bad role", protocol.Device{ID: "k", Role: 9, Site: "hq", Secret: []byte("x")}},
		{"kiosk without site", protocol.Device{ID: "k", Role: wire.RoleKiosk, Secret: []byte("x")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := protocol.New(protocol.Opts{Engine: en.Engine, Devices: []protocol.Device{tt.d}}); err == nil {
				t.Errorf("New accepted %+v", tt.d)
			}
		})
	}
	if _, err := protocol.New(protocol.Opts{}); err == nil {
		t.Error("New without engine succeeded")
	}
}

func TestParseRole(t *testing.T) {
	for _, name := range []string{"kiosk", "keypad", "display", "console"} {
		r, err := protocol.ParseRole(name)
		if err != nil || r.String() != name {
			t.Errorf("ParseRole(%q) = %v, %v", name, r, err)
		}
	}
	if _, err := protocol.ParseRole("printer"); err == nil {
		t.Error("ParseRole(printer) succeeded")
	}
}

// TestJoinBehind: a console that joins a busy day far behind is never
// dropped. Its STATUS answer carries the day's last events; a SUBSCRIBE
// 900 events behind, through a send queue that holds a few dozen, gets
// every one of them in order, at the pace it reads (the catch-up waits for
// room); one further behind than MaxReplay gets a SNAPSHOT, then the tail.
// A display's SNAPSHOT carries no events.
func TestJoinBehind(t *testing.T) {
	const n = 900
	en := newEnv(t, func(o *protocol.Opts) { o.SendQueueBytes = 4 << 10; o.MaxReplay = n - 1 })
	for i := 0; i < n; i += 16 {
		var wg sync.WaitGroup
		for w := i; w < min(i+16, n); w++ {
			wg.Go(func() {
				if _, err := en.Engine.Issue(context.Background(), queue.IssueRequest{
					Request: queue.Request{Site: "hq", Device: "test", Key: fmt.Sprint(w)}, Service: "A"}); err != nil {
					t.Errorf("issue: %v", err)
				}
			})
		}
		wg.Wait()
	}
	con, _ := en.login("console-1", 1)
	snap, ok := con.do(&wire.Status{}).(*wire.Snapshot)
	if !ok || snap.Version != n {
		t.Fatalf("console STATUS: %+v, want a SNAPSHOT at %d", snap, n)
	}
	if len(snap.Recent) != 50 || snap.Recent[0].Version != n-49 || snap.Recent[49].Version != n || snap.Recent[49].Number != fmt.Sprintf("A%03d", n) {
		t.Errorf("console SNAPSHOT carries %d recent events, want versions %d..%d", len(snap.Recent), n-49, n)
	}

	if _, ok := con.do(&wire.Subscribe{FromVersion: 1}).(*wire.OK); !ok {
		t.Fatal("subscribe 899 behind: no OK")
	}
	evs := con.eventsUntil(n)
	for i, ev := range evs {
		if ev.Version != uint64(i+2) {
			t.Fatalf("catch-up event %d has version %d, want %d", i, ev.Version, i+2)
		}
	}
	if len(evs) != n-1 {
		t.Errorf("catch-up: %d events, want %d", len(evs), n-1)
	}
	kiosk, _ := en.login("kiosk-1", 1)
	kiosk.ticket(&wire.TakeTicket{Service: "B"})
	if evs := con.eventsUntil(n + 1); evs[len(evs)-1].Number != "B001" {
		t.Errorf("live after the catch-up: %+v", evs[len(evs)-1])
	}
	if got := en.Server.Stats().SlowConsumers; got != 0 {
		t.Errorf("%d slow consumers, want none: the catch-up goes at its reader's pace", got)
	}

	// Further behind than MaxReplay: the state, with the last events, then the tail.
	con2, _ := en.login("console-1", 2)
	snap, ok = con2.do(&wire.Subscribe{FromVersion: 1}).(*wire.Snapshot)
	if !ok || snap.Version != n+1 || len(snap.Recent) != 50 {
		t.Fatalf("subscribe %d behind: %+v, want a SNAPSHOT at %d with 50 events", n, snap, n+1)
	}
	kiosk.ticket(&wire.TakeTicket{Service: "B"})
	if evs := con2.eventsUntil(n + 2); len(evs) != 1 || evs[0].Number != "B002" {
		t.Errorf("tail after the snapshot: %+v", evs)
	}

	disp, _ := en.login("display-1", 1)
	if snap, ok := disp.do(&wire.Status{}).(*wire.Snapshot); !ok || len(snap.Recent) != 0 {
		t.Errorf("display STATUS: %d recent events, want none", len(snap.Recent))
	}
}
