package storetest

import (
	"fmt"
	"net"
	"testing"
)

// TestFreePorts: the ports are distinct, below the ephemeral range (which
// outgoing connections take from), and free once returned.
func TestFreePorts(t *testing.T) {
	ports := FreePorts(t, 12)
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] || p < 10000 || p >= ephemeralLow() {
			t.Fatalf("ports %v: %d repeated or outside 10000-%d", ports, p, ephemeralLow()-1)
		}
		seen[p] = true
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Fatalf("port %d not free once returned: %v", p, err)
		}
		l.Close()
	}
}
