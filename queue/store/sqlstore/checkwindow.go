package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
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
//
// A check of every day reads a long history the same way, in chunks of
// checkChunkDays days (checkPasses): a chunk ends at toDay, whose tickets
// it reads, and before toVersion, the first event a margin after toDay's
// first ticket, so every event it reads has its ticket and every ticket
// before toDay its ISSUED; the next chunk starts a margin before toDay's
// first ticket, so the two overlap and every event is compared with the
// one before it.
//
// On PostgreSQL (joins) the inner joins of the window's events to their
// tickets join the window's tickets too: joined by id to the whole table,
// it hashes every ticket of the history. The events they keep, ISSUED
// ones and those of the window's tickets, have their ticket there (the
// window's events start a margin before the tickets of its first day).
type checkWindow struct {
	sites map[string]windowFrom
	joins bool
}

// newWindow is a window of no site yet, as d reads it.
func (d *Dialect) newWindow() *checkWindow {
	return &checkWindow{sites: map[string]windowFrom{}, joins: d.Name == "postgres"}
}

type windowFrom struct {
	version          int64
	ticketDay, floor string // ticketDay "": every day up to toDay
	toDay            string // "": no end
	toVersion        int64  // 0: no end
}

// windowTable finds a reference to the tickets or events table that a
// check reads from (FROM, or JOIN of events), with its alias; a JOIN of
// tickets is a look-up by id and stays.
var windowTable = regexp.MustCompile(`\b(FROM tickets|FROM events|JOIN events)\b( [a-z]\b)?`)

// joinedTickets finds a join of tickets with its alias; a LEFT JOIN (of
// events that may have lost their ticket) stays a look-up by id.
var joinedTickets = regexp.MustCompile(`\b(LEFT )?JOIN tickets ([a-z])\b`)

// issuedFrom is the text of "every ticket was issued" (floored) that a
// chunk's end edits: only the tickets of days before toDay are held to
// have their ISSUED among the chunk's events.
const issuedFrom = "WHERE t.day >= COALESCE(f.day, '')"

