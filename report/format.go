package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"
)

// Formats are the names Write accepts.
var Formats = []string{"table", "csv", "json"}

// Write renders r in format (table, csv or json).
func Write(w io.Writer, r Report, format string) error {
	switch format {
	case "table", "":
		return WriteTable(w, r)
	case "csv":
		return WriteCSV(w, r)
	case "json":
		return WriteJSON(w, r)
	}
	return fmt.Errorf("%w: %q", ErrFormat, format)
}

// minsec formats a duration as m:ss or h:mm:ss, rounded to the second.
func minsec(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d/time.Hour), int(d/time.Minute)%60, int(d/time.Second)%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}

func hour(s Stats) string {
	if s.BusiestHour < 0 {
		return "-"
	}
	return fmt.Sprintf("%02d:00 (%d)", s.BusiestHour, s.BusiestCount)
}

// WriteTable writes r as aligned text: a table of services with a total
// line, a table of counters, then (for a site with bookings) a table of
// resources per day.
func WriteTable(w io.Writer, r Report) error {
	days := r.From
	if r.To != r.From {
		days += " .. " + r.To
	}
	if _, err := fmt.Fprintf(w, "site %s, service day %s\n\n", r.Site, days); err != nil {
		return fmt.Errorf("report: write table: %w", err)
	}
	cols := "called\tserved\tno-show\tcancelled\tavg wait\tp90 wait\tavg service\tbusiest hour\t\n"
	cells := func(s Stats) string {
		return fmt.Sprintf("%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t\n", s.Called, s.Served, s.NoShows, s.Cancelled,
			minsec(s.AvgWait), minsec(s.P90Wait), minsec(s.AvgService), hour(s))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "service\tissued\t"+cols)
	for _, row := range r.Services {
		fmt.Fprintf(tw, "%s\t%d\t%s", row.ID, row.Issued, cells(row.Stats))
	}
	fmt.Fprintf(tw, "total\t%d\t%s", r.Total.Issued, cells(r.Total))
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: write table: %w", err)
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "counter\t"+cols)
	for _, row := range r.Counters {
		fmt.Fprintf(tw, "%s\t%s", row.ID, cells(row.Stats))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: write table: %w", err)
	}
	return writeBookingTable(w, r.Bookings)
}

// writeBookingTable writes the bookings table, nothing when there are no
// rows.
func writeBookingTable(w io.Writer, rows []BookingRow) error {
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "resource\tday\tbooked\tcancelled\tchecked in on time\tchecked in late\tmissed\t\n")
	for _, b := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t\n", b.Resource, b.Day, b.Booked, b.Cancelled, b.OnTime, b.Late, b.Missed)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: write table: %w", err)
	}
	return nil
}

// CSVHeader is the first line of the CSV format. Durations are in seconds
// to the millisecond; busiest_hour is empty when nothing happened. The
// last five columns are those of the resource lines (kind resource: day,
// bookings made, checked in on time and late, missed; their cancelled
// column counts cancelled bookings), empty on the other lines; a resource
// line leaves the ticket columns empty.
var CSVHeader = []string{"site", "from", "to", "kind", "id", "issued", "called", "served", "no_shows", "cancelled",
	"avg_wait_s", "p90_wait_s", "avg_service_s", "busiest_hour", "busiest_count",
	"day", "booked", "checked_in_on_time", "checked_in_late", "missed"}

