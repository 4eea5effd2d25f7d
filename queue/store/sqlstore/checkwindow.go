package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// checkWindow is what a check of the recent days reads: per site, the
// events from version on (the first of day floor's tickets, a margin
// before) and the tickets of service days from ticketDay on, the day
// before floor: a ticket of that day a counter finished after the
// rollover is read with the events of it the window holds. The checks'
// floors (see floorEdits) are floor, the first day whose tickets keep all
// their events in the window, and version.
type checkWindow struct {
	sites map[string]windowFrom
}

type windowFrom struct {
	version          int64
	ticketDay, floor string
}

// windowTable finds a reference to the tickets or events table that a
// check reads from (FROM, or JOIN of events), with its alias; a JOIN of
// tickets is a look-up by id and stays.
var windowTable = regexp.MustCompile(`\b(FROM tickets|FROM events|JOIN events)\b( [a-z]\b)?`)

// edit makes q read the window: the tables become the window's rows and
// purge_floors the window's floors. The sites are those with events
// (site_versions): tickets of a site without any are checked by a check
// of every day only.
func (w *checkWindow) edit(q string) string {
	sites := slices.Sorted(func(yield func(string) bool) {
		for s := range w.sites {
			if !yield(s) {
				return
			}
		}
	})
	var tk, ev, fl []string
	for _, s := range sites {
		f := w.sites[s]
		tk = append(tk, fmt.Sprintf("(site = %s AND day >= '%s')", quote(s), f.ticketDay))
		ev = append(ev, fmt.Sprintf("(site = %s AND version >= %d)", quote(s), f.version))
		fl = append(fl, fmt.Sprintf("SELECT %s AS site, %d AS version, '%s' AS day", quote(s), f.version, f.floor))
	}
	if len(fl) > 0 {
		q = strings.ReplaceAll(q, "purge_floors f", "("+strings.Join(fl, " UNION ALL ")+") f")
	}
	return windowTable.ReplaceAllStringFunc(q, func(m string) string {
		sub := windowTable.FindStringSubmatch(m)
		kw, table, _ := strings.Cut(sub[1], " ")
		alias := strings.TrimSpace(sub[2])
		if alias == "" {
			alias = table
		}
		cond := strings.Join(ev, " OR ")
		if table == "tickets" {
			cond = strings.Join(tk, " OR ")
		}
		if cond == "" {
			return m
		}
		return fmt.Sprintf("%s (SELECT * FROM %s WHERE %s) %s", kw, table, cond, alias)
	})
}

// quote quotes a site id (ids are [a-z0-9-]; any quote is doubled).
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// dayBefore is the service day n days before day (YYYY-MM-DD).
func dayBefore(day string, n int) (string, error) {
	t, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return "", fmt.Errorf("check: day %q: %w", day, err)
	}
	return t.AddDate(0, 0, -n).Format(time.DateOnly), nil
}

// checkWindowOf finds the window of the days days up to each site's today
// (CheckOpts.Today, else its newest day with tickets), never before the
// site's purge floor.
func (t *tx) checkWindowOf(ctx context.Context, opts CheckOpts, days int) (*checkWindow, error) {
	w := &checkWindow{sites: map[string]windowFrom{}}
	sites, err := t.rowsAsText(ctx, "SELECT site FROM site_versions ORDER BY site", 1, 0, nil)
	if err != nil {
		return nil, t.wrap("check: sites", err)
	}
	for _, s := range sites {
		f, err := t.siteWindow(ctx, opts, s[0], days)
		if err != nil {
			return nil, err
		}
		w.sites[s[0]] = f
	}
	return w, nil
}

