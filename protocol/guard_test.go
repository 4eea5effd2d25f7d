package protocol

import (
	"fmt"
	"testing"
	"time"
)

// TestAuthGuardBounded drives the handshake back-off past guardMaxKeys
// source addresses and device ids, each failing once (a scan, or a year of
// misconfigured devices): the per-address and per-id maps stay within the
// bound, the failures of long ago are forgotten first, and an address
// failing now is still backed off.
func TestAuthGuardBounded(t *testing.T) {
	var g authGuard
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for i := range guardMaxKeys + guardMaxKeys/2 {
		if i == guardMaxKeys/2 {
			now = now.Add(guardForget + time.Second) // the first half is old now
		}
		g.failed(fmt.Sprintf("h%d", i), fmt.Sprintf("id%d", i), now)
		if len(g.hosts) > guardMaxKeys || len(g.ids) > guardMaxKeys {
			t.Fatalf("after %d failures: %d addresses, %d ids kept, want at most %d each", i+1, len(g.hosts), len(g.ids), guardMaxKeys)
		}
	}
	if _, ok := g.hosts["h0"]; ok {
		t.Error("an address that failed once, long ago, is still kept")
	}
	if _, ok := g.hosts[fmt.Sprintf("h%d", guardMaxKeys/2)]; !ok {
		t.Error("an address that failed within guardForget was forgotten before the old ones")
	}
	for range guardFree {
		g.failed("10.0.0.9", "kiosk-9", now)
	}
	if g.hostWait("10.0.0.9", now) <= 0 {
		t.Errorf("10.0.0.9 failed %d times in a row and is not backed off", guardFree)
	}
}
