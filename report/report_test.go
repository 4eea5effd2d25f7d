package report

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"
	_ "time/tzdata" // Europe/Berlin on machines without zoneinfo

	"github.com/nowserving/nowserving/internal/testkit/golden"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

func berlin(t testing.TB) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func testSite(t testing.TB) queue.Site {
	return queue.Site{
		ID: "clinic", Location: berlin(t), Rollover: 4 * time.Hour,
		Services: []queue.Service{
			{Code: "A", Prefix: "A", Width: 3, AvgService: 5 * time.Minute},
			{Code: "B", Prefix: "B", Width: 3, AvgService: 5 * time.Minute},
			{Code: "C", Prefix: "C", Width: 3, AvgService: 5 * time.Minute},
		},
		Counters: []queue.Counter{
			{ID: "1", Services: []queue.CounterService{{Service: "A", Weight: 1}, {Service: "B", Weight: 1}}, Policy: queue.PolicyStrict},
			{ID: "2", Services: []queue.CounterService{{Service: "B", Weight: 1}}, Policy: queue.PolicyStrict},
			{ID: "3", Services: []queue.CounterService{{Service: "C", Weight: 1}}, Policy: queue.PolicyStrict},
		},
	}
}

// play runs two service days at the clinic on st and returns the engine.
func play(t testing.TB, st queue.Store) *queue.Engine {
	t.Helper()
	site := testSite(t)
	c := storetest.FixedClock(time.Time{})
	eng := storetest.StartEngine(t, queue.Opts{Store: st, Sites: []queue.Site{site}, Clock: c.Now})
	ctx := context.Background()
	set := func(day, hhmm string) {
		tm, err := time.ParseInLocation("2006-01-02 15:04", day+" "+hhmm, site.Location)
		if err != nil {
			t.Fatal(err)
		}
		c.Fix(tm)
	}
	req := queue.Request{Site: "clinic", Device: "test"}
	steps := []struct {
		day, at, op, arg string
	}{
		{"2026-03-02", "08:10", "issue", "A"}, // A001
		{"2026-03-02", "08:20", "issue", "A"}, // A002
		{"2026-03-02", "08:25", "issue", "B"}, // B001
		{"2026-03-02", "08:30", "next", "1"},  // A001 waited 20m
		{"2026-03-02", "08:31", "start", "1"},
		{"2026-03-02", "08:40", "issue", "A"}, // A003
		{"2026-03-02", "08:41", "done", "1"},  // served 10m
		{"2026-03-02", "08:41", "next", "1"},  // A002 waited 21m
		{"2026-03-02", "08:42", "recall", "1"},
		{"2026-03-02", "08:45", "noshow", "1"},
		{"2026-03-02", "08:50", "next", "2"}, // B001 waited 25m
		{"2026-03-02", "08:52", "start", "2"},
		{"2026-03-02", "09:00", "done", "2"},      // served 8m
		{"2026-03-02", "09:01", "cancel", "A003"}, // cancelled while waiting
		{"2026-03-02", "09:05", "issue", "B"},     // B002
		{"2026-03-02", "09:10", "next", "2"},      // B002 waited 5m
		{"2026-03-02", "09:11", "start", "2"},
		{"2026-03-02", "09:20", "done", "2"},  // served 9m
		{"2026-03-03", "03:30", "issue", "A"}, // before the 04:00 rollover: still 2026-03-02, A004
		{"2026-03-03", "03:40", "next", "1"},  // A004 waited 10m
		{"2026-03-03", "03:41", "start", "1"},
		{"2026-03-03", "03:50", "done", "1"},  // served 9m
		{"2026-03-03", "10:00", "issue", "A"}, // 2026-03-03 A001
		{"2026-03-03", "10:05", "next", "1"},  // waited 5m
		{"2026-03-03", "10:06", "start", "1"},
		{"2026-03-03", "10:16", "done", "1"}, // served 10m
	}
	for _, s := range steps {
		set(s.day, s.at)
		if _, err := storetest.Do(ctx, eng, req, s.op, s.arg); err != nil {
			t.Fatalf("%s %s: %s %s: %v", s.day, s.at, s.op, s.arg, err)
		}
	}
	return eng
}

func TestBuildFormats(t *testing.T) {
	eng := play(t, storetest.SQLite(t))
	ctx := context.Background()
	for _, tc := range []struct {
		name, from, to string
		formats        []string
	}{
		{"day1", "2026-03-02", "", Formats},
		{"day2", "2026-03-03", "2026-03-03", []string{"table"}},
		{"range", "2026-03-02", "2026-03-03", []string{"table", "json"}},
		{"empty", "2026-03-10", "", []string{"table", "csv", "json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Build(ctx, eng, "clinic", tc.from, tc.to)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.formats {
				var b bytes.Buffer
				if err := Write(&b, r, f); err != nil {
					t.Fatal(err)
				}
				golden.Assert(t, filepath.Join("testdata", tc.name+"."+f), b.Bytes())
			}
		})
	}
}

