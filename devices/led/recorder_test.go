package led_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/devices/led"
	"github.com/nowserving/nowserving/devices/led/ledtest"
	"github.com/nowserving/nowserving/internal/testkit/poll"
)

func waitFrame(t *testing.T, rec *ledtest.Recorder, want []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := rec.WaitFor(ctx, func(f []byte) bool { return bytes.Equal(f, want) }); err != nil {
		t.Fatalf("frame % x never written: %v", want, err)
	}
}

// TestAlphaInitAfterReconnect: the Alpha setup frames go first, and again
// after the line was lost, before the current content.
func TestAlphaInitAfterReconnect(t *testing.T) {
	d, err := led.NewAlpha(led.AlphaOpts{})
	if err != nil {
		t.Fatal(err)
	}
	rec := ledtest.New()
	o := fastOpts("rec", d)
	o.Dial = rec.Dial
	p := startPort(t, o)
	init, err := d.Init(2)
	if err != nil {
		t.Fatal(err)
	}
	c := led.Content{Number: "A023", Counter: "5"}
	p.Show(2, c)
	show := encode(t, d, 2, c)
	waitFrame(t, rec, show)
	if got := rec.Frames(); len(got) != 3 || !bytes.Equal(got[0], init[0]) || !bytes.Equal(got[1], init[1]) {
		t.Fatalf("frames % x, want init then content", got)
	}
	poll.Until(t, "online", func() bool { return p.Online(2) })

	rec.Unplug()
	p.Show(2, led.Content{Number: "A024", Counter: "5"})
	poll.Until(t, "offline", func() bool { return !p.Online(2) })
	rec.Reset()
	rec.Plug()
	waitFrame(t, rec, encode(t, d, 2, led.Content{Number: "A024", Counter: "5"}))
	if got := rec.Frames(); len(got) < 3 || !bytes.Equal(got[0], init[0]) {
		t.Fatalf("after reconnect frames % x, want init first", got)
	}
}

// TestModbusExceptionGoesOffline: a board answering with an exception is a
// failing board, and its status carries the exception.
func TestModbusExceptionGoesOffline(t *testing.T) {
	d, err := led.NewModbus(led.ModbusOpts{})
	if err != nil {
		t.Fatal(err)
	}
	rec := ledtest.New()
	rec.Reply(func(f []byte) []byte {
		r := []byte{f[0], f[1] | 0x80, 0x02}
		return binary.LittleEndian.AppendUint16(r, led.CRC16Modbus(r))
	})
	var log statusLog
	o := fastOpts("rec", d)
	o.Dial = rec.Dial
	o.OnStatus = log.add
	p := startPort(t, o)
	p.Show(9, led.Content{Number: "A1"})
	poll.Until(t, "offline status", func() bool { return log.has(9, false) })
	st := p.Status()
	var exc *led.ModbusException
	if len(st) != 1 || !errors.As(st[0].Err, &exc) || exc.Code != 2 {
		t.Fatalf("status %+v: want a Modbus exception 2", st)
	}
	if s := p.Stats(); s.Failures < 2 {
		t.Errorf("stats %+v: want at least 2 failures", s)
	}
}

// TestRefreshResends: with Refresh set, a board gets its content again
// without a new Show (a board that lost power shows the number again).
func TestRefreshResends(t *testing.T) {
	d := template(t)
	rec := ledtest.New()
	o := fastOpts("rec", d)
	o.Dial = rec.Dial
	o.Refresh = 20 * time.Millisecond
	p := startPort(t, o)
	c := led.Content{Number: "A5", Counter: "1"}
	p.Show(1, c)
	want := encode(t, d, 1, c)
	poll.Until(t, "three writes of the same content", func() bool {
		n := 0
		for _, f := range rec.Frames() {
			if bytes.Equal(f, want) {
				n++
			}
		}
		return n >= 3
	})
}

// TestKeypadBusReplug: keypads go offline when the line is lost and come
// back when it returns; a press made meanwhile is reported after.
func TestKeypadBusReplug(t *testing.T) {
	rec := ledtest.New()
	var (
		pressMu sync.Mutex
		press   = map[int]led.Key{}
	)
	rec.Reply(func(f []byte) []byte {
		fr, _, err := led.DecodeKeypadFrame(f)
		if err != nil {
			return nil
		}
		pressMu.Lock()
		k := press[fr.Addr]
		delete(press, fr.Addr)
		pressMu.Unlock()
		if k == 0 {
			k = led.KeyNone
		}
		r, _ := led.EncodeKeypadReply(fr.Addr, k)
		return r
	})
	var log statusLog
	o := led.KeypadOpts{PortOpts: fastOpts("rec", nil), Addrs: []int{4}, PollInterval: time.Millisecond}
	o.Dial = rec.Dial
	o.OnStatus = log.add
	bus, err := led.NewKeypadBus(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go bus.Run(ctx)
	defer bus.Close()

	poll.Until(t, "keypad online", func() bool { return bus.Online(4) })
	rec.Unplug()
	poll.Until(t, "keypad offline", func() bool { return !bus.Online(4) && log.has(4, false) })
	pressMu.Lock()
	press[4] = led.KeyStart
	pressMu.Unlock()
	rec.Plug()
	if ev, _ := poll.Recv(t, bus.Events(), "a key event after replug"); ev != (led.KeyEvent{Addr: 4, Key: led.KeyStart}) {
		t.Errorf("event %+v, want start on 4", ev)
	}
	if !bus.Online(4) {
		t.Error("keypad not online after replug")
	}
}
