package report_test

import (
	"os"
	"time"

	"github.com/nowserving/nowserving/report"
)

func ExampleWrite() {
	r := report.Report{
		Site: "clinic", From: "2026-03-02", To: "2026-03-02",
		Services: []report.Row{{ID: "A", Stats: report.Stats{Issued: 4, Called: 3, Served: 2, NoShows: 1,
			AvgWait: 17 * time.Minute, P90Wait: 21 * time.Minute, AvgService: 570 * time.Second, BusiestHour: 8, BusiestCount: 3}}},
		Counters: []report.Row{{ID: "1", Stats: report.Stats{Called: 3, Served: 2, NoShows: 1, BusiestHour: -1}}},
		Total:    report.Stats{Issued: 4, Called: 3, Served: 2, NoShows: 1, BusiestHour: 8, BusiestCount: 3},
		Bookings: []report.BookingRow{{Day: "2026-03-02", Resource: "dr-li", Booked: 4, Cancelled: 1, OnTime: 1, Late: 1, Missed: 1}},
	}
	report.Write(os.Stdout, r, "csv")
	// Output:
	// site,from,to,kind,id,issued,called,served,no_shows,cancelled,avg_wait_s,p90_wait_s,avg_service_s,busiest_hour,busiest_count,day,booked,checked_in_on_time,checked_in_late,missed
	// clinic,2026-03-02,2026-03-02,service,A,4,3,2,1,0,1020,1260,570,8,3,,,,,
	// clinic,2026-03-02,2026-03-02,total,,4,3,2,1,0,0,0,0,8,3,,,,,
	// clinic,2026-03-02,2026-03-02,counter,1,0,3,2,1,0,0,0,0,,0,,,,,
	// clinic,2026-03-02,2026-03-02,resource,dr-li,,,,,1,,,,,,2026-03-02,4,1,1,1
}
