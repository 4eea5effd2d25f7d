package led_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices/led"
)

// emulateKeypads plays the keypads at addrs on the far end of l: each answers
// every frame addressed to it with its queued key press (once), and records
// the display texts it was sent.
type keypads struct {
	mu      sync.Mutex
	keys    map[int][]led.Key
	display map[int]string
	polls   map[int]int
}

func (k *keypads) press(addr int, key led.Key) {
	k.mu.Lock()
	k.keys[addr] = append(k.keys[addr], key)
	k.mu.Unlock()
}

func (k *keypads) shown(addr int) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.display[addr]
}

func emulateKeypads(ctx context.Context, l *line, addrs ...int) *keypads {
	k := &keypads{keys: map[int][]led.Key{}, display: map[int]string{}, polls: map[int]int{}}
	present := map[int]bool{}
	for _, a := range addrs {
		present[a] = true
	}
	go func() {
		for {
			l.mu.Lock()
			f, n, err := led.DecodeKeypadFrame(l.got)
			if n > 0 {
				l.got = l.got[n:]
			}
			ch := l.more
			l.mu.Unlock()
			if n > 0 {
				if err != nil || f.Cmd == 0 || !present[f.Addr] {
					continue
				}
				k.mu.Lock()
				key := led.KeyNone
				if q := k.keys[f.Addr]; len(q) > 0 {
					key, k.keys[f.Addr] = q[0], q[1:]
				}
				if f.Cmd == 'D' {
					k.display[f.Addr] = f.Text
				}
				k.polls[f.Addr]++
				k.mu.Unlock()
				reply, _ := led.EncodeKeypadReply(f.Addr, key)
				l.master.Write(reply)
				continue
			}
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
	}()
	return k
}

func TestKeypadBusOverPTY(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "ttyKeys")
	l := newLine(t, name)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pads := emulateKeypads(ctx, l, 1, 3) // keypad 2 is missing

	var log statusLog
	o := led.KeypadOpts{PortOpts: fastOpts(name, nil), Addrs: []int{1, 2, 3}, PollInterval: time.Millisecond}
	o.ReplyTimeout = 50 * time.Millisecond
	o.OnStatus = log.add
	bus, err := led.NewKeypadBus(o)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- bus.Run(ctx) }()
	defer func() {
		bus.Close()
		<-errc
	}()

	pads.press(3, led.KeyCallNext)
	pads.press(1, led.KeyNoShow)
	pads.press(3, led.KeyRedirect)
	got := map[led.KeyEvent]int{}
	timeout := time.After(10 * time.Second)
	for len(got) < 3 {
		select {
		case ev := <-bus.Events():
			got[ev]++
		case <-timeout:
			t.Fatalf("events so far: %v", got)
		}
	}
	for _, want := range []led.KeyEvent{{3, led.KeyCallNext}, {1, led.KeyNoShow}, {3, led.KeyRedirect}} {
		if got[want] != 1 {
			t.Errorf("event %+v seen %d times, want 1", want, got[want])
		}
	}
	bus.Display(1, "A23")
	eventually(t, "display on keypad 1", func() bool { return pads.shown(1) == "A23" })
	eventually(t, "keypad 2 offline", func() bool { return log.has(2, false) })
	if !bus.Online(1) || !bus.Online(3) || bus.Online(2) {
		t.Errorf("online 1,2,3 = %v %v %v; want true false true", bus.Online(1), bus.Online(2), bus.Online(3))
	}
}

func TestKeypadBusErrors(t *testing.T) {
	if _, err := led.NewKeypadBus(led.KeypadOpts{PortOpts: led.PortOpts{Name: "x"}}); err == nil {
		t.Error("no addresses: want error")
	}
	if _, err := led.NewKeypadBus(led.KeypadOpts{PortOpts: led.PortOpts{Name: "x"}, Addrs: []int{1, 1}}); err == nil {
		t.Error("duplicate address: want error")
	}
	if _, err := led.NewKeypadBus(led.KeypadOpts{PortOpts: led.PortOpts{Name: "x"}, Addrs: []int{300}}); err == nil {
		t.Error("address 300: want error")
	}
}
