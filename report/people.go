package report

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nowserving/nowserving/queue"
)

// Person is what one person did over a report's days: the events whose
// actor names them, as the browser pages write it ("user:li.na@counter-3":
// the person and the place). Devices (keypads, kiosks) are not people and
// are left out; their figures are the counters'.
type Person struct {
	Name string
	// Counters are the counters they acted at, sorted.
	Counters []string
	// Called counts their calls (next or a given number, a call after a
	// re-entry or a transfer too), Recalled their recalls, Served the
	// tickets they completed, NoShows those they marked, Transferred those
	// they sent on, Paused their pauses.
	Called, Recalled, Served, NoShows, Transferred, Paused int
	// AvgService is over the tickets they completed after starting them.
	AvgService time.Duration
}

// People adds up per person, by name, what site's staff did over the
// service days from..to (to empty means from): their person rows of the
// daily figures (see Figures), read as Build reads the rest, so the event
// log is read only for the days not summed.
func People(ctx context.Context, eng *queue.Engine, site, from, to string) ([]Person, error) {
	_, f, t, days, err := figuresOf(ctx, eng, site, from, to)
	if err != nil {
		return nil, err
	}
	sum := peopleOf(f, t, days)
	out := make([]Person, 0, len(sum))
	for _, name := range slices.Sorted(maps.Keys(sum)) {
		x := sum[name]
		p := Person{Name: name, Counters: x.Counters, Called: x.Called, Recalled: x.Recalled, Served: x.Served,
			NoShows: x.NoShows, Transferred: x.Transferred, Paused: x.Paused}
		if x.Timed > 0 {
			p.AvgService = time.Duration(x.ServiceMs/int64(x.Timed)) * time.Millisecond
		}
		out = append(out, p)
	}
	return out, nil
}

// peopleOf adds up the person rows of the days f..t.
func peopleOf(f, t time.Time, days map[string]*dayFigures) map[string]*Figures {
	sum := map[string]*Figures{}
	for d := f; !d.After(t); d = d.AddDate(0, 0, 1) {
		if df := days[d.Format(time.DateOnly)]; df != nil {
			for name, x := range df.people {
				row(sum, name).Add(x)
			}
		}
	}
	return sum
}

// PeopleHeader is the first line of the people CSV; avg_service_s is in
// seconds, counters are separated by spaces.
var PeopleHeader = []string{"site", "from", "to", "person", "counters", "called", "recalled", "served", "no_shows",
	"transferred", "paused", "avg_service_s"}

// WritePeople renders the people of site's days from..to in format
// (table, csv or json).
func WritePeople(w io.Writer, site, from, to string, people []Person, format string) error {
	to = cmp.Or(to, from)
	switch format {
	case "table", "":
		days := from
		if to != from {
			days += " .. " + to
		}
		fmt.Fprintf(w, "site %s, service day %s, by person\n\n", site, days)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "person\tcounters\tcalled\trecalled\tserved\tno-show\ttransferred\tpaused\tavg service\t\n")
		for _, p := range people {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", p.Name, strings.Join(p.Counters, " "), p.Called, p.Recalled,
				p.Served, p.NoShows, p.Transferred, p.Paused, minsec(p.AvgService))
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("report: write people: %w", err)
		}
		return nil
	case "csv":
		recs := [][]string{PeopleHeader}
		for _, p := range people {
			recs = append(recs, []string{site, from, to, p.Name, strings.Join(p.Counters, " "), strconv.Itoa(p.Called),
				strconv.Itoa(p.Recalled), strconv.Itoa(p.Served), strconv.Itoa(p.NoShows), strconv.Itoa(p.Transferred),
				strconv.Itoa(p.Paused), secs(p.AvgService)})
		}
		if err := csv.NewWriter(w).WriteAll(recs); err != nil {
			return fmt.Errorf("report: write people: %w", err)
		}
		return nil
	case "json":
		return writePeopleJSON(w, site, from, to, people)
	}
	return fmt.Errorf("%w: %q", ErrFormat, format)
}

func writePeopleJSON(w io.Writer, site, from, to string, people []Person) error {
	type person struct {
		Name        string   `json:"person"`
		Counters    []string `json:"counters"`
		Called      int      `json:"called"`
		Recalled    int      `json:"recalled"`
		Served      int      `json:"served"`
		NoShows     int      `json:"no_shows"`
		Transferred int      `json:"transferred"`
		Paused      int      `json:"paused"`
		AvgService  float64  `json:"avg_service_s"`
	}
	out := struct {
		Site   string   `json:"site"`
		From   string   `json:"from"`
		To     string   `json:"to"`
		People []person `json:"people"`
	}{Site: site, From: from, To: to, People: []person{}}
	for _, p := range people {
		out.People = append(out.People, person{p.Name, p.Counters, p.Called, p.Recalled, p.Served, p.NoShows, p.Transferred,
			p.Paused, seconds(p.AvgService)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("report: write people: %w", err)
	}
	return nil
}
