package web

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/staff"
)

// BenchmarkCounterCall measures a counter page's call as the issue's
// latency target names it: from the moment a person's "call next" is due
// to the hall display's event stream carrying the call, over loopback
// HTTP, on SQLite with durable commits. It is open loop: each call is
// sent at its time (4 a second over 8 counters) whether or not the ones
// before have been answered, and its latency counts from then. Each call
// is started at once, so the counter's next call completes it, as a
// person at a counter does. A counter page is open at each counter,
// reading its board after every change as counter.js does. b.N calls run
// on an idle daemon, then b.N more while kiosks take BackgroundRate
// tickets a second and a keypad calls them (sim load's default rate, in
// process); it reports p50 and p99 of both side by side and the ratio of
// the p99s, and the CPU time per call:
//
//	go test -run '^$' -bench CounterCall -benchtime 100x ./web
func BenchmarkCounterCall(b *testing.B) {
	const counters, rate = 8, 4.0 // calls per second, over the counters
	cb := newCounterBench(b, counters)
	cb.pages(b, counters)
	c0 := cpuTime()
	idle, idleKeys := cb.run(b, b.N, rate)
	c1 := cpuTime()
	stop := cb.background(b, BackgroundRate)
	c2 := cpuTime()
	loaded, loadedKeys := cb.run(b, b.N, rate)
	c3 := cpuTime()
	stop()
	cb.st.report(b, "idle", idleKeys)
	cb.st.report(b, "loaded", loadedKeys)
	// CPU time (client and daemon, one process) per call: what a loaded
	// machine's latency is made of, and steadier than the latency itself.
	b.ReportMetric(ms(c1-c0)/float64(b.N), "cpu-ms/call-idle")
	b.ReportMetric(ms(c3-c2)/float64(b.N), "cpu-ms/call-loaded")
	b.ReportMetric(ms(quantile(idle, 50)), "p50-idle-ms")
	b.ReportMetric(ms(quantile(idle, 99)), "p99-idle-ms")
	b.ReportMetric(ms(quantile(loaded, 50)), "p50-loaded-ms")
	b.ReportMetric(ms(quantile(loaded, 99)), "p99-loaded-ms")
	b.ReportMetric(ms(quantile(loaded, 99))/max(ms(quantile(idle, 99)), 0.001), "p99-loaded/idle")
	b.ReportMetric(float64(cb.missed), "missed")
	b.ReportMetric(0, "ns/op") // the time per call is the pacing's, not a cost
}

// BackgroundRate is the tickets a second kiosks take (and keypads call)
// behind BenchmarkCounterCall's loaded calls.
const BackgroundRate = 5.0

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func quantile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(p/100*float64(len(s)-1)+0.5))]
}

type counterBench struct {
	se       *staffEnv
	st       *stages
	p        *person
	counters []string
	missed   int
	mu       sync.Mutex
	seen     map[string]chan time.Time // number → when the display saw its call
}

func newCounterBench(b *testing.B, n int) *counterBench {
	cb := &counterBench{seen: map[string]chan time.Time{}, st: newStages()}
	se := newStaffEnv(b, func(qo *queue.Opts, wo *Opts) {
		qo.Clock, wo.Clock = time.Now, time.Now // waits and service days as they are
		qo.Store = &timedStore{Store: qo.Store.(*sqlite.Store), st: cb.st}
		p, err := staff.New(staff.Opts{Accounts: accounts{qo.Store.(queue.AccountStore), cb.st}, Idle: 10 * time.Minute, Params: cheapHash})
		if err != nil {
			b.Fatal(err)
		}
		wo.Staff = p
		s := &qo.Sites[0]
		s.Services[0].DailyCap = 0
		s.Counters = s.Counters[:1]
		for i := range n {
			id := fmt.Sprint(10 + i)
			cb.counters = append(cb.counters, id)
			s.Counters = append(s.Counters, queue.Counter{ID: id, Services: []queue.CounterService{{Service: "A", Weight: 1}}, Policy: queue.PolicyStrict})
		}
	})
	cb.se = se
	hs := httptest.NewServer(cb.st.handler(se.srv.Handler()))
	b.Cleanup(func() { se.srv.stop(); hs.Close() })
	se.http = hs
	cb.st.subscribe(b, se.eng)
	se.issueN(2*b.N+10, "A")
	cb.p = se.person(b)
	// A browser keeps up to six connections to a host.
	cb.p.c.Transport = &http.Transport{MaxIdleConnsPerHost: 6, MaxConnsPerHost: 6}
	cb.p.login("wang", "secret-pass")
	cb.p.session()
	resp, err := http.Get(se.http.URL + "/display/main/events")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { resp.Body.Close() })
	go cb.follow(resp.Body)
	return cb
}

// follow reads the display's stream and stamps each call as it arrives.
func (cb *counterBench) follow(r io.Reader) {
	br := bufio.NewReader(r)
	var event string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		now := time.Now()
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			event = line[7:]
		case strings.HasPrefix(line, "data: ") && event == "call":
			var c struct {
				Number string `json:"number"`
			}
			if json.Unmarshal([]byte(line[6:]), &c) == nil {
				cb.stamp(c.Number) <- now
			}
		}
	}
}

func (cb *counterBench) stamp(number string) chan time.Time {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	ch := cb.seen[number]
	if ch == nil {
		ch = make(chan time.Time, 1)
		cb.seen[number] = ch
	}
	return ch
}

