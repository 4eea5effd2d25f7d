package report

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/sqlstore"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// TestDailyEqualsEvents: on every store, the days summed into the daily
// figures report what their events report, also once the events are
// purged; today (not summed) still comes from the events.
func TestDailyEqualsEvents(t *testing.T) {
	storetest.EachStore(t, func(t *testing.T, qs queue.Store, st *sqlstore.Store) {
		eng := play(t, qs)
		ctx := context.Background()
		ranges := [][2]string{{"2026-03-02", ""}, {"2026-03-03", ""}, {"2026-03-01", "2026-03-04"}}
		var want []Report
		for _, r := range ranges {
			rep, err := Build(ctx, eng, "clinic", r[0], r[1])
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, rep)
		}
		site, _ := eng.Site("clinic")
		// 2026-03-04 12:00 Berlin: 03-02 is finished, 03-03 is
		// finished too (6 h past the rollover of 03-04).
		now := time.Date(2026, 3, 4, 12, 0, 0, 0, site.Location)
		next, more, err := SumDays(ctx, eng, st, "clinic", now, 1, nil)
		if err != nil || next != "2026-03-03" || !more {
			t.Fatalf("first SumDays: %q %v %v, want 2026-03-03 true", next, more, err)
		}
		if next, more, err = SumDays(ctx, eng, st, "clinic", now, 31, nil); err != nil || next != "2026-03-04" || more {
			t.Fatalf("second SumDays: %q %v %v, want 2026-03-04 false", next, more, err)
		}
		if n, err := st.PurgeEvents(ctx, sqlstore.DayPurgeOf(site, now, time.Hour, 1000)); err != nil || n == 0 {
			t.Fatalf("purge: %d events, %v", n, err)
		}
		for i, r := range ranges {
			got, err := Build(ctx, eng, "clinic", r[0], r[1])
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want[i]) {
				t.Errorf("%v from the daily figures:\n got %+v\nwant %+v", r, got, want[i])
			}
		}
	})
}
