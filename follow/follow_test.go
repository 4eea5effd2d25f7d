package follow_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/nowserving/nowserving/follow"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlite"
)

var site = queue.Site{ID: "hq", Location: time.UTC, Rollover: 4 * time.Hour,
	Services: []queue.Service{{Code: "A", Prefix: "A", Width: 3}}}

// daemon opens an engine on the store at path: a small feed and replay, so
// that a handful of events makes a gap.
func daemon(t *testing.T, path string) (*queue.Engine, func()) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, path, sqlite.Opts{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	eng, err := queue.New(queue.Opts{Store: st, Sites: []queue.Site{site}, Clock: func() time.Time { return now },
		FeedSize: 2, MaxReplay: 4})
	if err != nil {
		t.Fatal(err)
	}
	stop := func() { _ = eng.Close(ctx); st.Close() }
	t.Cleanup(stop)
	return eng, stop
}

func issue(t *testing.T, eng *queue.Engine, n int) {
	t.Helper()
	for range n {
		if _, err := eng.Issue(context.Background(), queue.IssueRequest{Request: queue.Request{Site: "hq", Device: "test"}, Service: "A"}); err != nil {
			t.Fatal(err)
		}
	}
}

// next is one Next, failing the test on an error.
func next(t *testing.T, f *follow.Site) follow.Update {
	t.Helper()
	u, err := f.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func waiting(snap *queue.Snapshot) int {
	for _, s := range snap.Services {
		if s.Code == "A" {
			return s.Waiting
		}
	}
	return -1
}

// versions are the versions of evs.
func versions(evs []queue.Event) []int64 {
	var out []int64
	for _, e := range evs {
		out = append(out, e.Version)
	}
	return out
}

// wantSnapshot fails t unless u is a snapshot at version v with n waiting
// and the events recent with it.
func wantSnapshot(t *testing.T, what string, u follow.Update, v int64, n int, recent ...int64) {
	t.Helper()
	if u.Snapshot == nil || u.Snapshot.Version != v || waiting(u.Snapshot) != n {
		t.Fatalf("%s: %+v, want a snapshot at %d with %d waiting", what, u, v, n)
	}
	if got := versions(u.Recent); !slices.Equal(got, recent) {
		t.Errorf("%s: recent events %v, want %v", what, got, recent)
	}
}

// wantEvents fails t unless u is the events at versions vs, no snapshot.
func wantEvents(t *testing.T, what string, u follow.Update, vs ...int64) {
	t.Helper()
	if u.Snapshot != nil || !slices.Equal(versions(u.Events), vs) {
		t.Errorf("%s: %+v, want events %v", what, u, vs)
	}
}

// TestFollow drives one reader through a whole day of trouble: its first
// snapshot with the last events, live events, a slow reader that falls
// past the feed (a gap: a snapshot, then the tail), a reader joining far
// behind, a daemon restart it resumes across, and the close.
func TestFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	eng, stop := daemon(t, path)
	issue(t, eng, 3)

	f := follow.New(eng, "hq", follow.Opts{Recent: 2})
	wantSnapshot(t, "first update", next(t, f), 3, 3, 2, 3)

	// Live: the events, not a snapshot.
	issue(t, eng, 1)
	wantEvents(t, "live", next(t, f), 4)

	// A slow reader: 6 events while it does not read, more than the
	// engine replays. It gets the state, then the tail.
	issue(t, eng, 6)
	wantSnapshot(t, "after a gap", next(t, f), 10, 10, 9, 10)
	issue(t, eng, 1)
	wantEvents(t, "tail after the gap", next(t, f), 11)

	// A reader resuming within the engine's replay but past its own
	// bound gets a snapshot; one within both gets the events.
	far := follow.New(eng, "hq", follow.Opts{Resume: true, After: 8, MaxBehind: 2})
	if u := next(t, far); u.Snapshot == nil || u.Snapshot.Version != 11 {
		t.Errorf("3 behind with MaxBehind 2: %+v, want a snapshot at 11", u)
	}
	near := follow.New(eng, "hq", follow.Opts{Resume: true, After: 9, MaxBehind: 2})
	wantEvents(t, "2 behind with MaxBehind 2", next(t, near), 10, 11)

	// Level: Poll returns nothing and does not wait.
	if u, err := f.Poll(context.Background()); err != nil || u.Snapshot != nil || len(u.Events) != 0 {
		t.Errorf("level Poll: %+v, %v; want nothing", u, err)
	}
	// Refresh: the next update is a snapshot though there is no gap.
	f.Refresh()
	if u, err := f.Poll(context.Background()); err != nil || u.Snapshot == nil || u.Snapshot.Version != 11 {
		t.Errorf("after Refresh: %+v, %v; want a snapshot at 11", u, err)
	}

	// The daemon stops: a reader waiting in Next is done.
	got := make(chan error, 1)
	go func() {
		_, err := f.Next(context.Background())
		got <- err
	}()
	stop()
	if err := <-got; !errors.Is(err, queue.ErrClosed) || !follow.Done(context.Background(), err) {
		t.Errorf("Next across the close: %v, want queue.ErrClosed", err)
	}

	// It starts again on the same database; the reader resumes from
	// the version it had (the LED dispatcher after a restart): the
	// events after it come from the store, in order.
	eng2, _ := daemon(t, path)
	issue(t, eng2, 2)
	again := follow.New(eng2, "hq", follow.Opts{Resume: true, After: 11})
	wantEvents(t, "resumed after a restart", next(t, again), 12, 13)
	// Further behind than the new engine replays: a snapshot.
	behind := follow.New(eng2, "hq", follow.Opts{Resume: true, After: 3})
	if u := next(t, behind); u.Snapshot == nil || u.Snapshot.Version != 13 || waiting(u.Snapshot) != 13 {
		t.Errorf("10 behind after a restart: %+v, want a snapshot at 13", u)
	}

	// A reader's context ends: Next returns its error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := again.Next(ctx); !errors.Is(err, context.Canceled) || !follow.Done(ctx, err) {
		t.Errorf("Next with a cancelled context: %v, want context.Canceled", err)
	}
	// A site that is not configured: done, not retried for ever.
	if _, err := follow.New(eng2, "nowhere", follow.Opts{}).Next(context.Background()); !errors.Is(err, queue.ErrUnknownSite) {
		t.Errorf("unknown site: %v, want queue.ErrUnknownSite", err)
	}
}

// flaky is an engine whose first snapshots fail, as a store that is
// briefly away.
type flaky struct {
	*queue.Engine
	fail int
}

func (e *flaky) Snapshot(ctx context.Context, site string) (queue.Snapshot, error) {
	if e.fail > 0 {
		e.fail--
		return queue.Snapshot{}, errors.New("store away")
	}
	return e.Engine.Snapshot(ctx, site)
}

// TestFollowRetries: Next rides over failed reads with a back-off, and
// Poll hands the failure to its caller.
func TestFollowRetries(t *testing.T) {
	eng, _ := daemon(t, filepath.Join(t.TempDir(), "q.db"))
	issue(t, eng, 2)
	fe := &flaky{Engine: eng, fail: 3}
	f := follow.New(fe, "hq", follow.Opts{MinRetry: time.Millisecond, MaxRetry: 2 * time.Millisecond})
	if _, err := f.Poll(context.Background()); err == nil {
		t.Error("Poll with the store away: no error")
	}
	if u := next(t, f); u.Snapshot == nil || u.Snapshot.Version != 2 || fe.fail != 0 {
		t.Errorf("Next after failed snapshots: %+v (fails left %d), want a snapshot at 2", u, fe.fail)
	}
}
