package protocol

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/logtest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

func TestBucket(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tests := []struct {
		name  string
		rate  float64
		burst int
		at    []time.Duration // offsets of the takes
		want  []bool
	}{
		{"burst then refused", 1, 3, []time.Duration{0, 0, 0, 0}, []bool{true, true, true, false}},
		{"refill", 2, 1, []time.Duration{0, 0, 500 * time.Millisecond, 600 * time.Millisecond}, []bool{true, false, true, false}},
		{"refill capped at burst", 10, 2, []time.Duration{0, 0, time.Hour, time.Hour, time.Hour}, []bool{true, true, true, true, false}},
		{"disabled", -1, 0, []time.Duration{0, 0, 0}, []bool{true, true, true}},
		{"zero rate", 0, 1, []time.Duration{0, time.Hour}, []bool{true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBucket(tt.rate, tt.burst)
			for i, d := range tt.at {
				ok, wait := b.take(t0.Add(d))
				if ok != tt.want[i] {
					t.Fatalf("take %d at +%v: %v, want %v", i, d, ok, tt.want[i])
				}
				if !ok && wait <= 0 {
					t.Errorf("take %d refused with no wait", i)
				}
			}
		})
	}
	b := newBucket(4, 1)
	b.take(t0)
	if _, wait := b.take(t0); wait != 250*time.Millisecond {
		t.Errorf("wait %v, want 250ms", wait)
	}
}

// TestSendQueue: the queue is bounded by bytes and by how long its oldest
// frame waits, never by a count of frames; a paced sender waits for room
// instead of overflowing it.
func TestSendQueue(t *testing.T) {
	t0 := time.Unix(1796000000, 0)
	q := &sendQueue{maxBytes: 4, maxLag: time.Second}
	if ok, start, _ := q.push([]byte("a"), t0, false); !ok || !start {
		t.Fatalf("push a: ok %v start %v, want a flusher started", ok, start)
	}
	for _, b := range []string{"b", "c", "d"} {
		// Many small frames: only bytes count.
		if ok, start, _ := q.push([]byte(b), t0, false); !ok || start {
			t.Fatalf("push %s: ok %v start %v, want queued behind the flusher", b, ok, start)
		}
	}
	if ok, _, full := q.push([]byte("e"), t0, false); ok || !full {
		t.Fatalf("push e past 4 bytes: ok %v full %v", ok, full)
	}
	// A paced sender is told to wait, not refused, and woken by the take.
	ok, _, room := q.pushPaced([]byte("p"), t0)
	if ok || room == nil {
		t.Fatalf("paced push into a full queue: ok %v room %v, want a channel to wait on", ok, room)
	}
	q.mu.Lock()
	got, closing, idle := q.take()
	q.mu.Unlock()
	if len(got) != 4 || string(got[0]) != "a" || string(got[3]) != "d" || closing || idle {
		t.Fatalf("take: %q closing=%v idle=%v", got, closing, idle)
	}
	select {
	case <-room:
	default:
		t.Fatal("paced sender not woken by the take")
	}
	if ok, _, room := q.pushPaced([]byte("p"), t0); !ok || room != nil {
		t.Fatalf("paced push after the take: ok %v room %v", ok, room)
	}
	// Time behind: the oldest frame waited past maxLag.
	if ok, _, full := q.push([]byte("f"), t0.Add(2*time.Second), false); ok || !full {
		t.Fatalf("push behind a frame 2 s old: ok %v full %v, want full", ok, full)
	}
	q.mu.Lock()
	q.take()
	q.mu.Unlock()
	// An empty queue takes a frame of any size.
	big := make([]byte, 100)
	if ok, start, _ := q.push(big, t0, false); !ok || start {
		t.Fatalf("push big into an empty queue: ok %v start %v", ok, start)
	}
	if ok, _, full := q.push([]byte("d"), t0, false); ok || !full {
		t.Fatalf("push past the byte bound: ok %v full %v", ok, full)
	}
	q.mu.Lock()
	q.take()
	if _, _, idle = q.take(); !idle {
		t.Fatal("empty queue not idle")
	}
	q.mu.Unlock()
	if ok, start, _ := q.push(nil, t0, true); !ok || !start {
		t.Fatal("push close marker")
	}
	q.mu.Lock()
	if got, closing, _ = q.take(); len(got) != 0 || !closing {
		t.Fatalf("take after close marker: %q closing=%v", got, closing)
	}
	q.mu.Unlock()
	if ok, _, full := q.push([]byte("e"), t0, false); ok || full {
		t.Fatalf("push after close: ok %v full %v, want refused, not full", ok, full)
	}
	if ok, _, room := q.pushPaced([]byte("e"), t0); ok || room != nil {
		t.Fatalf("paced push after close: ok %v room %v, want refused", ok, room)
	}
	q.closed()
	select {
	case <-q.finished():
	default:
		t.Fatal("finished not closed after closed")
	}
	if first, _ := q.kill(nil, "late"); first {
		t.Fatal("kill after close reported first")
	}
}

