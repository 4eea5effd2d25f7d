package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestDurationsToTheMillisecond: JSON and CSV write durations in seconds
// to the millisecond, the store's precision; they wrote float noise
// (1.1179999999999999 for 1,118 ms) and an average's nanoseconds
// (0.536666666).
func TestDurationsToTheMillisecond(t *testing.T) {
	t.Parallel()
	st := Stats{Called: 3, Served: 3, AvgWait: 1118 * time.Millisecond, P90Wait: 1610 * time.Millisecond,
		AvgService: 1610 * time.Millisecond / 3, BusiestHour: -1}
	r := Report{Site: "clinic", From: "2026-03-02", To: "2026-03-02", Services: []Row{{ID: "A", Stats: st}}, Total: st}
	people := []Person{{Name: "li.na", Counters: []string{"1"}, Served: 3, AvgService: 1610 * time.Millisecond / 3}}
	for _, c := range []struct {
		format string
		write  func(*bytes.Buffer) error
		want   []string
	}{
		{"json", func(b *bytes.Buffer) error { return Write(b, r, "json") },
			[]string{`"avg_wait_s": 1.118,`, `"p90_wait_s": 1.61,`, `"avg_service_s": 0.537,`}},
		{"csv", func(b *bytes.Buffer) error { return Write(b, r, "csv") },
			[]string{",1.118,1.61,0.537,"}},
		{"people json", func(b *bytes.Buffer) error { return WritePeople(b, "clinic", "2026-03-02", "", people, "json") },
			[]string{`"avg_service_s": 0.537`}},
		{"people csv", func(b *bytes.Buffer) error { return WritePeople(b, "clinic", "2026-03-02", "", people, "csv") },
			[]string{",0.537\n"}},
	} {
		var b bytes.Buffer
		if err := c.write(&b); err != nil {
			t.Fatalf("%s: %v", c.format, err)
		}
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: want %s in\n%s", c.format, w, b.String())
			}
		}
	}
}

// TestSeconds: every millisecond count up to 100 s is written as its
// decimal, and a duration between two is rounded to the nearer.
func TestSeconds(t *testing.T) {
	t.Parallel()
	for ms := range 100_000 {
		want := strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%d.%03d", ms/1000, ms%1000), "0"), ".")
		d := time.Duration(ms) * time.Millisecond
		if got := secs(d + 400*time.Microsecond); got != want {
			t.Fatalf("secs(%v): got %s, want %s", d+400*time.Microsecond, got, want)
		}
		if got := secs(d - 400*time.Microsecond); ms > 0 && got != want {
			t.Fatalf("secs(%v): got %s, want %s", d-400*time.Microsecond, got, want)
		}
	}
}
