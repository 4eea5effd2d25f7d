package sqlstore

import (
	"context"
	"fmt"

	"github.com/nowserving/nowserving/queue"
)

// LookupRequests reads the stored results of several requests in one query,
// so a group-commit batch pays one round trip for its idempotency checks.
func (t *tx) LookupRequests(ctx context.Context, keys []queue.RequestKey) (map[queue.RequestKey]queue.StoredRequest, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	out := make(map[queue.RequestKey]queue.StoredRequest, len(keys))
	err := t.pieces(len(keys), func(from, to int) error {
		rows, err := t.query(ctx, t.s.q.lookupRequests(keys[from:to]))
		if err != nil {
			return t.wrap("look up requests", err)
		}
		defer rows.Close()
		for rows.Next() {
			var k queue.RequestKey
			var r queue.StoredRequest
			if err := rows.Scan(&k.Device, &k.Key, &r.Op, &r.Result); err != nil {
				return t.wrap("look up requests", err)
			}
			if r.Result, err = unpackResult(r.Result); err != nil {
				return fmt.Errorf("%s: look up request %q of %s: %w", t.s.d.Name, k.Key, k.Device, err)
			}
			out[k] = r
		}
		if err := rows.Err(); err != nil {
			return t.wrap("look up requests", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SaveRequests records several request results in one multi-row insert,
// each result compressed (see packResult).
func (t *tx) SaveRequests(ctx context.Context, reqs []queue.SavedRequest) error {
	if len(reqs) == 0 {
		return nil
	}
	packed := make([]queue.SavedRequest, len(reqs))
	for i, r := range reqs {
		r.Result = packResult(r.Result)
		packed[i] = r
	}
	if t.merging() {
		return t.later(ctx, pendingWrite{st: t.s.q.saveRequests(packed), action: "save requests"})
	}
	return t.pieces(len(packed), func(from, to int) error {
		if _, err := t.exec(ctx, t.s.q.saveRequests(packed[from:to])); err != nil {
			return t.wrap("save requests", err)
		}
		return nil
	})
}
