package protocol

import (
	"sync"

	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// frameCacheSize is how many recent EVENT frames per site are kept encoded.
const frameCacheSize = 1024

// frameCache keeps the EVENT frames of recent versions encoded once for
// every subscriber: the frame of an event is the same for all of them
// (request id 0, no flags). Frames are shared read-only.
type frameCache struct {
	mu    sync.Mutex
	sites map[string]*[frameCacheSize]cachedFrame
}

type cachedFrame struct {
	version int64
	b       []byte // nil: the event type is not sent to devices
	ok      bool
}

// eventFrame returns the encoded EVENT frame for ev, or nil when devices
// are not told about this event type.
func (c *frameCache) eventFrame(site *queue.Site, ev *queue.Event) []byte {
	c.mu.Lock()
	if c.sites == nil {
		c.sites = map[string]*[frameCacheSize]cachedFrame{}
	}
	ring := c.sites[ev.Site]
	if ring == nil {
		ring = new([frameCacheSize]cachedFrame)
		c.sites[ev.Site] = ring
	}
	slot := &ring[ev.Version%frameCacheSize]
	if slot.ok && slot.version == ev.Version {
		b := slot.b
		c.mu.Unlock()
		return b
	}
	c.mu.Unlock()
	var b []byte
	if m, ok := eventMsg(site, ev); ok {
		var err error
		if b, err = wire.EncodeMessage(nil, 0, 0, m); err != nil {
			b = nil
		}
	}
	c.mu.Lock()
	*slot = cachedFrame{version: ev.Version, b: b, ok: true}
	c.mu.Unlock()
	return b
}
