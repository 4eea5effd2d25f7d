package web

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nowserving/nowserving/report"
)

func TestParsePeriod(t *testing.T) {
	for _, c := range []struct {
		q, from, to, err string
	}{
		{"", "2026-03-04", "2026-03-04", ""},
		{"period=day&day=2026-03-01", "2026-03-01", "2026-03-01", ""},
		{"period=week&day=2026-03-04", "2026-03-02", "2026-03-08", ""}, // a Wednesday: Monday to Sunday
		{"period=week&day=2026-03-08", "2026-03-02", "2026-03-08", ""}, // a Sunday
		{"period=month&day=2026-02-10", "2026-02-01", "2026-02-28", ""},
		{"period=range&from=2026-01-01&to=2026-03-31", "2026-01-01", "2026-03-31", ""},
		{"period=range&from=2026-03-31&to=2026-01-01", "", "", "range"},
		{"period=range&from=2024-01-01&to=2026-01-01", "", "", "at most"},
		{"period=year", "", "", "period"},
		{"day=03/04/2026", "", "", "YYYY-MM-DD"},
	} {
		q, _ := url.ParseQuery(c.q)
		p, err := ParsePeriod(q, "2026-03-04")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want an error with %q", c.q, err, c.err)
			}
			continue
		}
		if err != nil || p.From != c.from || p.To != c.to {
			t.Errorf("%s: %+v %v, want %s..%s", c.q, p, err, c.from, c.to)
		}
	}
}

// TestReports: the report page is for supervisors; its tables are package
// report's figures; each table's CSV is that table; the file of
// WriteReport has everything inside.
func TestReports(t *testing.T) {
	se := newStaffEnv(t, dashSite)
	se.issueN(4, "A")
	se.issue("F")
	se.env.clock.Add(35 * time.Minute)
	se.call("1")
	se.call("3")
	anon := se.person(t)
	if r := anon.do("GET", "/reports/main", "", nil); r.StatusCode != http.StatusSeeOther {
		t.Errorf("no session: %d, want 303 to /login", r.StatusCode)
	}
	clerk := se.person(t)
	wantStatus(t, clerk.login("li.na", "secret-pass"), http.StatusSeeOther)
	wantStatus(t, clerk.do("GET", "/reports/main", "", nil), http.StatusForbidden)
	wantStatus(t, clerk.do("GET", "/reports/main/csv?table=waits", "", nil), http.StatusForbidden)
	sup := se.person(t)
	wantStatus(t, sup.login("wang", "secret-pass"), http.StatusSeeOther)
	pr := sup.do("GET", "/reports/main?period=week&day=2026-03-02&lang=en", "", nil)
	page := wantStatus(t, pr, http.StatusOK)
	for _, want := range []string{"2026-03-02 – 2026-03-08", "Issued 5", "First visit: internal medicine", `data-chart="waits"`, "/reports/main/csv?"} {
		if !strings.Contains(page, want) {
			t.Errorf("report page lacks %q", want)
		}
	}
	wantStatus(t, sup.do("GET", "/reports/main?period=year", "", nil), http.StatusBadRequest)
	body := wantStatus(t, sup.do("GET", "/reports/main/csv?period=day&day=2026-03-02&lang=en&table=waits", "", nil), http.StatusOK)
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	d, err := report.BuildDetail(t.Context(), se.eng, "main", "2026-03-02", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[0][0] != "Service" || rows[1][1] != "1" || rows[1][3] != mins(d.Services[0].P90Wait) || rows[1][4] != "30.0" {
		t.Errorf("waits csv %q; detail %+v", rows, d.Services[0])
	}
	wantStatus(t, sup.do("GET", "/reports/main/csv?table=nope", "", nil), http.StatusNotFound)
	var file bytes.Buffer
	if err := WriteReport(t.Context(), &file, se.eng, "main", "2026-03-02", "", "zh"); err != nil {
		t.Fatal(err)
	}
	f := file.String()
	if strings.Contains(f, `src="/static`) || strings.Contains(f, `href="/static`) || !strings.Contains(f, "var uPlot=") ||
		!strings.Contains(f, `href="data:text/csv;charset=utf-8,`) || !strings.Contains(f, "初诊") {
		t.Errorf("the report file is not self-contained in zh: %.300s", f)
	}
}

// TestReportWords: each language's weekday names name seven days (the
// catalog's completeness is TestCatalogs').
func TestReportWords(t *testing.T) {
	for l, w := range reportCatalog {
		for _, k := range []string{"weekdays", "weekdaysShort"} {
			if n := len(strings.Split(w[k], ",")); n != 7 {
				t.Errorf("%s: %s has %d days", l, k, n)
			}
		}
	}
}
