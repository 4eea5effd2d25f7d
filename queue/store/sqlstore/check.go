package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/nowserving/nowserving/queue"
)

// CheckOpts tunes Check.
type CheckOpts struct {
	// Today returns the current service day of a site ("2006-01-02"):
	// tickets of earlier days must be in a terminal state. When nil, or when
	// it returns "", the newest day holding tickets of the site counts as
	// today.
	Today func(site string) string
	// MaxViolations caps the violations listed per invariant (0: 20).
	MaxViolations int
}

// Report is what Check found.
type Report struct {
	Sites      int      // sites with tickets or events
	Tickets    int      // tickets in the database
	Events     int      // events in the database
	Violations []string // one line per broken invariant instance; empty when all hold
}

// OK reports whether no invariant was broken.
func (r Report) OK() bool { return len(r.Violations) == 0 }

// String prints the report, one violation per line.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d sites, %d tickets, %d events: ", r.Sites, r.Tickets, r.Events)
	if r.OK() {
		b.WriteString("all invariants hold")
		return b.String()
	}
	fmt.Fprintf(&b, "%d violations", len(r.Violations))
	for _, v := range r.Violations {
		b.WriteString("\n  " + v)
	}
	return b.String()
}

// check is one invariant: a query whose every row is a violation, and how
// to print a row.
type check struct {
	name  string
	query string
	cols  int
	line  func(v []string) string
}

var checks = []check{
	{
		name: "unique numbers",
		query: "SELECT site, service, day, seq, COUNT(*) FROM tickets " +
			"GROUP BY site, service, day, seq HAVING COUNT(*) > 1 ORDER BY site, service, day, seq",
		cols: 5,
		line: func(v []string) string {
			return fmt.Sprintf("invariant 1: site %s service %s day %s: seq %s issued %s times", v[0], v[1], v[2], v[3], v[4])
		},
	},
	{
		name: "one ticket per counter",
		query: "SELECT site, counter, COUNT(*) FROM tickets WHERE status IN ('CALLED', 'SERVING') " +
			"GROUP BY site, counter HAVING COUNT(*) > 1 ORDER BY site, counter",
		cols: 3,
		line: func(v []string) string {
			return fmt.Sprintf("invariant 2: site %s counter %q holds %s called or serving tickets", v[0], v[1], v[2])
		},
	},
	{
		name: "one counter per ticket",
		query: "SELECT site, ticket_id, COUNT(*) FROM counters WHERE ticket_id <> 0 " +
			"GROUP BY site, ticket_id HAVING COUNT(*) > 1 ORDER BY site, ticket_id",
		cols: 3,
		line: func(v []string) string {
			return fmt.Sprintf("invariant 2: site %s ticket id %s is held by %s counters", v[0], v[1], v[2])
		},
	},
	{
		name: "counter holds a live ticket",
		query: "SELECT c.site, c.id, c.ticket_id, COALESCE(t.status, 'missing'), COALESCE(t.counter, '') " +
			"FROM counters c LEFT JOIN tickets t ON t.id = c.ticket_id " +
			"WHERE c.ticket_id <> 0 AND (t.id IS NULL OR t.status NOT IN ('CALLED', 'SERVING') OR t.counter <> c.id OR t.site <> c.site) " +
			"ORDER BY c.site, c.id",
		cols: 5,
		line: func(v []string) string {
			return fmt.Sprintf("invariant 2: site %s counter %s holds ticket id %s, which is %s at counter %q", v[0], v[1], v[2], v[3], v[4])
		},
	},
	{
		name: "live ticket held by its counter",
		query: "SELECT t.site, t.number, t.day, t.status, t.counter FROM tickets t " +
			"WHERE t.status IN ('CALLED', 'SERVING') AND NOT EXISTS " +
			"(SELECT 1 FROM counters c WHERE c.site = t.site AND c.id = t.counter AND c.ticket_id = t.id) " +
			"ORDER BY t.id",
		cols: 5,
		line: func(v []string) string {
			return fmt.Sprintf("invariant 2: site %s ticket %s of %s is %s at counter %q, which does not hold it", v[0], v[1], v[2], v[3], v[4])
		},
	},
	{
		name: "event versions start at 1 without gaps",
		query: "SELECT e.site, e.version FROM events e WHERE e.version > 1 AND NOT EXISTS " +
			"(SELECT 1 FROM events p WHERE p.site = e.site AND p.version = e.version - 1) ORDER BY e.site, e.version",
		cols: 2,
		line: func(v []string) string {
			return fmt.Sprintf("invariant 4: site %s: event version %s follows a gap", v[0], v[1])
		},
	},
	{
		name:  "event versions positive",
		query: "SELECT site, version FROM events WHERE version < 1 ORDER BY site, version",
		cols:  2,
		line: func(v []string) string {
			return fmt.Sprintf("invariant 4: site %s: event version %s is not positive", v[0], v[1])
		},
	},
	{
		name: "site version is the newest event",
		query: "SELECT s.site, s.version, COALESCE(m.v, 0) FROM site_versions s " +
			"LEFT JOIN (SELECT site, MAX(version) AS v FROM events GROUP BY site) m ON m.site = s.site " +
			"WHERE s.version <> COALESCE(m.v, 0) ORDER BY s.site",
		cols: 3,
		line: func(v []string) string {
			return fmt.Sprintf("invariant 4: site %s: site_versions says %s, newest event is %s", v[0], v[1], v[2])
		},
	},
	{
		name: "events without a site version",
		query: "SELECT e.site, MAX(e.version) FROM events e WHERE NOT EXISTS " +
			"(SELECT 1 FROM site_versions s WHERE s.site = e.site) GROUP BY e.site ORDER BY e.site",
		cols: 2,
		line: func(v []string) string {
			return fmt.Sprintf("invariant 4: site %s: events up to version %s but no site_versions row", v[0], v[1])
		},
	},
	{
		name: "every ticket was issued",
		query: "SELECT t.site, t.day, t.number, t.id FROM tickets t WHERE t.id NOT IN " +
			"(SELECT e.ticket_id FROM events e WHERE e.type = 'ISSUED') ORDER BY t.id",
		cols: 4,
		line: func(v []string) string {
			return fmt.Sprintf("invariant 3: site %s day %s: ticket %s (id %s) has no ISSUED event", v[0], v[1], v[2], v[3])
		},
	},
}