// edit makes q read the window: the tables become the window's rows and
// purge_floors the window's floors. The sites are those with events
// (site_versions): tickets of a site without any are checked by a check
// of every day only.
func (w *checkWindow) edit(q string) string {
	sites := slices.Sorted(maps.Keys(w.sites))
	var tk, ev, fl, ends []string
	for _, s := range sites {
		f := w.sites[s]
		t := "site = " + quote(s)
		if f.ticketDay != "" {
			t += fmt.Sprintf(" AND day >= '%s'", f.ticketDay)
		}
		e := fmt.Sprintf("site = %s AND version >= %d", quote(s), f.version)
		if f.toDay != "" {
			t += fmt.Sprintf(" AND day <= '%s'", f.toDay)
			e += fmt.Sprintf(" AND version < %d", f.toVersion)
			ends = append(ends, fmt.Sprintf("(t.site <> %s OR t.day < '%s')", quote(s), f.toDay))
		}
		tk, ev = append(tk, "("+t+")"), append(ev, "("+e+")")
		fl = append(fl, fmt.Sprintf("SELECT %s AS site, %d AS version, '%s' AS day", quote(s), f.version, f.floor))
	}
	if len(fl) > 0 {
		q = strings.ReplaceAll(q, "purge_floors f", "("+strings.Join(fl, " UNION ALL ")+") f")
	}
	if len(ends) > 0 {
		q = strings.Replace(q, issuedFrom, issuedFrom+" AND "+strings.Join(ends, " AND "), 1)
	}
	if len(tk) == 0 {
		return q
	}
	q = windowTable.ReplaceAllStringFunc(q, func(m string) string {
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
		return fmt.Sprintf("%s (SELECT * FROM %s WHERE %s) %s", kw, table, cond, alias)
	})
	if !w.joins {
		return q
	}
	return joinedTickets.ReplaceAllStringFunc(q, func(m string) string {
		sub := joinedTickets.FindStringSubmatch(m)
		if sub[1] != "" {
			return m
		}
		return fmt.Sprintf("JOIN (SELECT * FROM tickets WHERE %s) %s", strings.Join(tk, " OR "), sub[2])
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
	w := t.s.d.newWindow()
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

// checkChunkDays is how many service days a chunk of a check of every
// day reads (checkPasses): a week of a hospital's 10,000 tickets a day
// is some 70,000 tickets and 280,000 events to group and sort.
const checkChunkDays = 7

// checkPasses are the windows a check of every day reads, one after the
// other in its snapshot, so that its queries sort and group a chunk of
// days at a time whatever the history: per site with events, its chunks
// of checkChunkDays days (a pass each), then one pass of every site's
// last days to today, where the checks of what is now (counters, the
// site's version, bookings) run. A nil window is no edit: a history no
// longer than a chunk, or one with a site that has tickets but no
// events, is read whole, in one pass.
func (t *tx) checkPasses(ctx context.Context, opts CheckOpts) ([]*checkWindow, error) {
	sites, err := t.rowsAsText(ctx, "SELECT site FROM site_versions ORDER BY site", 1, 0, nil)
	if err != nil {
		return nil, t.wrap("check: sites", err)
	}
	orphan, err := t.rowsAsText(ctx, "SELECT site FROM tickets WHERE site NOT IN (SELECT site FROM site_versions) LIMIT 1", 1, 1, nil)
	if err != nil || len(orphan) > 0 {
		return []*checkWindow{nil}, t.wrap("check: sites", err)
	}
	var passes []*checkWindow
	last := t.s.d.newWindow()
	for _, s := range sites {
		chunks, err := t.siteChunks(ctx, opts, s[0])
		if err != nil {
			return nil, err
		}
		for _, c := range chunks[:len(chunks)-1] {
			p := t.s.d.newWindow()
			p.sites[s[0]] = c
			passes = append(passes, p)
		}
		last.sites[s[0]] = chunks[len(chunks)-1]
	}
	if len(passes) == 0 {
		return []*checkWindow{nil}, nil
	}
	return append(passes, last), nil
}

// siteChunks are the chunks of a check of every day of site: from its
// first day with tickets, checkChunkDays days each, up to the last
// chunk, which ends today, open; the first reads everything before it.
func (t *tx) siteChunks(ctx context.Context, opts CheckOpts, site string) ([]windowFrom, error) {
	today, err := t.todayOf(ctx, opts, site)
	if err != nil {
		return nil, err
	}
	purged, err := t.purgeFloor(ctx, site)
	if err != nil {
		return nil, err
	}
	first, err := t.rowsAsText(ctx, t.s.d.Rebind("SELECT MIN(day) FROM tickets WHERE site = ?"), 1, 0, []any{site})
	if err != nil {
		return nil, t.wrap("check: first day", err)
	}
	lastFloor, err := dayBefore(today, checkChunkDays-1)
	if err != nil {
		return nil, err
	}
	lo := max(purged.Version, 1)
	from := windowFrom{version: lo, floor: purged.Day}
	var out []windowFrom
	for a := cmpOr(first, today); a < lastFloor; {
		b, err := dayBefore(a, -checkChunkDays)
		if err != nil {
			return nil, err
		}
		b = min(b, lastFloor)
		from.toDay = b
		if from.toVersion, err = t.versionAtDay(ctx, site, b, lo, ticketMargin); err != nil {
			return nil, err
		}
		out = append(out, from)
		from = windowFrom{floor: b}
		if from.ticketDay, err = dayBefore(b, 1); err != nil {
			return nil, err
		}
		if from.version, err = t.versionAtDay(ctx, site, b, lo, -ticketMargin); err != nil {
			return nil, err
		}
		a = b
	}
	return append(out, from), nil
}

// todayOf is site's today: CheckOpts.Today, else its newest day with
// tickets, else the UTC date.
func (t *tx) todayOf(ctx context.Context, opts CheckOpts, site string) (string, error) {
	if opts.Today != nil {
		if d := opts.Today(site); d != "" {
			return d, nil
		}
	}
	rows, err := t.rowsAsText(ctx, t.s.d.Rebind("SELECT MAX(day) FROM tickets WHERE site = ?"), 1, 0, []any{site})
	if err != nil {
		return "", t.wrap("check: newest day", err)
	}
	return cmpOr(rows, time.Now().UTC().Format(time.DateOnly)), nil
}

// siteWindow is the window of one site.
func (t *tx) siteWindow(ctx context.Context, opts CheckOpts, site string, days int) (windowFrom, error) {
	today, err := t.todayOf(ctx, opts, site)
	if err != nil {
		return windowFrom{}, err
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
	f.version, err = t.versionAtDay(ctx, site, f.floor, max(purged.Version, 1), -ticketMargin)
	return f, err
}

// versionAtDay is the first version of site from lo on whose event is at
// least off after the first ticket of the first day from day on with
// tickets (found by two look-ups of an index: the day, then its first
// ticket); with none, the first version after the newest event.
func (t *tx) versionAtDay(ctx context.Context, site, day string, lo int64, off time.Duration) (int64, error) {
	d := t.s.d
	first, err := t.rowsAsText(ctx, d.Rebind("SELECT MIN(day) FROM tickets WHERE site = ? AND day >= ?"), 1, 0, []any{site, day})
	if err != nil {
		return 0, t.wrap("check: first day of the window", err)
	}
	at := time.Now().UnixMilli() // no ticket in the window: no event of its tickets either
	if day = cmpOr(first, ""); day != "" {
		issued, err := t.rowsAsText(ctx, d.Rebind("SELECT MIN(issued_at) FROM tickets WHERE site = ? AND day = ?"), 1, 0, []any{site, day})
		if err != nil {
			return 0, t.wrap("check: first ticket of the window", err)
		}
		if v, err := strconv.ParseInt(cmpOr(issued, "0"), 10, 64); err == nil && v != 0 {
			at = v
		}
	}
	return t.firstVersionAt(ctx, site, lo, at+off.Milliseconds())
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

// CheckWindowQueries are the queries of d's checks as a chunk of a
// check of every day sends them (a window with an end), by check name,
// for the plan tests: each must read its days, not the site's history.
func (d *Dialect) CheckWindowQueries() []NamedStmt {
	w := d.newWindow()
	w.sites["s1"] = windowFrom{version: 1000, ticketDay: "2026-03-01", floor: "2026-03-02", toDay: "2026-03-09", toVersion: 2000}
	var out []NamedStmt
	for _, c := range floored(slices.Concat(checks, eventChecks, bookingChecks)) {
		out = append(out, NamedStmt{Name: c.name, Stmt: Stmt{SQL: w.edit(d.checkQuery(c.query))}})
	}
	return out
}
