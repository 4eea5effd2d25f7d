package web

import (
	"context"
	"encoding/csv"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nowserving/nowserving/queue"
	"github.com/nowserving/nowserving/report"
)

// The report pages, /reports/{site}: a site's figures over a day, a week,
// a month or a range, as charts each with its table under it and a CSV
// download of that table (/reports/{site}/csv?table=ID), and a print
// stylesheet that puts a report on one A4 page. Every figure comes from
// package report (BuildAll: Build and BuildDetail); this file only lays them out.
// The same page is written to a file by WriteReport (nowserving report
// --format html), with its scripts and styles inline.

// MaxReportDays bounds a report's range.
const MaxReportDays = 400

// ReportPeriod is the service days of a report.
type ReportPeriod struct {
	Kind     string // day, week, month or range
	From, To string // YYYY-MM-DD
}

// ParsePeriod reads a report's days from a query: period (day, week,
// month or range; default day), day (the day the period holds; default
// today) and, for a range, from and to.
func ParsePeriod(q url.Values, today string) (ReportPeriod, error) {
	p := ReportPeriod{Kind: q.Get("period")}
	day := q.Get("day")
	if day == "" {
		day = today
	}
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return p, fmt.Errorf("day %.20q: want YYYY-MM-DD", day)
	}
	switch p.Kind {
	case "", "day":
		p.Kind, p.From, p.To = "day", day, day
	case "week": // Monday to Sunday
		mon := d.AddDate(0, 0, -((int(d.Weekday()) + 6) % 7))
		p.From, p.To = mon.Format(time.DateOnly), mon.AddDate(0, 0, 6).Format(time.DateOnly)
	case "month":
		first := time.Date(d.Year(), d.Month(), 1, 0, 0, 0, 0, time.UTC)
		p.From, p.To = first.Format(time.DateOnly), first.AddDate(0, 1, -1).Format(time.DateOnly)
	case "range":
		f, err1 := time.Parse(time.DateOnly, q.Get("from"))
		t, err2 := time.Parse(time.DateOnly, q.Get("to"))
		if err1 != nil || err2 != nil || t.Before(f) {
			return p, fmt.Errorf("range: want from and to, YYYY-MM-DD, from not after to")
		}
		if t.Sub(f) > MaxReportDays*24*time.Hour {
			return p, fmt.Errorf("range: at most %d days", MaxReportDays)
		}
		p.From, p.To = f.Format(time.DateOnly), t.Format(time.DateOnly)
	default:
		return p, fmt.Errorf("period %.20q: want day, week, month or range", p.Kind)
	}
	return p, nil
}

// reportCard is one chart of a report with its table.
type reportCard struct {
	ID    string     `json:"id"`
	Title string     `json:"title"`
	Chart *cardChart `json:"chart,omitempty"` // nil: a table alone
	Head  []string   `json:"-"`
	Rows  [][]string `json:"-"`
}

// cardChart is what report.js draws: bars per label, one colour a series.
type cardChart struct {
	Labels []string      `json:"labels"`
	Unit   string        `json:"unit"` // "", "min" or "%"
	Series []chartSeries `json:"series"`
	// Target, when set, is a mark per label (the services' targets).
	Target      []float64 `json:"target,omitempty"`
	TargetLabel string    `json:"target_label,omitempty"`
}

type chartSeries struct {
	Label  string    `json:"label"`
	Color  string    `json:"color"`
	Values []float64 `json:"values"`
}

// reportPage is what the template lays out.
type reportPage struct {
	Lang    string
	W       map[string]string
	Site    string
	Name    string
	Period  ReportPeriod
	Days    int
	Cards   []reportCard
	Summary []string
	// Inline: scripts and styles in the page (a file), else linked.
	Inline   bool
	Lib, App template.JS // uPlot and report.js, inline
	CSS      template.CSS
	Data     template.JS // JSON of the cards' charts
	// CSV is the address of a card's CSV; Nav the period links.
	CSV func(id string) template.URL
	Nav []navLink
}

type navLink struct {
	Label string
	Href  template.URL
	On    bool
}

