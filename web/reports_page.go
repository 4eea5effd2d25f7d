package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"

	"github.com/nowserving/nowserving/queue"
)

var reportTemplate = template.Must(template.New("report").Parse(`<!doctype html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.W.title}} · {{.Name}} · {{.Period.From}}{{if ne .Period.From .Period.To}}–{{.Period.To}}{{end}}</title>
{{if .Inline}}<style>{{.CSS}}</style>{{else}}<link rel="stylesheet" href="/static/vendor/uplot.min.css"><link rel="stylesheet" href="/static/report.css">{{end}}
</head><body class="report">
<header>
<h1>{{.Name}}</h1>
<p class="period"><span id="period">{{.W.title}} · {{.Period.From}}{{if ne .Period.From .Period.To}} – {{.Period.To}}{{end}}</span> · {{.Days}} {{if eq .Days 1}}{{.W.oneDay}}{{else}}{{.W.days}}{{end}}</p>
<p class="summary">{{range .Summary}}<span>{{.}}</span>{{end}}</p>
{{if not .Inline}}<nav class="noprint">{{range .Nav}}<a href="{{.Href}}"{{if .On}} aria-current="page"{{end}}>{{.Label}}</a>{{end}}
<form method="get"><input type="hidden" name="period" value="range"><input type="hidden" name="lang" value="{{.Lang}}">
<label>{{.W.from}} <input type="date" name="from" value="{{.Period.From}}" required></label>
<label>{{.W.to}} <input type="date" name="to" value="{{.Period.To}}" required></label>
<button type="submit">{{.W.show}}</button></form>
<button type="button" id="print">{{.W.print}}</button> <a href="/dashboard/{{.Site}}">{{.W.dashboard}}</a></nav>{{end}}
</header>
<main>{{range .Cards}}
<section class="card" id="card-{{.ID}}"><h2>{{.Title}} <a class="csv noprint" href="{{call $.CSV .ID}}" download="{{$.Site}}-{{.ID}}-{{$.Period.From}}.csv">CSV</a></h2>
{{if .Chart}}<div class="chart" data-chart="{{.ID}}"></div>{{end}}
<table class="fig"><thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{else}}<tr><td colspan="{{len .Head}}">{{$.W.none}}</td></tr>{{end}}</tbody></table>
</section>{{end}}
</main>
<script type="application/json" id="report-data">{{.Data}}</script>
{{if .Inline}}<script>{{.Lib}}</script><script>{{.App}}</script>{{else}}<script src="/static/vendor/uplot.min.js"></script><script src="/static/report.js"></script>{{end}}
</body></html>
`))

// render writes pg as HTML: inline (a file: scripts, styles and each
// table's CSV in the page) or linking the daemon's.
func (pg *reportPage) render(w io.Writer, inline bool, query url.Values) error {
	charts := map[string]*cardChart{}
	csvs := map[string]template.URL{}
	for _, c := range pg.Cards {
		if c.Chart != nil {
			charts[c.ID] = c.Chart
		}
		var b bytes.Buffer
		if err := writeCardCSV(&b, c); err != nil {
			return err
		}
		csvs[c.ID] = template.URL("data:text/csv;charset=utf-8," + url.PathEscape(b.String()))
	}
	data, err := json.Marshal(map[string]any{"lang": pg.Lang, "charts": charts})
	if err != nil {
		return fmt.Errorf("web: report data: %w", err)
	}
	pg.Data, pg.Inline = template.JS(data), inline
	pg.CSV = func(id string) template.URL { return csvs[id] }
	if inline {
		for _, f := range []struct {
			name string
			to   func(b []byte)
		}{
			{"static/vendor/uplot.min.css", func(b []byte) { pg.CSS += template.CSS(b) }},
			{"static/report.css", func(b []byte) { pg.CSS += template.CSS(b) }},
			{"static/vendor/uplot.min.js", func(b []byte) { pg.Lib = template.JS(b) }},
			{"static/report.js", func(b []byte) { pg.App = template.JS(b) }},
		} {
			b, err := files.ReadFile(f.name)
			if err != nil {
				return fmt.Errorf("web: report: %w", err)
			}
			f.to(b)
		}
	} else {
		pg.Nav = periodNav(pg, query)
		pg.CSV = func(id string) template.URL {
			q := cloneQuery(query)
			q.Set("table", id)
			return template.URL("/reports/" + url.PathEscape(pg.Site) + "/csv?" + q.Encode())
		}
	}
	if err := reportTemplate.Execute(w, pg); err != nil {
		return fmt.Errorf("web: report page: %w", err)
	}
	return nil
}

func cloneQuery(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// periodNav links the day, week and month that hold the report's first
// day.
func periodNav(pg *reportPage, query url.Values) []navLink {
	var out []navLink
	for _, k := range []string{"day", "week", "month"} {
		q := url.Values{"period": {k}, "day": {pg.Period.From}, "lang": {pg.Lang}}
		if l := query.Get("lang"); l == "" {
			q.Del("lang")
		}
		out = append(out, navLink{Label: pg.W[k], Href: template.URL("?" + q.Encode()), On: pg.Period.Kind == k})
	}
	return out
}

// reportsPage serves a report to a supervisor or admin of the site.
func (s *Server) reportsPage(w http.ResponseWriter, r *http.Request) {
	if !s.supervisor(w, r) {
		return
	}
	pg, _, ok := s.reportFor(w, r)
	if !ok {
		return
	}
	pageHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := pg.render(w, false, r.URL.Query()); err != nil {
		s.log.Warn("web: report page", "err", err)
	}
}

// reportsCSV answers one table of a report as CSV (?table=ID).
func (s *Server) reportsCSV(w http.ResponseWriter, r *http.Request) {
	if !s.maySupervise(w, r, sessionOf(r)) {
		return
	}
	pg, _, ok := s.reportFor(w, r)
	if !ok {
		return
	}
	id := r.URL.Query().Get("table")
	for _, c := range pg.Cards {
		if c.ID == id {
			w.Header().Set("Content-Type", "text/csv; charset=utf-8")
			w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s-%s.csv"`, pg.Site, id, pg.Period.From))
			if err := writeCardCSV(w, c); err != nil {
				s.log.Warn("web: report csv", "err", err)
			}
			return
		}
	}
	writeProblem(w, http.StatusNotFound, "unknown_table", "no such table", "table: want one of the report's cards")
}

// WriteReport writes the report page of site over the service days
// from..to (to empty: from) to w as one HTML file with its charts, styles
// and CSV downloads inside: nowserving report --format html. lang is one
// of the report's languages (en, zh, pt), else the site's main one.
func WriteReport(ctx context.Context, w io.Writer, eng *queue.Engine, site, from, to, lang string) error {
	s, err := eng.Site(site)
	if err != nil {
		return fmt.Errorf("web: report: %w", err)
	}
	if to == "" {
		to = from
	}
	p, err := ParsePeriod(url.Values{"period": {"range"}, "from": {from}, "to": {to}}, from)
	if err != nil {
		return fmt.Errorf("web: report: %w: %w", queue.ErrBadRequest, err)
	}
	if from == to {
		p.Kind = "day"
	}
	if _, ok := reportCatalog[lang]; !ok {
		lang = s.Lang()
	}
	pg, err := buildReport(ctx, eng, s, p, lang)
	if err != nil {
		return err
	}
	return pg.render(w, true, nil)
}
