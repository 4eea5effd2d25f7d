package queue

import (
	"errors"
	"testing"
	"time"
)

// TestHighForgetsOldDays drives a site's highest numbers (siteFeed.high,
// keyed by service day) across two months of days: the map keeps the last
// three days only, so a daemon that runs for years does not keep every
// day's numbers, and a number given today is still known (checkNumber).
func TestHighForgetsOldDays(t *testing.T) {
	sf := &siteFeed{}
	f := &feed{sites: map[string]*siteFeed{"s": sf}}
	services := []string{"A", "B", "C", "D"}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for d := range 60 {
		day := start.AddDate(0, 0, d).Format(time.DateOnly)
		for _, sv := range services {
			for seq := 1; seq <= 5; seq++ {
				sf.raise(DayKey{Site: "s", Service: sv, Day: day}, seq)
			}
		}
		if got, most := len(sf.high), 3*len(services); got > most {
			t.Fatalf("day %s: high holds %d service days, want at most %d (three days)", day, got, most)
		}
		k := DayKey{Site: "s", Service: "B", Day: day}
		var le *lostError
		if err := f.checkNumber(k, 5); !errors.As(err, &le) {
			t.Fatalf("day %s: checkNumber(%v, 5) = %v, want the store found behind", day, k, err)
		}
		if err := f.checkNumber(k, 6); err != nil {
			t.Fatalf("day %s: checkNumber(%v, 6) = %v, want nil", day, k, err)
		}
	}
	yesterday := DayKey{Site: "s", Service: "A", Day: start.AddDate(0, 0, 58).Format(time.DateOnly)}
	if got := sf.high[yesterday]; got != 5 {
		t.Errorf("high[%v] = %d, want 5: the day before is kept", yesterday, got)
	}
	old := DayKey{Site: "s", Service: "A", Day: start.Format(time.DateOnly)}
	if _, ok := sf.high[old]; ok {
		t.Errorf("high still holds %v, two months old", old)
	}
}
