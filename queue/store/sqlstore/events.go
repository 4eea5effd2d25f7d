package sqlstore

import (
	"context"
	"fmt"

	"github.com/nowserving/nowserving/queue"
)

// LockSites takes the sites' version row locks: the version bump of
// AppendEvents with nothing to add, for every site in one multi-row upsert,
// whose rows the database locks in the order of its VALUES.
func (t *tx) LockSites(ctx context.Context, sites []string) error {
	if len(sites) == 0 {
		return nil
	}
	action := fmt.Sprintf("lock %d sites", len(sites))
	st := t.s.q.lockSites(sites, t.s.d.MergeWrites)
	if !t.s.d.MergeWrites {
		if _, err := t.exec(ctx, st); err != nil {
			return t.wrap(action, err)
		}
		return nil
	}
	// The versions come back with the locks: AppendEvents numbers the
	// events from them and bumps the row with the events' insert.
	rows, err := rowsOf(ctx, t, action, st, func(row scanner, v *siteVersion) error { return row.Scan(&v.site, &v.version) })
	if err != nil {
		return err
	}
	if t.versions == nil {
		t.versions = make(map[string]int64, len(rows))
	}
	for _, v := range rows {
		t.versions[v.site] = v.version
	}
	return nil
}

// movedTo notes that the version of site is last now, where LockSites
// read it.
func (t *tx) movedTo(site string, last int64) {
	if _, ok := t.versions[site]; ok {
		t.versions[site] = last
	}
}

type siteVersion struct {
	site    string
	version int64
}

// AppendEvents gives evs the site's next len(evs) versions, in order, with
// one version bump and one multi-row insert: a group-commit batch holds the
// site's version row only from here to its commit. The events the store's
// outbox routes match get their outbox rows in the same transaction (one
// more multi-row insert), so a notification exists exactly when its event
// committed.
func (t *tx) AppendEvents(ctx context.Context, site string, evs []*queue.Event) error {
	if len(evs) == 0 {
		return nil
	}
	n := int64(len(evs))
	if v, ok := t.versions[site]; ok && t.merging() {
		return t.appendLocked(ctx, site, v, evs)
	}
	last, err := t.increment(ctx, t.s.q.nextVersions(site, n))
	if err != nil {
		return t.wrap("next event versions", err)
	}
	t.movedTo(site, last)
	for i, e := range evs {
		e.Site, e.Version = site, last-n+1+int64(i)
	}
	err = t.pieces(len(evs), func(from, to int) error {
		if _, err := t.exec(ctx, t.s.q.insertEvents(evs[from:to])); err != nil {
			return t.wrap("append events", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return t.appendOutbox(ctx, evs)
}

// appendLocked is AppendEvents for a site whose version row LockSites
// locked in this transaction at version v (Dialect.MergeWrites): the
// events take the versions after it, and the row's bump, the events and
// their outbox rows wait to go with the transaction's other writes.
func (t *tx) appendLocked(ctx context.Context, site string, v int64, evs []*queue.Event) error {
	n := int64(len(evs))
	for i, e := range evs {
		e.Site, e.Version = site, v+1+int64(i)
	}
	t.versions[site] = v + n
	if err := t.later(ctx, pendingWrite{st: t.s.q.bumpVersion(site, n), action: "next event versions", site: site}); err != nil {
		return err
	}
	if err := t.later(ctx, pendingWrite{st: t.s.q.insertEvents(evs), action: "append events"}); err != nil {
		return err
	}
	rows, err := t.outboxRows(evs)
	if err != nil || len(rows) == 0 {
		return err
	}
	return t.later(ctx, pendingWrite{st: t.s.q.insertOutbox(rows), action: "append outbox rows"})
}
