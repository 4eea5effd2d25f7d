package metrics

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/nowserving/nowserving/internal/testkit/poll"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestFollow: two daemons share one database; B's metrics count the
// events A committed (found when B writes after them: B polls once, at
// start), their delay, and that B is not behind; not B's own event.
func TestFollow(t *testing.T) {
	now := time.Now().Truncate(time.Millisecond) // events keep milliseconds
	db := filepath.Join(t.TempDir(), "q.db")
	engine := func() *queue.Engine {
		st, err := sqlite.Open(t.Context(), db, sqlite.Opts{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		eng := storetest.StartEngine(t, queue.Opts{Store: st, Sites: []queue.Site{testSite()}, Clock: func() time.Time { return now },
			Follow: true, PollInterval: time.Minute, PollIdle: time.Minute})
		return eng
	}
	a, b := engine(), engine()
	reg := prometheus.NewRegistry()
	if err := RegisterFollow(reg, b, func() time.Time { return now.Add(30 * time.Millisecond) }); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "B's first poll", func() bool { return !b.FollowStats()["main"].Polled.IsZero() })
	for i := range 2 {
		r := queue.IssueRequest{Request: queue.Request{Site: "main", Device: "k", Key: fmt.Sprint(i)}, Service: "A"}
		if _, err := a.Issue(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	own := queue.IssueRequest{Request: queue.Request{Site: "main", Device: "k", Key: "b"}, Service: "A"}
	if _, err := b.Issue(t.Context(), own); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP nowserving_events_behind Versions this daemon's event feed was behind the store after its last poll.
# TYPE nowserving_events_behind gauge
nowserving_events_behind{site="main"} 0
# HELP nowserving_events_follow_delay_seconds Time from an event of another daemon (its request) to its arrival in this daemon.
# TYPE nowserving_events_follow_delay_seconds histogram
nowserving_events_follow_delay_seconds_bucket{site="main",le="0.005"} 0
nowserving_events_follow_delay_seconds_bucket{site="main",le="0.01"} 0
nowserving_events_follow_delay_seconds_bucket{site="main",le="0.02"} 0
nowserving_events_follow_delay_seconds_bucket{site="main",le="0.05"} 2
nowserving_events_follow_delay_seconds_bucket{site="main",le="0.1"} 2
nowserving_events_follow_delay_seconds_bucket{site="main",le="0.2"} 2
nowserving_events_follow_delay_seconds_bucket{site="main",le="0.5"} 2
nowserving_events_follow_delay_seconds_bucket{site="main",le="1"} 2
nowserving_events_follow_delay_seconds_bucket{site="main",le="2"} 2
nowserving_events_follow_delay_seconds_bucket{site="main",le="5"} 2
nowserving_events_follow_delay_seconds_bucket{site="main",le="+Inf"} 2
nowserving_events_follow_delay_seconds_sum{site="main"} 0.06
nowserving_events_follow_delay_seconds_count{site="main"} 2
# HELP nowserving_events_followed_total Events other daemons committed that reached this daemon.
# TYPE nowserving_events_followed_total counter
nowserving_events_followed_total{site="main"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "nowserving_events_behind",
		"nowserving_events_follow_delay_seconds", "nowserving_events_followed_total"); err != nil {
		t.Error(err)
	}
	// Polled, so the poll's age is there too (the README's metrics test
	// runs on SQLite, where no daemon polls).
	if n, err := testutil.GatherAndCount(reg, "nowserving_events_poll_age_seconds"); err != nil || n != 1 {
		t.Errorf("poll age series: %d (%v), want 1", n, err)
	}
}
