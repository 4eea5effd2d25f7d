package sqlite_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/nowserving/nowserving/queue/store/sqlite"
	"github.com/nowserving/nowserving/queue/store/storetest"
)

// wholeHistory is a plan line that reads the tickets or the events (by
// table or by the checks' aliases t, h, e, p) with no range of days or
// versions: a scan, or an index searched by site alone.
var wholeHistory = regexp.MustCompile(`\b(SCAN (tickets|events|t|h|e|p)\b|USING (COVERING )?INDEX tickets_\w+ \(site=\?\)|SEARCH (events|e|p) USING PRIMARY KEY \(site=\?\))`)

// TestCheckWindowPlans: every query of a check of recent days (and of a
// chunk of a check of every day) reads the tickets and events of its
// window by a range of an index, never the site's history: without
// ANALYZE, SQLite likes a covering index searched by site alone.
func TestCheckWindowPlans(t *testing.T) {
	t.Parallel()
	st := storetest.SQLite(t)
	for _, q := range sqlite.Dialect().CheckWindowQueries() {
		rows, err := st.DB().QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q.SQL)
		if err != nil {
			t.Fatalf("%s: %v", q.Name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var line string
			if err := rows.Scan(&id, &parent, &unused, &line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		rows.Close()
		if text := strings.Join(plan, "\n"); wholeHistory.MatchString(text) {
			t.Errorf("%s reads the whole history:\n%s\n%s", q.Name, q.SQL, text)
		}
	}
}