// Check verifies the invariants of DESIGN §6 on the database, inside one
// read-only snapshot: unique (site, service, day, seq); a counter holds at
// most one ticket and a called or serving ticket is held by exactly its
// counter; per-site event versions are 1..N without gaps and site_versions
// matches; every ticket has its ISSUED event; every ticket of a finished day
// is in a terminal state. Violations are listed in the report; the error is
// for a database that could not be read.
func (s *Store) Check(ctx context.Context, opts CheckOpts) (Report, error) {
	limit := opts.MaxViolations
	if limit <= 0 {
		limit = 20
	}
	var r Report
	err := s.view(ctx, &sql.TxOptions{ReadOnly: true, Isolation: s.d.Snapshot}, func(ctx context.Context, t *tx) error {
		q := t.tx
		if err := q.QueryRowContext(ctx, "SELECT COUNT(*) FROM tickets").Scan(&r.Tickets); err != nil {
			return t.wrap("check: count tickets", err)
		}
		if err := q.QueryRowContext(ctx, "SELECT COUNT(*) FROM events").Scan(&r.Events); err != nil {
			return t.wrap("check: count events", err)
		}
		if err := q.QueryRowContext(ctx, "SELECT COUNT(*) FROM (SELECT site FROM tickets UNION SELECT site FROM events) x").Scan(&r.Sites); err != nil {
			return t.wrap("check: count sites", err)
		}
		for _, c := range checks {
			lines, err := t.rowsAsText(ctx, c.query, c.cols, limit, nil)
			if err != nil {
				return t.wrap("check: "+c.name, err)
			}
			for _, v := range lines {
				r.Violations = append(r.Violations, c.line(v))
			}
		}
		return t.checkDays(ctx, opts, limit, &r)
	})
	if err != nil {
		return Report{}, err
	}
	return r, nil
}

// checkDays is invariant 5: every ticket of a day before the site's current
// day is terminal.
func (t *tx) checkDays(ctx context.Context, opts CheckOpts, limit int, r *Report) error {
	days, err := t.rowsAsText(ctx, "SELECT site, MAX(day) FROM tickets GROUP BY site ORDER BY site", 2, 0, nil)
	if err != nil {
		return t.wrap("check: days", err)
	}
	var terminal []any
	for _, st := range queue.AllStatuses {
		if st.Terminal() {
			terminal = append(terminal, string(st))
		}
	}
	q := t.s.d.Rebind("SELECT site, day, number, status FROM tickets WHERE site = ? AND day < ? AND status NOT IN (" +
		strings.TrimSuffix(strings.Repeat("?, ", len(terminal)), ", ") + ") ORDER BY day, id")
	for _, sd := range days {
		site, today := sd[0], sd[1]
		if opts.Today != nil {
			if d := opts.Today(site); d != "" {
				today = d
			}
		}
		lines, err := t.rowsAsText(ctx, q, 4, limit, append([]any{site, today}, terminal...))
		if err != nil {
			return t.wrap("check: open tickets of finished days", err)
		}
		for _, v := range lines {
			r.Violations = append(r.Violations,
				fmt.Sprintf("invariant 5: site %s day %s (finished): ticket %s is still %s", v[0], v[1], v[2], v[3]))
		}
	}
	return nil
}

// rowsAsText runs q and returns up to limit rows (0: all) of cols columns
// as text.
func (t *tx) rowsAsText(ctx context.Context, q string, cols, limit int, args []any) ([][]string, error) {
	rows, err := t.queryText(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		if limit > 0 && len(out) == limit {
			break
		}
		vals := make([]sql.NullString, cols)
		ptrs := make([]any, cols)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		line := make([]string, cols)
		for i, v := range vals {
			line[i] = v.String
		}
		out = append(out, line)
	}
	return out, rows.Err()
}