// TestRefusalLog: the first refusal is logged at once; those after it in
// the interval come as one summary with counts by reason, when it ends.
func TestRefusalLog(t *testing.T) {
	var buf logtest.Buffer
	l := &refusalLog{log: buf.Logger(), now: time.Now, every: 50 * time.Millisecond}
	l.note("bad frame", "remote", "10.0.0.1:1")
	for i := 0; i < 30; i++ {
		l.note("wrong mac", "remote", "10.0.0.2:1", "device", "kiosk-1")
	}
	l.note("bad frame", "remote", "10.0.0.3:1")
	if got := strings.Count(buf.String(), "\n"); got != 1 {
		t.Fatalf("%d lines before the interval ends, want 1:\n%s", got, buf.String())
	}
	if !poll.Within(5*time.Second, 10*time.Millisecond, func() bool { return strings.Contains(buf.String(), "handshakes refused") }) {
		t.Fatalf("no summary:\n%s", buf.String())
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	sum := lines[len(lines)-1]
	for _, want := range []string{"refused=31", "by_reason.wrong_mac=30", "by_reason.bad_frame=1", "last.remote=10.0.0.3:1"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %s: %s", want, sum)
		}
	}
}

// TestClosedRefusal: a kiosk refused outside the hours reads, after the
// code's message, when the service opens in each of the site's languages.
func TestClosedRefusal(t *testing.T) {
	t.Parallel() // its own store; its time is spent waiting on synced commits
	sp, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	site := queue.Site{ID: "b", Location: sp, Languages: []string{"pt", "en"},
		Services: []queue.Service{{Code: "P", Prefix: "P", Width: 3, Names: map[string]string{"pt": "Pessoa física", "en": "Personal"},
			Hours: []queue.Hours{{Days: []time.Weekday{time.Monday}, Open: 10 * time.Hour, Close: 16 * time.Hour}}}},
		Counters: []queue.Counter{{ID: "1", Services: []queue.CounterService{{Service: "P"}}}}}
	eng := storetest.StartEngine(t, queue.Opts{Store: storetest.SQLite(t), Sites: []queue.Site{site},
		Clock: storetest.FixedClock(time.Date(2026, 12, 5, 12, 0, 0, 0, sp)).Now})
	_, err = eng.Issue(context.Background(), queue.IssueRequest{Request: queue.Request{Site: "b", Device: "k"}, Service: "P"})
	se, internal := statusOf(err)
	want := "service closed: Pessoa física: fechado, abre seg 10:00 / Personal: closed, opens Mon 10:00"
	if internal || se.Code != wire.ErrServiceClosed.Code || se.Msg != want {
		t.Errorf("refusal %v (internal %v), want 0x22 %q", se, internal, want)
	}
}

// TestCheckInLateMsg: 0x2D names the booking by its code, as the other
// refusals of a CHECK_IN do (PROTOCOL.md §5a), not by its id.
func TestCheckInLateMsg(t *testing.T) {
	err := fmt.Errorf("check in: %w", &queue.CheckInLateError{ID: 7, Code: "K7P3X9QM", Reason: "its slot ended at 09:45"})
	se, internal := statusOf(err)
	want := "too late to check in: booking K7P3X9QM: its slot ended at 09:45"
	if internal || se.Code != wire.ErrCheckInLate.Code || se.Msg != want {
		t.Errorf("refusal %v (internal %v), want 0x2D %q", se, internal, want)
	}
	if !errors.Is(err, queue.ErrCheckInLate) || !queue.IsRefusal(err) {
		t.Errorf("%v: not ErrCheckInLate, or not a refusal", err)
	}
}
