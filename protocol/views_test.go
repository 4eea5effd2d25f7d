package protocol

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/storetest"
	"github.com/nowserving/nowserving/view"
)

// TestSiteViews follows a site through the cases where the picture cannot
// just take the next events: too far behind the feed (a fresh snapshot) and
// a new service day before any event of it.
func TestSiteViews(t *testing.T) {
	t.Parallel() // its own store; its time is spent waiting on synced commits
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "q.db"), sqlite.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var mu sync.Mutex
	now := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC) // 10:00 in Shanghai
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	site := queue.Site{ID: "hq", Location: time.FixedZone("CST", 8*3600), Rollover: 4 * time.Hour,
		Services: []queue.Service{{Code: "A", Prefix: "A", Width: 3}}}
	eng := storetest.StartEngine(t, queue.Opts{Store: st, Sites: []queue.Site{site}, Clock: clock, FeedSize: 2, MaxReplay: 3})
	def, _ := eng.Site("hq")
	var vs siteViews
	waiting := func() int {
		t.Helper()
		n := -1
		if err := vs.read(ctx, eng, def, func(v *view.Site) { n = v.Service("A").Waiting }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	issue := func(k int) {
		t.Helper()
		for i := 0; i < k; i++ {
			if _, err := eng.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: "hq", Device: "test"}, Service: "A"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := waiting(); got != 0 {
		t.Errorf("empty site: %d waiting", got)
	}
	issue(2)
	if got := waiting(); got != 2 {
		t.Errorf("after 2 issued: %d waiting, want 2", got)
	}
	issue(5) // more than MaxReplay behind
	if got := waiting(); got != 7 {
		t.Errorf("after a gap: %d waiting, want 7", got)
	}
	mu.Lock()
	now = now.Add(24 * time.Hour)
	mu.Unlock()
	if got := waiting(); got != 0 {
		t.Errorf("next day, before any event: %d waiting, want 0", got)
	}
	issue(1)
	if got := waiting(); got != 1 {
		t.Errorf("next day: %d waiting, want 1", got)
	}
}
