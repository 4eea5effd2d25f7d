package report

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/nowserving/nowserving/internal/testkit/golden"
	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// playBookings runs storetest.PlayBookingDay on st and returns the engine.
func playBookings(t *testing.T, st queue.Store) *queue.Engine {
	t.Helper()
	site := storetest.BookingSite()
	c := storetest.FixedClock(time.Date(2026, 12, 1, 7, 30, 0, 0, site.Location))
	eng := storetest.StartEngine(t, queue.Opts{Store: st, Sites: []queue.Site{site}, Clock: c.Now})
	storetest.PlayBookingDay(t, eng, c)
	return eng
}

// TestBookings: the booking figures per resource and day on every store,
// by hand against storetest.BookingDayWant, and the three formats as
// golden files (the same on every store).
func TestBookings(t *testing.T) {
	for _, e := range storetest.Engines {
		t.Run(e.Name, func(t *testing.T) {
			qs, _ := e.Open(t)
			eng := playBookings(t, qs)
			r, err := Build(context.Background(), eng, "hq", "2026-12-01", "2026-12-02")
			if err != nil {
				t.Fatal(err)
			}
			var want []BookingRow
			for _, res := range []string{"dr-li", "dr-wu", "vacc"} {
				w := storetest.BookingDayWant[res]
				want = append(want, BookingRow{Day: "2026-12-01", Resource: res, Booked: w[0], Cancelled: w[1], OnTime: w[2], Late: w[3], Missed: w[4]})
			}
			want = append(want, BookingRow{Day: "2026-12-02", Resource: "dr-li", Booked: 1},
				BookingRow{Day: "2026-12-02", Resource: "dr-wu"}, BookingRow{Day: "2026-12-02", Resource: "vacc"})
			if !reflect.DeepEqual(r.Bookings, want) {
				t.Errorf("bookings:\n got %+v\nwant %+v", r.Bookings, want)
			}
			for _, f := range Formats {
				var b bytes.Buffer
				if err := Write(&b, r, f); err != nil {
					t.Fatal(err)
				}
				golden.Assert(t, filepath.Join("testdata", "bookings."+f), b.Bytes())
			}
			// A day without bookings lists the resources with zeros.
			r, err = Build(context.Background(), eng, "hq", "2026-12-03", "")
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Bookings) != 3 || r.Bookings[0] != (BookingRow{Day: "2026-12-03", Resource: "dr-li"}) {
				t.Errorf("empty day: %+v", r.Bookings)
			}
		})
	}
}

// TestBookingsFromDaily: once the days are summed, the booking figures
// (made on days before their slot's, marked missed after it) read from
// the daily figures are those of the events.
func TestBookingsFromDaily(t *testing.T) {
	st := storetest.SQLite(t)
	eng := playBookings(t, st)
	ctx := context.Background()
	want, err := Build(ctx, eng, "hq", "2026-12-01", "2026-12-02")
	if err != nil {
		t.Fatal(err)
	}
	site, _ := eng.Site("hq")
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, site.Location)
	for more := true; more; {
		if _, more, err = SumDays(ctx, eng, st, "hq", now, 1, nil); err != nil {
			t.Fatal(err)
		}
	}
	if last, err := st.LastDailyDay(ctx, "hq"); err != nil || last < "2026-12-02" {
		t.Fatalf("last summed day %q, %v", last, err)
	}
	got, err := Build(ctx, eng, "hq", "2026-12-01", "2026-12-02")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("from the daily figures:\n got %+v\nwant %+v", got, want)
	}
}
