package sqlstore

import (
	"context"
	"strings"

	"github.com/nowserving/nowserving/queue"
)

// AppendEvents gives evs the site's next len(evs) versions, in order, with
// one version bump and one multi-row insert: a group-commit batch holds the
// site's version row only from here to its commit.
func (t *tx) AppendEvents(ctx context.Context, site string, evs []*queue.Event) error {
	if len(evs) == 0 {
		return nil
	}
	n := int64(len(evs))
	var last int64
	if t.s.d.Upsert == OnDuplicateKey {
		res, err := t.exec(ctx, "INSERT INTO site_versions (site, version) VALUES (?, LAST_INSERT_ID(?))"+
			" ON DUPLICATE KEY UPDATE version = LAST_INSERT_ID(version + ?)", site, n, n)
		if err == nil {
			last, err = res.LastInsertId()
		}
		if err != nil {
			return t.wrap("next event versions", err)
		}
	} else {
		q := t.s.d.Rebind("INSERT INTO site_versions (site, version) VALUES (?, ?) ON CONFLICT (site)" +
			" DO UPDATE SET version = site_versions.version + ? RETURNING version")
		if err := t.queryRow(ctx, q, site, n, n).Scan(&last); err != nil {
			return t.wrap("next event versions", err)
		}
	}
	var b strings.Builder
	b.WriteString("INSERT INTO events (" + eventCols + ") VALUES ")
	args := make([]any, 0, 20*len(evs))
	for i, e := range evs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
		e.Site, e.Version = site, last-n+1+int64(i)
		args = append(args, e.Site, e.Version, string(e.Type), e.TicketID, e.Number, e.Service,
			string(e.Class), string(e.Status), e.Counter, e.Actor, e.Detail, ms(e.At), e.CallCount,
			e.Issuer, e.Day, string(e.From), e.FromQueue, e.FromCounter, e.Waited.Milliseconds(), e.ServiceTime.Milliseconds())
	}
	if _, err := t.execText(ctx, t.s.d.Rebind(b.String()), args...); err != nil {
		return t.wrap("append events", err)
	}
	return nil
}
