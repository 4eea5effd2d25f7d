package metrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nowserving/nowserving/protocol/wire"
)

func TestProtocol(t *testing.T) {
	p, reg := onRegistry(t, NewProtocol)
	p.SessionOpened(wire.RoleKiosk)
	p.SessionOpened(wire.RoleKiosk)
	p.SessionOpened(wire.RoleKeypad)
	p.SessionClosed(wire.RoleKiosk, "eof")
	p.AuthFailed("bad mac")
	p.AuthFailed("bad mac")
	p.AuthFailed("unknown device")
	p.Request(wire.TypeTakeTicket, 0, 3*time.Millisecond)
	p.Request(wire.TypeTakeTicket, 0x21, 20*time.Millisecond)
	p.Request(wire.TypeCallNext, 0, 200*time.Millisecond)
	p.ConnRefused()
	p.ConnEvicted()
	p.ConnEvicted()
	compareGolden(t, reg, "protocol.golden")
	if _, err := NewProtocol(reg); err == nil {
		t.Error("registering the protocol metrics twice on one registry: no error")
	}
}

func TestDevices(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	err := RegisterDevices(reg, DeviceSources{
		Boards: func() []Board {
			return []Board{{Port: "/dev/ttyUSB0", Address: 1, Online: true}, {Port: "/dev/ttyUSB0", Address: 2}, {Port: "/dev/ttyUSB0", Address: 2}}
		},
		Printers: func() []Printer { return []Printer{{Name: "hall", Status: "paper_out"}, {Name: "desk", Status: "ok"}} },
		Zones:    func() []Zone { return []Zone{{Zone: "hall", Pending: 2, Queued: 40, Dropped: 3}} },
	})
	if err != nil {
		t.Fatal(err)
	}
	compareGolden(t, reg, "devices.golden")

	empty := prometheus.NewPedanticRegistry()
	if err := RegisterDevices(empty, DeviceSources{}); err != nil {
		t.Fatal(err)
	}
	if mfs, err := empty.Gather(); err != nil || len(mfs) != 0 {
		t.Errorf("no sources: gathered %d families, err %v; want none", len(mfs), err)
	}
}

func TestNewRegistry(t *testing.T) {
	reg := NewRegistry()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, mf := range mfs {
		found = found || mf.GetName() == "go_goroutines"
	}
	if !found {
		t.Error("no go_goroutines in the daemon registry")
	}
}
