package client

import (
	"context"
	"testing"
	"time"

	"github.com/nowserving/nowserving/protocol/wire"
)

// BenchmarkTakeTicket measures the client's round trip over loopback
// against the fake daemon (no database): framing, matching, the reader
// goroutine. The daemon's own cost is measured in package protocol.
func BenchmarkTakeTicket(b *testing.B) {
	d := newFakeDaemon(b)
	c, err := Dial(context.Background(), d.Addr(), Opts{
		DeviceID: "kiosk-1", Secret: []byte("kiosk-1-secret-xx"), Role: wire.RoleKiosk, Timeout: 5 * time.Second,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.TakeTicket(ctx, "A", wire.ClassNormal, TicketOpts{}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
