package led_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices/led"
	"github.com/nowserving/nowserving/devices/led/ledtest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
)

func TestKeypadBusOverPTY(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "ttyKeys")
	l := newLine(t, name)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pads := ledtest.NewKeypads(1, 3) // keypad 2 is missing
	l.Serve(ctx, pads.Serve)

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

	pads.Press(3, led.KeyCallNext)
	pads.Press(1, led.KeyNoShow)
	pads.Press(3, led.KeyRedirect)
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
	pads.WaitDisplay(t, 1, "A23")
	poll.Until(t, "keypad 2 offline", func() bool { return log.has(2, false) })
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
