package daemon

import (
	"reflect"
	"testing"

	"github.com/nowserving/nowserving/devices"
	"github.com/nowserving/nowserving/devices/voice"
	"github.com/nowserving/nowserving/metrics"
	"github.com/nowserving/nowserving/protocol/wire"
)

// status is a dispatcher's status with a site of two boards, a keypad, two
// printers and voice zones on two sites.
func status() devices.Status {
	return devices.Status{
		Boards: []devices.BoardStatus{
			{Port: "/dev/ttyUSB0", Addr: 1, Site: "s", Counter: "3", Online: true},
			{Port: "/dev/ttyUSB0", Addr: 9, Site: "s", Online: false},
			{Port: "/dev/ttyUSB1", Addr: 1, Site: "other", Counter: "1", Online: true},
		},
		Keypads:  []devices.KeypadStatus{{Bus: "/dev/ttyUSB2", Addr: 4, Site: "s", Counter: "12", Online: false}},
		Printers: []devices.PrinterStatus{{ID: "p1", Status: "unknown"}, {ID: "p2", Status: "offline"}, {ID: "p3", Status: "paper_out"}},
		Zones: []devices.ZoneStatus{
			{Name: "hall", Site: "s", Stats: voice.Stats{Queued: 5, Dropped: 1, Failed: 2, Pending: 1}},
			{Name: "hall", Site: "other", Stats: voice.Stats{Queued: 2}},
		},
	}
}

func TestDeviceSources(t *testing.T) {
	src := DeviceSources(status)
	if got, want := src.Boards(), []metrics.Board{
		{Port: "/dev/ttyUSB0", Address: 1, Online: true}, {Port: "/dev/ttyUSB0", Address: 9}, {Port: "/dev/ttyUSB1", Address: 1, Online: true},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("boards %+v, want %+v", got, want)
	}
	// Nothing printed yet is no known failure; no answer and an error
	// are the metric's no_answer.
	if got, want := src.Printers(), []metrics.Printer{
		{Name: "p1", Status: "ok"}, {Name: "p2", Status: "no_answer"}, {Name: "p3", Status: "paper_out"},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("printers %+v, want %+v", got, want)
	}
	// Zones of several sites are named by site.
	if got, want := src.Zones(), []metrics.Zone{
		{Zone: "s/hall", Pending: 1, Queued: 5, Dropped: 1}, {Zone: "other/hall", Queued: 2},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("zones %+v, want %+v", got, want)
	}
	one := DeviceSources(func() devices.Status { return devices.Status{Zones: status().Zones[:1]} })
	if got := one.Zones(); len(got) != 1 || got[0].Zone != "hall" {
		t.Errorf("one site's zones %+v, want named hall", got)
	}
}

func TestDeviceHealth(t *testing.T) {
	got := DeviceHealth(status)("s")
	want := []wire.DeviceInfo{
		{ID: "/dev/ttyUSB0#1", Kind: "led", Counter: 3, Online: true},
		{ID: "/dev/ttyUSB0#9", Kind: "led", Online: false, Detail: "not answering"},
		{ID: "/dev/ttyUSB2#4", Kind: "keypad", Counter: 12, Online: false, Detail: "not answering"},
		{ID: "p1", Kind: "printer", Online: true},
		{ID: "p2", Kind: "printer", Online: false, Detail: "offline"},
		{ID: "p3", Kind: "printer", Online: false, Detail: "paper_out"},
		{ID: "hall", Kind: "voice", Online: true, Detail: "1 dropped, 2 failed"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("health of s:\n got %+v\nwant %+v", got, want)
	}
}