// run sends n calls at rate a second, open loop, and returns each one's
// latency from its due time to the display's call.
func (cb *counterBench) run(b *testing.B, n int, rate float64) ([]time.Duration, []string) {
	b.Helper()
	out := make([]time.Duration, n)
	keys := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	gap := time.Duration(float64(time.Second) / rate)
	start := time.Now().Add(50 * time.Millisecond)
	// One call at a time per counter: its next call waits for its start.
	turn := map[string]chan struct{}{}
	for _, c := range cb.counters {
		turn[c] = make(chan struct{}, 1)
		turn[c] <- struct{}{}
	}
	for i := range n {
		due := start.Add(time.Duration(i) * gap)
		time.Sleep(time.Until(due))
		c := cb.counters[i%len(cb.counters)]
		wg.Go(func() {
			<-turn[c]
			defer func() { turn[c] <- struct{}{} }()
			lat, err := cb.call(c, due, &keys[i])
			if err != nil {
				errs <- err
				return
			}
			out[i] = lat
		})
	}
	wg.Wait()
	close(errs)
	// A call refused or not seen (a loaded machine) is counted, not fatal:
	// its latency is not among the others.
	var first error
	for err := range errs {
		cb.missed++
		first = cmp.Or(first, err)
	}
	if first != nil {
		b.Logf("%d calls missed, the first: %v", cb.missed, first)
	}
	return slices.DeleteFunc(out, func(d time.Duration) bool { return d == 0 }), keys
}

var keys struct {
	sync.Mutex
	n int
}

func nextKey() string {
	keys.Lock()
	defer keys.Unlock()
	keys.n++
	return fmt.Sprintf("bench-%08d", keys.n)
}

// call is one "call next" at counter c, due at due, then its start.
func (cb *counterBench) call(c string, due time.Time, key *string) (time.Duration, error) {
	var res StaffActionResult
	*key = nextKey()
	cs := cb.st.call(*key)
	cs.due = due
	cb.st.stamp(&cs.sent)
	if err := cb.post(c, "next", *key, &res); err != nil {
		return 0, err
	}
	if res.Ticket == nil {
		return 0, fmt.Errorf("counter %s: next called nothing", c)
	}
	var seen time.Time
	select {
	case seen = <-cb.stamp(res.Ticket.Number):
	case <-time.After(10 * time.Second):
		return 0, fmt.Errorf("the display did not show %s within 10 s", res.Ticket.Number)
	}
	cb.st.mu.Lock()
	cs.seen, cs.number = seen, res.Ticket.Number
	cb.st.mu.Unlock()
	if err := cb.post(c, "start", nextKey(), nil); err != nil {
		return 0, err
	}
	return seen.Sub(due), nil
}

func (cb *counterBench) post(c, action, key string, out any) error {
	req, err := http.NewRequest("POST", cb.p.base+"/counter/api/main/"+c+"/"+action, strings.NewReader(`{"key":"`+key+`"}`))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(csrfHeader, cb.p.csrf)
	resp, err := cb.p.c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s at %s: %d %s", action, c, resp.StatusCode, body)
	}
	if out != nil {
		return json.Unmarshal(body, out)
	}
	return nil
}

// background takes tickets of A at rate a second as a kiosk, and calls
// them at counter 5 as its keypad (next, which completes the one before),
// open loop, until stop. It returns once a second's worth is done, at
// its pace.
func (cb *counterBench) background(b *testing.B, rate float64) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var done atomic.Int64
	e := cb.se.eng
	wg.Go(func() {
		gap := time.Duration(float64(time.Second) / rate)
		t := time.NewTicker(gap)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			wg.Go(func() {
				r := queue.Request{Site: "main", Device: "kiosk-bg", Key: fmt.Sprint("bg-issue-", i)}
				e.Issue(ctx, queue.IssueRequest{Request: r, Service: "A"})
				k := queue.Request{Site: "main", Device: "keypad-5", Key: fmt.Sprint("bg-call-", i)}
				if _, err := e.CallNext(ctx, queue.CounterRequest{Request: k, Counter: "5"}); err == nil {
					k.Key += "-start"
					e.Start(ctx, queue.CounterRequest{Request: k, Counter: "5"})
				}
				done.Add(1)
			})
		}
	})
	poll.Until(b, "a second of background load", func() bool { return done.Load() >= int64(rate) })
	return func() { cancel(); wg.Wait() }
}

// pages opens a counter page's reads at each of the first n counters: it
// follows the display's stream and reads its counter's board after each
// state, one read at a time, with one more after it when states came
// meanwhile (counter.js's read).
func (cb *counterBench) pages(b *testing.B, n int) {
	for _, c := range cb.counters[:n] {
		resp, err := http.Get(cb.se.http.URL + "/display/main/events")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { resp.Body.Close() })
		kick := make(chan struct{}, 1)
		hc := &http.Client{Jar: cb.p.c.Jar, Transport: &http.Transport{}} // another browser
		go func() {
			br := bufio.NewReader(resp.Body)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					close(kick)
					return
				}
				if line == "event: state\n" {
					select {
					case kick <- struct{}{}:
					default:
					}
				}
			}
		}()
		go func() {
			for range kick {
				req, _ := http.NewRequest("GET", cb.p.base+"/counter/api/main/"+c, nil)
				if resp, err := hc.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}()
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
