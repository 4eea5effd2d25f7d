package protocol_test

import (
	"testing"

	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/wire"
)

// TestSnapshotDeviceHealth: a console's SNAPSHOT says which configured
// devices of the site are connected, and carries what the Health hook
// reports of the hardware.
func TestSnapshotDeviceHealth(t *testing.T) {
	en := newEnv(t, func(o *protocol.Opts) {
		o.Health = func(site string) []wire.DeviceInfo {
			return []wire.DeviceInfo{{ID: "/dev/ttyUSB0#2", Kind: "led", Counter: 2, Detail: "not answering"}}
		}
	})
	en.login("keypad-2", 1)
	console, _ := en.login("console-1", 1)
	snap, ok := console.do(&wire.Status{Site: "hq"}).(*wire.Snapshot)
	if !ok {
		t.Fatal("STATUS: no snapshot")
	}
	got := map[string]wire.DeviceInfo{}
	for _, d := range snap.Devices {
		got[d.ID] = d
	}
	if d := got["keypad-2"]; !d.Online || d.Counter != 2 || d.Kind != "device" {
		t.Errorf("keypad-2 = %+v, want connected on counter 2", d)
	}
	if d := got["keypad-3"]; d.Online || d.Detail != "not connected" || d.Counter != 3 {
		t.Errorf("keypad-3 = %+v, want not connected", d)
	}
	if _, ok := got["console-1"]; ok {
		t.Error("consoles are not site devices")
	}
	if d := got["/dev/ttyUSB0#2"]; d.Online || d.Kind != "led" {
		t.Errorf("hook device = %+v", d)
	}
}