// siteWindow is the window of one site.
func (t *tx) siteWindow(ctx context.Context, opts CheckOpts, site string, days int) (windowFrom, error) {
	d := t.s.d
	today := ""
	if opts.Today != nil {
		today = opts.Today(site)
	}
	if today == "" {
		rows, err := t.rowsAsText(ctx, d.Rebind("SELECT MAX(day) FROM tickets WHERE site = ?"), 1, 0, []any{site})
		if err != nil {
			return windowFrom{}, t.wrap("check: newest day", err)
		}
		today = cmpOr(rows, time.Now().UTC().Format(time.DateOnly))
	}
	floor, err := dayBefore(today, days-1)
	if err != nil {
		return windowFrom{}, err
	}
	purged, err := t.purgeFloor(ctx, site)
	if err != nil {
		return windowFrom{}, err
	}
	f := windowFrom{floor: max(floor, purged.Day)}
	if f.ticketDay, err = dayBefore(f.floor, 1); err != nil {
		return windowFrom{}, err
	}
	first, err := t.rowsAsText(ctx, d.Rebind("SELECT MIN(issued_at) FROM tickets WHERE site = ? AND day >= ?"), 1, 0, []any{site, f.floor})
	if err != nil {
		return windowFrom{}, t.wrap("check: first ticket of the window", err)
	}
	at, err := strconv.ParseInt(cmpOr(first, "0"), 10, 64)
	if err != nil || at == 0 {
		at = time.Now().UnixMilli() // no ticket in the window: no event of its tickets either
	}
	f.version, err = t.firstVersionAt(ctx, site, max(purged.Version, 1), at-ticketMargin.Milliseconds())
	return f, err
}

// cmpOr is the one value of a one-row, one-column answer, or def when it
// is missing or NULL.
func cmpOr(rows [][]string, def string) string {
	if len(rows) == 0 || rows[0][0] == "" {
		return def
	}
	return rows[0][0]
}

// firstVersionAt is the first version of site from lo on whose event is
// at atMs or later (the last version + 1 when none is), found by halves:
// a look-up of the primary key per step.
func (t *tx) firstVersionAt(ctx context.Context, site string, lo, atMs int64) (int64, error) {
	var last sql.NullInt64
	if err := t.tx.QueryRowContext(ctx, t.s.d.Rebind("SELECT version FROM site_versions WHERE site = ?"), site).Scan(&last); err != nil {
		return 0, t.wrap("check: site version", err)
	}
	q := t.s.d.Rebind("SELECT version, at FROM events WHERE site = ? AND version >= ? ORDER BY version LIMIT 1")
	hi := last.Int64 + 1
	for lo < hi {
		mid := lo + (hi-lo)/2
		var v, at int64
		err := t.tx.QueryRowContext(ctx, q, site, mid).Scan(&v, &at)
		switch {
		case err == sql.ErrNoRows:
			hi = mid
		case err != nil:
			return 0, t.wrap("check: window start", err)
		case at >= atMs:
			hi = mid
		default:
			lo = v + 1
		}
	}
	return lo, nil
}

// notExistsIssued is the check that every ticket was issued as
// PostgreSQL plans it linearly: NOT IN over a subquery is a hashed
// subplan only while the subquery fits in work_mem and a quadratic scan
// past it; NOT EXISTS is an anti-join (hashed, spilling to disk).
var notExistsIssued = [2]string{"t.id NOT IN (SELECT e.ticket_id FROM events e WHERE e.type = 'ISSUED')",
	"NOT EXISTS (SELECT 1 FROM events e WHERE e.ticket_id = t.id AND e.type = 'ISSUED')"}

// checkQuery is a check's query as the dialect runs it.
func (d *Dialect) checkQuery(q string) string {
	if d.Name == "postgres" {
		return strings.Replace(q, notExistsIssued[0], notExistsIssued[1], 1)
	}
	return q
}

// CheckQueries are the queries of d's checks of every day as Check sends
// them on a schema with purge floors, by check name, for the plan tests.
func (d *Dialect) CheckQueries() []NamedStmt {
	var out []NamedStmt
	for _, c := range floored(slices.Concat(checks, eventChecks, bookingChecks)) {
		out = append(out, NamedStmt{Name: c.name, Stmt: Stmt{SQL: d.checkQuery(c.query)}})
	}
	return out
}
