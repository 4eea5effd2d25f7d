package sqlstore

import (
	"context"

	"github.com/nowserving/nowserving/queue"
)

// LockSite takes the site's version row lock: the version bump of
// AppendEvents with nothing to add.
func (t *tx) LockSite(ctx context.Context, site string) error {
	if _, err := t.increment(ctx, t.s.q.nextVersions(site, 0)); err != nil {
		return t.wrap("lock site", err)
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
