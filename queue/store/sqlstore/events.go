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
	if _, err := t.exec(ctx, t.s.q.lockSites(sites)); err != nil {
		return t.wrap(fmt.Sprintf("lock %d sites", len(sites)), err)
	}
	return nil
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
	last, err := t.increment(ctx, t.s.q.nextVersions(site, n))
	if err != nil {
		return t.wrap("next event versions", err)
	}
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