// WriteCSV writes one line per service (kind service), the total (kind
// total, id empty), one per counter (kind counter) and one per resource and
// day (kind resource).
func WriteCSV(w io.Writer, r Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return fmt.Errorf("report: write csv: %w", err)
	}
	rec := func(kind, id string, s Stats) []string {
		bh := ""
		if s.BusiestHour >= 0 {
			bh = strconv.Itoa(s.BusiestHour)
		}
		return []string{r.Site, r.From, r.To, kind, id, strconv.Itoa(s.Issued), strconv.Itoa(s.Called), strconv.Itoa(s.Served),
			strconv.Itoa(s.NoShows), strconv.Itoa(s.Cancelled), secs(s.AvgWait), secs(s.P90Wait), secs(s.AvgService),
			bh, strconv.Itoa(s.BusiestCount), "", "", "", "", ""}
	}
	var recs [][]string
	for _, row := range r.Services {
		recs = append(recs, rec("service", row.ID, row.Stats))
	}
	recs = append(recs, rec("total", "", r.Total))
	for _, row := range r.Counters {
		recs = append(recs, rec("counter", row.ID, row.Stats))
	}
	for _, b := range r.Bookings {
		recs = append(recs, []string{r.Site, r.From, r.To, "resource", b.Resource, "", "", "", "", strconv.Itoa(b.Cancelled),
			"", "", "", "", "", b.Day, strconv.Itoa(b.Booked), strconv.Itoa(b.OnTime), strconv.Itoa(b.Late), strconv.Itoa(b.Missed)})
	}
	if err := cw.WriteAll(recs); err != nil {
		return fmt.Errorf("report: write csv: %w", err)
	}
	return nil
}

// seconds is d in seconds to the millisecond, the precision of the times
// the store keeps: 1.118, never 1.1179999999999999 (d.Seconds() of
// 1,118 ms) or 0.536666666 (an average). JSON and CSV both write it.
func seconds(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond).Milliseconds()) / 1000
}

// secs is seconds as CSV writes it.
func secs(d time.Duration) string { return strconv.FormatFloat(seconds(d), 'f', -1, 64) }

// jsonStats is Stats with snake_case names and seconds.
type jsonStats struct {
	ID           string  `json:"id,omitempty"`
	Issued       int     `json:"issued"`
	Called       int     `json:"called"`
	Served       int     `json:"served"`
	NoShows      int     `json:"no_shows"`
	Cancelled    int     `json:"cancelled"`
	AvgWait      float64 `json:"avg_wait_s"`
	P90Wait      float64 `json:"p90_wait_s"`
	AvgService   float64 `json:"avg_service_s"`
	BusiestHour  *int    `json:"busiest_hour"`
	BusiestCount int     `json:"busiest_count"`
}

func toJSON(id string, s Stats) jsonStats {
	j := jsonStats{ID: id, Issued: s.Issued, Called: s.Called, Served: s.Served, NoShows: s.NoShows, Cancelled: s.Cancelled,
		AvgWait: seconds(s.AvgWait), P90Wait: seconds(s.P90Wait), AvgService: seconds(s.AvgService), BusiestCount: s.BusiestCount}
	if s.BusiestHour >= 0 {
		h := s.BusiestHour
		j.BusiestHour = &h
	}
	return j
}

// jsonBooking is BookingRow with snake_case names.
type jsonBooking struct {
	Day       string `json:"day"`
	Resource  string `json:"resource"`
	Booked    int    `json:"booked"`
	Cancelled int    `json:"cancelled"`
	OnTime    int    `json:"checked_in_on_time"`
	Late      int    `json:"checked_in_late"`
	Missed    int    `json:"missed"`
}

// WriteJSON writes r as one indented JSON object: site, from, to, services,
// counters, total, bookings (per resource and day); durations in seconds
// to the millisecond, busiest_hour null when nothing happened.
func WriteJSON(w io.Writer, r Report) error {
	out := struct {
		Site     string        `json:"site"`
		From     string        `json:"from"`
		To       string        `json:"to"`
		Services []jsonStats   `json:"services"`
		Counters []jsonStats   `json:"counters"`
		Total    jsonStats     `json:"total"`
		Bookings []jsonBooking `json:"bookings"`
	}{Site: r.Site, From: r.From, To: r.To, Services: []jsonStats{}, Counters: []jsonStats{}, Total: toJSON("", r.Total),
		Bookings: []jsonBooking{}}
	for _, b := range r.Bookings {
		out.Bookings = append(out.Bookings, jsonBooking(b))
	}
	for _, row := range r.Services {
		out.Services = append(out.Services, toJSON(row.ID, row.Stats))
	}
	for _, row := range r.Counters {
		out.Counters = append(out.Counters, toJSON(row.ID, row.Stats))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("report: write json: %w", err)
	}
	return nil
}
