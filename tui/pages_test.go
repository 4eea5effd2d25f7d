package tui

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nowserving/nowserving/protocol"
	"github.com/nowserving/nowserving/protocol/protocoltest"
	"github.com/nowserving/nowserving/protocol/wire"
	"github.com/nowserving/nowserving/queue"
)

// TestWholeSnapshotWalksPages: a site of 3,000 resources is several
// SNAPSHOT pages; the console's first snapshot walks them and holds every
// resource once, in order.
func TestWholeSnapshotWalksPages(t *testing.T) {
	const n = 3000
	site := queue.Site{
		ID: "hq", Location: time.UTC,
		Services: []queue.Service{{Code: "A", Prefix: "A", Width: 3, AvgService: 5 * time.Minute}},
		Counters: []queue.Counter{{ID: "1", Services: []queue.CounterService{{Service: "A", Weight: 1}}}},
	}
	for i := range n {
		site.Resources = append(site.Resources, queue.Resource{ID: fmt.Sprintf("room-%04d", i), Names: map[string]string{"en": fmt.Sprintf("Room %04d", i)},
			Service: "A", Schedule: queue.Schedule{Open: 8 * time.Hour, Close: 9 * time.Hour, Slot: time.Hour, Capacity: 1, DaysAhead: 1}})
	}
	pd := protocoltest.New(t, site, []protocol.Device{{ID: "console-1", Role: wire.RoleConsole, Site: "hq", Secret: secret("console-1")}})
	pd.Start()
	t.Cleanup(pd.Stop)
	c := (&daemon{pd}).dial(t, "console-1", wire.RoleConsole)
	first, err := c.Do(t.Context(), &wire.Status{})
	if err != nil || first.(*wire.Snapshot).ResourceNext == "" {
		t.Fatalf("first page: %v; want more pages to follow", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	snap, err := wholeSnapshot(ctx, c, "hq")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Resources) != n || snap.ResourceNext != "" || snap.ResourceTotal != n {
		t.Fatalf("%d resources, total %d, next %q; want all %d", len(snap.Resources), snap.ResourceTotal, snap.ResourceNext, n)
	}
	for i, r := range snap.Resources {
		if want := fmt.Sprintf("room-%04d", i); r.ID != want || r.Name != fmt.Sprintf("Room %04d", i) {
			t.Fatalf("resource %d: %+v, want %s", i, r, want)
		}
	}
}
