package metrics

import (
	"bytes"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/nowserving/nowserving/internal/testkit/golden"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

func at(hhmm string) time.Time {
	t, err := time.Parse("2006-01-02 15:04", "2026-03-02 "+hhmm)
	if err != nil {
		panic(err)
	}
	return t
}

func testSite() queue.Site {
	return queue.Site{
		ID: "main", Location: time.UTC,
		Services: []queue.Service{
			{Code: "A", Prefix: "A", Width: 3, AvgService: 5 * time.Minute, WaitTarget: 20 * time.Minute},
			{Code: "B", Prefix: "B", Width: 3, AvgService: 5 * time.Minute},
		},
		Counters: []queue.Counter{
			{ID: "1", Services: []queue.CounterService{{Service: "A", Weight: 1}, {Service: "B", Weight: 1}}, Policy: queue.PolicyStrict},
			{ID: "2", Services: []queue.CounterService{{Service: "B", Weight: 1}}, Policy: queue.PolicyStrict},
		},
	}
}

func newEngine(t *testing.T, st queue.Store, c *storetest.Clock) *queue.Engine {
	t.Helper()
	eng := storetest.StartEngine(t, queue.Opts{Store: st, Sites: []queue.Site{testSite()}, Clock: c.Now})
	return eng
}

// onRegistry builds a part with build on a fresh pedantic registry and
// returns both, failing t when the part cannot register.
func onRegistry[T any](t *testing.T, build func(prometheus.Registerer) (T, error)) (T, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	p, err := build(reg)
	if err != nil {
		t.Fatal(err)
	}
	return p, reg
}

// compareGolden compares the named metrics gathered from g with
// testdata/name, rewriting it with -update.
func compareGolden(t *testing.T, g prometheus.Gatherer, name string, metricNames ...string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if golden.Update() {
		mfs, err := g.Gather()
		if err != nil {
			t.Fatalf("gather: %v", err)
		}
		var b bytes.Buffer
		for _, mf := range mfs {
			if len(metricNames) > 0 && !slices.Contains(metricNames, mf.GetName()) {
				continue
			}
			if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
				t.Fatalf("format: %v", err)
			}
		}
		golden.Write(t, path, b.Bytes())
	}
	want := golden.Read(t, path)
	if err := testutil.GatherAndCompare(g, bytes.NewReader(want), metricNames...); err != nil {
		t.Errorf("metrics differ from %s (run with -update to accept):\n%v", path, err)
	}
}

func testutilToFloat(c prometheus.Collector) float64 { return testutil.ToFloat64(c) }

func histCount(t *testing.T, h prometheus.Histogram) uint64 {
	t.Helper()
	var m dto.Metric
	if err := h.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}
