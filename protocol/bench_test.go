package protocol_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net"
	"runtime"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

var (
	benchConns  = flag.Int("conns", 0, "BenchmarkConns: connections to open (0: b.N); each takes 2 file descriptors in this process")
	benchKiosks = flag.Int("kiosks", 64, "BenchmarkTakeTicket: concurrent kiosk connections")
)

// fdRoom is how many connections the open-file limit leaves room for: the
// benchmark holds both ends of each connection in one process.
func fdRoom() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 1000
	}
	return int(rl.Cur-200) / 2
}

// benchLogin opens an authenticated kiosk connection and returns it with
// no reader attached (the handshake's small bufio.Reader is dropped).
func benchLogin(addr string, boot uint64) (net.Conn, error) {
	return benchLoginAs(addr, "kiosk-1", wire.RoleKiosk, boot)
}

// benchLoginAs opens an authenticated connection for device id and returns
// it with no reader attached: nothing may follow WELCOME before a request.
func benchLoginAs(addr, id string, role wire.Role, boot uint64) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReaderSize(c, 64)
	write := func(id uint32, m wire.Message) error {
		b, err := wire.EncodeMessage(nil, id, 0, m)
		if err == nil {
			_, err = c.Write(b)
		}
		return err
	}
	fail := func(err error) (net.Conn, error) { c.Close(); return nil, err }
	if err := write(1, &wire.Hello{DeviceID: id, Role: role, ProtocolVersion: 1, BootNonce: boot}); err != nil {
		return fail(err)
	}
	f, err := wire.ReadFrame(br, 0)
	if err != nil {
		return fail(err)
	}
	var ch wire.Challenge
	if err := ch.Decode(f.Payload); err != nil || f.Type != wire.TypeChallenge {
		return fail(fmt.Errorf("no challenge: %v", err))
	}
	if err := write(2, &wire.Auth{MAC: wire.ComputeMAC(secretOf(id), ch.Nonce, id)}); err != nil {
		return fail(err)
	}
	if f, err = wire.ReadFrame(br, 0); err != nil || f.Type != wire.TypeWelcome {
		return fail(fmt.Errorf("not welcomed: %v %v", f.Type, err))
	}
	if br.Buffered() != 0 {
		return fail(fmt.Errorf("unexpected bytes after WELCOME"))
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

// BenchmarkConns opens N authenticated kiosk connections (-conns, else
// b.N) and reports the server's memory per connection. Both ends live in
// this process: the client side is a bare net.Conn, so the figures are
// dominated by the server's session (two goroutines, a 1 KiB read buffer
// and the send queue). 10,000 connections need `ulimit -n` above 20,200.
//
//	go test ./protocol -run '^$' -bench Conns -conns 10000 -benchtime 1x
func BenchmarkConns(b *testing.B) {
	n := *benchConns
	if n == 0 {
		n = b.N
	}
	if room := fdRoom(); n > room {
		b.Logf("open-file limit allows %d connections, not %d: raise ulimit -n", room, n)
		n = room
	}
	en := newEnv(b, func(o *protocol.Opts) { o.MaxConns = n + 10; o.Heartbeat = time.Minute })
	conns := make([]net.Conn, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	next := make(chan int)
	for w := 0; w < 32; w++ {
		wg.Go(func() {
			for i := range next {
				c, err := benchLogin(en.Addr, uint64(i))
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				conns[i] = c
			}
		})
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if firstErr != nil {
		b.Fatalf("login: %v", firstErr)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got := en.Server.Stats().Conns; got != n {
		b.Errorf("server has %d connections, want %d", got, n)
	}
	heap := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
	stack := float64(int64(after.StackInuse)-int64(before.StackInuse)) / float64(n)
	b.ReportMetric(heap, "heap-B/conn")
	b.ReportMetric(stack, "stack-B/conn")
	b.ReportMetric(float64(n)/elapsed.Seconds(), "logins/s")
	b.ReportMetric(float64(n), "conns")
	for _, c := range conns {
		c.Close()
	}
}

// BenchmarkTakeTicket measures ticket issue over TCP with -kiosks
// concurrent kiosks (default 64), each waiting for its answer before
// sending the next request: throughput and latency percentiles. Every
// ticket is committed durably (SQLite, synchronous=FULL, group commit).
//
//	go test ./protocol -run '^$' -bench TakeTicket -benchtime 5000x
func BenchmarkTakeTicket(b *testing.B) {
	k := max(*benchKiosks, 1)
	en := newEnv(b, func(o *protocol.Opts) { o.MaxConns = k + 10 })
	ks := make([]*benchConn, k)
	for i := range ks {
		c, err := benchLogin(en.Addr, uint64(i))
		ks[i] = newBenchConn(b, c, err)
	}
	work := make(chan uint32, b.N)
	for i := 0; i < b.N; i++ {
		work <- uint32(i + 3)
	}
	close(work)
	runConns(b, ks, "tickets/s", func(kk *benchConn) {
		for id := range work {
			if !kk.ask(b, id, &wire.TakeTicket{Service: []string{"A", "B"}[id%2]}) {
				return
			}
		}
	})
}

// benchConn is a logged-in connection of a benchmark that sends one
// request at a time and times each answer.
type benchConn struct {
	c   net.Conn
	br  *bufio.Reader
	lat []time.Duration
}

// newBenchConn takes the connection a login opened (or fails b with its
// error); it is closed when the benchmark ends.
func newBenchConn(b *testing.B, c net.Conn, err error) *benchConn {
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return &benchConn{c: c, br: bufio.NewReader(c)}
}

// ask sends m as request id and reads the answer, which must be a TICKET;
// it records the latency, or fails b and returns false.
func (bc *benchConn) ask(b *testing.B, id uint32, m wire.Message) bool {
	t0 := time.Now()
	frame, _ := wire.EncodeMessage(nil, id, 0, m)
	if _, err := bc.c.Write(frame); err != nil {
		b.Error(err)
		return false
	}
	f, err := wire.ReadFrame(bc.br, 0)
	if err != nil {
		b.Error(err)
		return false
	}
	if f.Type != wire.TypeTicket {
		var e wire.ErrorMsg
		_ = e.Decode(f.Payload)
		b.Errorf("%s: got %s %+v", m.Type(), f.Type, e)
		return false
	}
	bc.lat = append(bc.lat, time.Since(t0))
	return true
}

// runConns runs run on each connection, one goroutine each, with the
// timer on, and reports the throughput of the answers timed, in unit, and
// their latency percentiles.
func runConns(b *testing.B, conns []*benchConn, unit string, run func(*benchConn)) {
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for _, bc := range conns {
		wg.Go(func() { run(bc) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	var all []time.Duration
	for _, bc := range conns {
		all = append(all, bc.lat...)
	}
	if len(all) == 0 {
		return
	}
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), unit)
	reportLatency(b, all)
	b.ReportMetric(0, "ns/op")
}

// reportLatency reports the median and 99th percentile of lat.
func reportLatency(b *testing.B, lat []time.Duration) {
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

var benchDisplays = flag.Int("displays", 200, "BenchmarkFanout: subscribed display connections")

// BenchmarkFanout measures how long an event takes from the kiosk sending
// TAKE_TICKET to each of -displays subscribed displays (default 200)
// reading its EVENT: the key-press-to-board latency, over TCP, including
// the durable commit. Tickets are taken one after another.
//
//	go test ./protocol -run '^$' -bench Fanout -benchtime 200x -displays 1000
func BenchmarkFanout(b *testing.B) {
	d := max(*benchDisplays, 1)
	if room := fdRoom() - 10; d > room {
		d = room
	}
	en := newEnv(b, func(o *protocol.Opts) { o.MaxConns = d + 10 })
	sent := make([]time.Time, b.N+1) // by event version
	var mu sync.Mutex
	var lat []time.Duration
	var ready, done sync.WaitGroup
	for i := 0; i < d; i++ {
		c, err := benchDisplay(en.Addr, uint64(i))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		ready.Add(1)
		done.Go(func() {
			br := bufio.NewReader(c)
			mine := make([]time.Duration, 0, b.N)
			subscribed := false
			for {
				f, err := wire.ReadFrame(br, 0)
				if err != nil {
					b.Error(err)
					return
				}
				if f.Type == wire.TypeSnapshot && !subscribed {
					subscribed = true
					ready.Done()
					continue
				}
				if f.Type != wire.TypeEvent {
					continue
				}
				var ev wire.Event
				if err := ev.Decode(f.Payload); err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				mine = append(mine, time.Since(sent[ev.Version]))
				mu.Unlock()
				if ev.Version >= uint64(b.N) {
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
					return
				}
			}
		})
	}
	ready.Wait()
	kiosk, err := benchLogin(en.Addr, 1<<40)
	if err != nil {
		b.Fatal(err)
	}
	defer kiosk.Close()
	br := bufio.NewReader(kiosk)
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		frame, _ := wire.EncodeMessage(nil, uint32(i+2), 0, &wire.TakeTicket{Service: "A"})
		mu.Lock()
		sent[i] = time.Now()
		mu.Unlock()
		if _, err := kiosk.Write(frame); err != nil {
			b.Fatal(err)
		}
		if f, err := wire.ReadFrame(br, 0); err != nil || f.Type != wire.TypeTicket {
			b.Fatalf("take ticket: %v %v", f.Type, err)
		}
	}
	done.Wait()
	b.StopTimer()
	if len(lat) == 0 {
		return
	}
	reportLatency(b, lat)
	b.ReportMetric(float64(d), "displays")
}

// benchDisplay opens a display session subscribed from scratch; the
// SNAPSHOT answer is left for the caller to read.
func benchDisplay(addr string, boot uint64) (net.Conn, error) {
	c, err := benchLoginAs(addr, fmt.Sprintf("display-%d", 1+boot%3), wire.RoleDisplay, boot)
	if err != nil {
		return nil, err
	}
	b, _ := wire.EncodeMessage(nil, 3, 0, &wire.Subscribe{Snapshot: true})
	if _, err := c.Write(b); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// BenchmarkKeypad measures keypad answers over TCP: the five keypads of
// the test site each call the next ticket and start serving it, one request
// at a time (CALL_NEXT, START, CALL_NEXT...), over a queue filled
// beforehand; every answer carries the keypad's LCD lines ("N waiting").
// Throughput and latency percentiles of the answers.
//
//	go test ./protocol -run '^$' -bench Keypad -benchtime 2000x
func BenchmarkKeypad(b *testing.B) {
	en := newEnv(b, nil)
	calls := (b.N + 1) / 2
	fillQueue(b, en, calls)
	kps := make([]*benchConn, 5)
	for i := range kps {
		c, err := benchLoginAs(en.Addr, fmt.Sprintf("keypad-%d", i+1), wire.RoleKeypad, uint64(i))
		kps[i] = newBenchConn(b, c, err)
	}
	work := make(chan struct{}, calls)
	for i := 0; i < calls; i++ {
		work <- struct{}{}
	}
	close(work)
	runConns(b, kps, "answers/s", func(kp *benchConn) {
		for id := uint32(3); ; id += 2 {
			if _, ok := <-work; !ok || !kp.ask(b, id, &wire.CallNext{}) || !kp.ask(b, id+1, &wire.Start{}) {
				return
			}
		}
	})
}

// fillQueue issues n tickets through the engine, 32 at a time.
func fillQueue(b *testing.B, en *env, n int) {
	b.Helper()
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Go(func() {
			for i := range next {
				_, err := en.Engine.Issue(context.Background(), queue.IssueRequest{
					Request: queue.Request{Site: "hq", Device: "bench"}, Service: []string{"A", "B"}[i%2]})
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkWelcome measures display logins one after another: HELLO,
// CHALLENGE, AUTH and the WELCOME, which carries the site's event version.
//
//	go test ./protocol -run '^$' -bench Welcome -benchtime 2000x
func BenchmarkWelcome(b *testing.B) {
	en := newEnv(b, nil)
	fillQueue(b, en, 200)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := benchLoginAs(en.Addr, "display-1", wire.RoleDisplay, uint64(i))
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