func mins(d time.Duration) string { return strconv.FormatFloat(d.Minutes(), 'f', 1, 64) }
func pct(f float64) string        { return strconv.FormatFloat(100*f, 'f', 0, 64) + "%" }
func itoa(n int) string           { return strconv.Itoa(n) }
func rate(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// buildReport reads the figures of site over p from package report.
func buildReport(ctx context.Context, eng *queue.Engine, site *queue.Site, p ReportPeriod, lang string) (reportPage, error) {
	r, d, err := report.BuildAll(ctx, eng, site.ID, p.From, p.To)
	if err != nil {
		return reportPage{}, err
	}
	w := reportCatalog.Words(lang)
	f, _ := time.Parse(time.DateOnly, p.From)
	t, _ := time.Parse(time.DateOnly, p.To)
	pg := reportPage{Lang: lang, W: w, Site: site.ID, Name: site.Name(lang), Period: p, Days: int(t.Sub(f).Hours()/24) + 1}
	svcName := func(code string) string { return site.ServiceName(code, lang) }
	pg.Summary = []string{
		fmt.Sprintf("%s %d", w["issued"], r.Total.Issued), fmt.Sprintf("%s %d", w["served"], r.Total.Served),
		fmt.Sprintf("%s %s %s", w["avgWait"], mins(r.Total.AvgWait), w["min"]),
		fmt.Sprintf("%s %s %s", w["p90short"], mins(r.Total.P90Wait), w["min"]),
	}
	pg.Cards = append(pg.Cards, hourCards(w, &d)...)
	pg.Cards = append(pg.Cards, waitCards(w, &r, &d, svcName)...)
	pg.Cards = append(pg.Cards, workCards(w, site, lang, &d)...)
	pg.Cards = append(pg.Cards, bookingCard(w, site, lang, &r))
	return pg, nil
}

// hourCards: arrivals by hour and by weekday.
func hourCards(w map[string]string, d *report.Detail) []reportCard {
	lo, hi := 7, 18
	for h, n := range d.Hours {
		if n > 0 {
			lo, hi = min(lo, h), max(hi, h)
		}
	}
	hours := reportCard{ID: "hours", Title: w["byHour"], Head: []string{w["hour"], w["tickets"]},
		Chart: &cardChart{Series: []chartSeries{{Label: w["tickets"], Color: "#1565c0"}}}}
	for h := lo; h <= hi; h++ {
		l := fmt.Sprintf("%02d", h)
		hours.Chart.Labels = append(hours.Chart.Labels, l)
		hours.Chart.Series[0].Values = append(hours.Chart.Series[0].Values, float64(d.Hours[h]))
		hours.Rows = append(hours.Rows, []string{l + ":00", itoa(d.Hours[h])})
	}
	days := reportCard{ID: "weekdays", Title: w["byWeekday"], Head: []string{w["weekday"], w["tickets"]},
		Chart: &cardChart{Series: []chartSeries{{Label: w["tickets"], Color: "#1565c0"}}}}
	for i := range 7 {
		wd := (i + 1) % 7 // Monday first
		l := strings.Split(w["weekdays"], ",")[wd]
		days.Chart.Labels = append(days.Chart.Labels, strings.Split(w["weekdaysShort"], ",")[wd])
		days.Chart.Series[0].Values = append(days.Chart.Series[0].Values, float64(d.Weekdays[wd]))
		days.Rows = append(days.Rows, []string{l, itoa(d.Weekdays[wd])})
	}
	return []reportCard{hours, days}
}

// waitCards: waits against target, the share within, no-shows and
// transfers, per service.
func waitCards(w map[string]string, r *report.Report, d *report.Detail, name func(string) string) []reportCard {
	waits := reportCard{ID: "waits", Title: w["waitsTitle"], Head: []string{w["service"], w["called"], w["p50"], w["p90"], w["target"]},
		Chart: &cardChart{Unit: "min", TargetLabel: w["target"], Series: []chartSeries{{Label: w["p50"], Color: "#64b5f6"}, {Label: w["p90"], Color: "#1565c0"}}}}
	within := reportCard{ID: "within", Title: w["withinTitle"], Head: []string{w["service"], w["within"], w["called"], w["share"]},
		Chart: &cardChart{Unit: "%", Series: []chartSeries{{Label: w["share"], Color: "#2e7d32"}}}}
	rates := reportCard{ID: "rates", Title: w["ratesTitle"], Head: []string{w["service"], w["issued"], w["noShows"], w["transfers"]},
		Chart: &cardChart{Unit: "%", Series: []chartSeries{{Label: w["noShows"], Color: "#c62828"}, {Label: w["transfers"], Color: "#ef6c00"}}}}
	for i, sd := range d.Services {
		l := name(sd.ID)
		target := "—"
		if sd.Target > 0 {
			target = mins(sd.Target)
		}
		waits.Chart.Labels = append(waits.Chart.Labels, l)
		waits.Chart.Series[0].Values = append(waits.Chart.Series[0].Values, sd.P50Wait.Minutes())
		waits.Chart.Series[1].Values = append(waits.Chart.Series[1].Values, sd.P90Wait.Minutes())
		waits.Chart.Target = append(waits.Chart.Target, sd.Target.Minutes())
		waits.Rows = append(waits.Rows, []string{l, itoa(sd.Called), mins(sd.P50Wait), mins(sd.P90Wait), target})
		within.Chart.Labels = append(within.Chart.Labels, l)
		within.Chart.Series[0].Values = append(within.Chart.Series[0].Values, 100*sd.WithinShare())
		within.Rows = append(within.Rows, []string{l, itoa(sd.Within), itoa(sd.Called), pct(sd.WithinShare())})
		var st report.Stats
		if i < len(r.Services) && r.Services[i].ID == sd.ID {
			st = r.Services[i].Stats
		}
		rates.Chart.Labels = append(rates.Chart.Labels, l)
		rates.Chart.Series[0].Values = append(rates.Chart.Series[0].Values, 100*rate(st.NoShows, st.Issued))
		rates.Chart.Series[1].Values = append(rates.Chart.Series[1].Values, 100*rate(sd.Transfers, st.Issued))
		rates.Rows = append(rates.Rows, []string{l, itoa(st.Issued), fmt.Sprintf("%d (%s)", st.NoShows, pct(rate(st.NoShows, st.Issued))),
			fmt.Sprintf("%d (%s)", sd.Transfers, pct(rate(sd.Transfers, st.Issued)))})
	}
	return []reportCard{waits, within, rates}
}

// workCards: per counter (a chart and table) and per person (a table).
func workCards(w map[string]string, site *queue.Site, lang string, d *report.Detail) []reportCard {
	head := []string{"", w["served"], w["avgService"], w["idle"]}
	ctr := reportCard{ID: "counters", Title: w["countersTitle"], Head: append([]string{w["counter"]}, head[1:]...),
		Chart: &cardChart{Series: []chartSeries{{Label: w["served"], Color: "#1565c0"}}}}
	for _, c := range d.Counters {
		l := site.CounterName(c.ID, lang, c.ID)
		ctr.Chart.Labels = append(ctr.Chart.Labels, l)
		ctr.Chart.Series[0].Values = append(ctr.Chart.Series[0].Values, float64(c.Served))
		ctr.Rows = append(ctr.Rows, []string{l, itoa(c.Served), mins(c.AvgService), pct(c.IdleShare())})
	}
	people := reportCard{ID: "people", Title: w["peopleTitle"], Head: append([]string{w["person"]}, head[1:]...)}
	for _, p := range d.People {
		people.Rows = append(people.Rows, []string{p.ID, itoa(p.Served), mins(p.AvgService), pct(p.IdleShare())})
	}
	return []reportCard{ctr, people}
}

// bookingCard: appointments per resource over the days.
func bookingCard(w map[string]string, site *queue.Site, lang string, r *report.Report) reportCard {
	c := reportCard{ID: "bookings", Title: w["bookingsTitle"], Head: []string{w["resource"], w["booked"], w["checkedIn"], w["missed"]},
		Chart: &cardChart{Series: []chartSeries{{Label: w["booked"], Color: "#1565c0"}, {Label: w["checkedIn"], Color: "#2e7d32"}, {Label: w["missed"], Color: "#c62828"}}}}
	idx := map[string]int{}
	for _, b := range r.Bookings {
		i, ok := idx[b.Resource]
		if !ok {
			i = len(c.Rows)
			idx[b.Resource] = i
			l := site.PickName(resourceNames(site, b.Resource), lang, b.Resource)
			c.Chart.Labels = append(c.Chart.Labels, l)
			for s := range c.Chart.Series {
				c.Chart.Series[s].Values = append(c.Chart.Series[s].Values, 0)
			}
			c.Rows = append(c.Rows, []string{l, "0", "0", "0"})
		}
		for s, n := range []int{b.Booked, b.OnTime + b.Late, b.Missed} {
			c.Chart.Series[s].Values[i] += float64(n)
			c.Rows[i][s+1] = strconv.FormatFloat(c.Chart.Series[s].Values[i], 'f', 0, 64)
		}
	}
	if len(c.Rows) == 0 {
		c.Chart = nil
	}
	return c
}

// writeCardCSV writes a card's table as CSV.
func writeCardCSV(w io.Writer, c reportCard) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(c.Head); err != nil {
		return fmt.Errorf("web: report csv: %w", err)
	}
	if err := cw.WriteAll(c.Rows); err != nil {
		return fmt.Errorf("web: report csv: %w", err)
	}
	return nil
}

// reportFor reads the request's report, answering the problem itself
// when it cannot (ok false).
func (s *Server) reportFor(w http.ResponseWriter, r *http.Request) (reportPage, *queue.Site, bool) {
	site := s.pathSite(w, r)
	if site == nil {
		return reportPage{}, nil, false
	}
	p, err := ParsePeriod(r.URL.Query(), site.Day(s.o.Clock()))
	if err != nil {
		badRequest(w, err.Error())
		return reportPage{}, nil, false
	}
	lang := r.URL.Query().Get("lang")
	if _, ok := reportCatalog[lang]; !ok {
		lang = site.Lang()
	}
	pg, err := buildReport(r.Context(), s.o.Engine, site, p, lang)
	if err != nil {
		writeError(w, s.log, err)
		return reportPage{}, nil, false
	}
	return pg, site, true
}