// TestBuildFigures checks the first day's figures by hand, independent of
// the golden files.
func TestBuildFigures(t *testing.T) {
	eng := play(t, storetest.SQLite(t))
	r, err := Build(context.Background(), eng, "clinic", "2026-03-02", "")
	if err != nil {
		t.Fatal(err)
	}
	a := r.Services[0]
	want := Stats{Issued: 4, Called: 3, Served: 2, NoShows: 1, Cancelled: 1,
		AvgWait: 17 * time.Minute, P50Wait: 20 * time.Minute, P90Wait: 21 * time.Minute, AvgService: 9*time.Minute + 30*time.Second,
		ServiceTime: 19 * time.Minute, BusiestHour: 8, BusiestCount: 3}
	want.ByHour[3], want.ByHour[8] = 1, 3
	if a.ID != "A" || a.Stats != want {
		t.Errorf("service A:\n got %+v\nwant %+v", a.Stats, want)
	}
	if c := r.Counters[1]; c.ID != "2" || c.Called != 2 || c.Served != 2 || c.AvgService != 8*time.Minute+30*time.Second || c.BusiestHour != 8 {
		t.Errorf("counter 2: %+v", c)
	}
	if c := r.Counters[2]; c.ID != "3" || c.Called != 0 || c.BusiestHour != -1 {
		t.Errorf("idle counter 3: %+v", c)
	}
	if r.Total.Issued != 6 || r.Total.Served != 4 {
		t.Errorf("total: %+v", r.Total)
	}
}

func TestBuildErrors(t *testing.T) {
	eng := play(t, storetest.SQLite(t))
	ctx := context.Background()
	for _, tc := range []struct {
		site, from, to string
		want           error
	}{
		{"nowhere", "2026-03-02", "", queue.ErrUnknownSite},
		{"clinic", "2026-3-2", "", queue.ErrBadRequest},
		{"clinic", "2026-03-02", "tomorrow", queue.ErrBadRequest},
		{"clinic", "2026-03-03", "2026-03-02", queue.ErrBadRequest},
	} {
		if _, err := Build(ctx, eng, tc.site, tc.from, tc.to); !errors.Is(err, tc.want) {
			t.Errorf("Build(%q, %q, %q) = %v, want %v", tc.site, tc.from, tc.to, err, tc.want)
		}
	}
	if err := Write(&bytes.Buffer{}, Report{}, "xml"); !errors.Is(err, ErrFormat) {
		t.Errorf("Write xml: %v, want ErrFormat", err)
	}
}

func TestPercentile(t *testing.T) {
	ds := func(n ...int) *Figures {
		f := &Figures{}
		for _, x := range n {
			f.addWait(time.Duration(x)*time.Second, 0)
		}
		return f
	}
	for _, tc := range []struct {
		in       *Figures
		p50, p90 time.Duration
	}{
		{ds(), 0, 0},
		{ds(30), 30 * time.Second, 30 * time.Second},
		{ds(5), 30 * time.Second, 30 * time.Second},                                                 // to its bucket's bound
		{ds(600, 60, 540, 120, 480, 180, 420, 240, 360, 300), 300 * time.Second, 540 * time.Second}, // whole minutes: exact
		{ds(7200, 7201, 50000), 7500 * time.Second, 50000 * time.Second},                            // 5 min steps past 2 h; past 12 h: the longest
	} {
		if got := tc.in.Percentile(0.5); got != tc.p50 {
			t.Errorf("p50 of %v = %v, want %v", tc.in.Waits, got, tc.p50)
		}
		if got := tc.in.Percentile(0.9); got != tc.p90 {
			t.Errorf("p90 of %v = %v, want %v", tc.in.Waits, got, tc.p90)
		}
	}
	if b := bucketOf(2*time.Hour + time.Second); WaitBuckets[b] != 2*time.Hour+5*time.Minute {
		t.Errorf("2h1s falls in the bucket of %v", WaitBuckets[b])
	}
}

// TestSameOnEveryStore plays the same days on PostgreSQL and MariaDB/MySQL
// and expects the report built on SQLite: it is computed from events only.
func TestSameOnEveryStore(t *testing.T) {
	lite := play(t, storetest.SQLite(t))
	for _, e := range storetest.Engines[1:] {
		t.Run(e.Name, func(t *testing.T) {
			qs, _ := e.Open(t)
			other := play(t, qs)
			for _, days := range [][2]string{{"2026-03-02", ""}, {"2026-03-02", "2026-03-03"}} {
				a, err := Build(context.Background(), lite, "clinic", days[0], days[1])
				if err != nil {
					t.Fatal(err)
				}
				b, err := Build(context.Background(), other, "clinic", days[0], days[1])
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(a, b) {
					t.Errorf("%v: SQLite and %s reports differ:\nsqlite %+v\n%s %+v", days, e.Name, a, e.Name, b)
				}
			}
		})
	}
}

// BenchmarkBuild reads a day of 26 events; the cost is the event paging.
func BenchmarkBuild(b *testing.B) {
	eng := play(b, storetest.SQLite(b))
	ctx := context.Background()
	for b.Loop() {
		if _, err := Build(ctx, eng, "clinic", "2026-03-02", "2026-03-03"); err != nil {
			b.Fatal(err)
		}
	}
}
