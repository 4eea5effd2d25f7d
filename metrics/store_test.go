package metrics

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

func TestErrorKind(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{fmt.Errorf("x: %w", queue.ErrConflict), "conflict"},
		{fmt.Errorf("x: %w", queue.ErrAborted), "aborted"},
		{fmt.Errorf("x: %w", queue.ErrDuplicate), "duplicate"},
		{fmt.Errorf("x: %w", queue.ErrUnavailable), "unavailable"},
		{fmt.Errorf("x: %w", queue.ErrServiceFull), ""},
		{&queue.TransitionError{Number: "A001", Status: queue.StatusDone, Action: queue.ActCall}, ""},
		{context.Canceled, ""},
		{context.DeadlineExceeded, "other"},
		{errors.New("disk on fire"), "other"},
	} {
		if got := ErrorKind(tc.err); got != tc.want {
			t.Errorf("ErrorKind(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestStore runs transactions through the decorator on a real SQLite store
// and an engine, and compares the error counts with testdata/store.golden.
func TestStore(t *testing.T) {
	st, reg := onRegistry(t, func(reg prometheus.Registerer) (*Store, error) {
		return NewStore(storetest.SQLite(t), reg)
	})
	if _, err := NewStore(st, reg); err != nil {
		t.Fatalf("second NewStore on one registry: %v", err)
	}
	ctx := context.Background()
	c := storetest.FixedClock(at("09:00"))
	eng := newEngine(t, st, c)
	if _, err := eng.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: "main", Device: "k"}, Service: "A"}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Snapshot(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	// A refusal is not a store error.
	if _, err := eng.Issue(ctx, queue.IssueRequest{Request: queue.Request{Site: "main", Device: "k"}, Service: "nope"}); !errors.Is(err, queue.ErrUnknownService) {
		t.Fatalf("issue for unknown service: %v", err)
	}
	for _, e := range []error{queue.ErrDuplicate, queue.ErrUnavailable, errors.New("boom")} {
		if err := st.Update(ctx, func(context.Context, queue.Tx) error { return e }); !errors.Is(err, e) {
			t.Fatalf("Update returned %v, want %v", err, e)
		}
	}
	if err := st.View(ctx, func(context.Context, queue.Tx) error { return queue.ErrUnavailable }); !errors.Is(err, queue.ErrUnavailable) {
		t.Fatalf("View: %v", err)
	}
	compareGolden(t, reg, "store.golden", "nowserving_store_errors_total")
	if n := testutil.CollectAndCount(st.latency); n != 2 {
		t.Errorf("latency series = %d, want 2 (update, view)", n)
	}
	for _, op := range []string{"update", "view"} {
		h, _ := st.latency.GetMetricWithLabelValues(op)
		if cnt := histCount(t, h.(prometheus.Histogram)); cnt == 0 {
			t.Errorf("no %s transaction observed", op)
		}
	}
}

// TestFailovers: the store's failover counts, by reason, at scrape time.
func TestFailovers(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	ro, na := uint64(0), uint64(0)
	if err := RegisterFailovers(reg, func() (uint64, uint64) { return ro, na }); err != nil {
		t.Fatal(err)
	}
	ro, na = 2, 1
	want := `# HELP nowserving_store_failovers_total Times the store dropped its connections because the database refused writes (reason read_only) or was gone or did not answer in time (reason not_answering), and a transaction then succeeded on a new connection.
# TYPE nowserving_store_failovers_total counter
nowserving_store_failovers_total{reason="not_answering"} 1
nowserving_store_failovers_total{reason="read_only"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "nowserving_store_failovers_total"); err != nil {
		t.Error(err)
	}
}
