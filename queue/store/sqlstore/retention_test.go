package sqlstore

import (
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// TestDayPurgeOf: around the rollover and the end of the grace of held
// tickets, the purge never reaches the current service day nor a day
// whose tickets a counter may still hold, whatever the window.
func TestDayPurgeOf(t *testing.T) {
	shanghai := time.FixedZone("CST", 8*3600)
	site := &queue.Site{ID: "hq", Location: shanghai, Rollover: 4 * time.Hour, HeldGrace: 4 * time.Hour}
	for _, tc := range []struct {
		now    time.Time
		window time.Duration
		want   string
	}{
		{time.Date(2026, 12, 3, 3, 59, 59, 0, shanghai), 48 * time.Hour, "2026-11-30"}, // still 12-02
		{time.Date(2026, 12, 3, 4, 0, 0, 0, shanghai), 48 * time.Hour, "2026-12-01"},
		{time.Date(2026, 12, 3, 7, 59, 59, 0, shanghai), 48 * time.Hour, "2026-12-01"},
		{time.Date(2026, 12, 3, 8, 0, 0, 0, shanghai), 48 * time.Hour, "2026-12-01"},
		{time.Date(2026, 12, 3, 7, 59, 59, 0, shanghai), time.Hour, "2026-12-02"}, // held since 12-02
		{time.Date(2026, 12, 3, 8, 0, 0, 0, shanghai), 0, "2026-12-03"},           // today: days before it
	} {
		p := DayPurgeOf(site, tc.now, tc.window, 10)
		if p.Day != tc.want || p.Day > site.Day(tc.now) || p.Day > site.HeldSinceDay(tc.now) || p.Site != "hq" || p.N != 10 {
			t.Errorf("DayPurgeOf(%s, %s) = %+v, want days before %s", tc.now, tc.window, p, tc.want)
		}
	}
}

// TestFloored: every floor edit finds its text in its check's query.
func TestFloored(t *testing.T) {
	all := append(append(append([]check{}, checks...), eventChecks...), bookingChecks...)
	edited := floored(all)
	found := 0
	for i, c := range all {
		e, ok := floorEdits[c.name]
		if !ok {
			continue
		}
		found++
		if !strings.Contains(c.query, e[0]) || !strings.Contains(edited[i].query, e[1]) {
			t.Errorf("check %q: the floor edit of %q finds nothing to replace in\n%s", c.name, e[0], c.query)
		}
		if c.name == calledWhileWaiting && !strings.Contains(edited[i].query, calledDay[1]) {
			t.Errorf("check %q: the event's day is not read", c.name)
		}
	}
	if found != len(floorEdits) {
		t.Errorf("%d of the %d floor edits name a check", found, len(floorEdits))
	}
}
