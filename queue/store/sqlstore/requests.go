package sqlstore

import (
	"context"
	"strings"

	"github.com/nowserving/nowserving/queue"
)

// LookupRequests reads the stored results of several requests in one query,
// so a group-commit batch pays one round trip for its idempotency checks.
func (t *tx) LookupRequests(ctx context.Context, keys []queue.RequestKey) (map[queue.RequestKey]queue.StoredRequest, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	var b strings.Builder
	b.WriteString("SELECT device, idem_key, op, result FROM requests WHERE ")
	args := make([]any, 0, 2*len(keys))
	for i, k := range keys {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString("(device = ? AND idem_key = ?)")
		args = append(args, k.Device, k.Key)
	}
	rows, err := t.queryText(ctx, t.s.d.Rebind(b.String()), args...)
	if err != nil {
		return nil, t.wrap("look up requests", err)
	}
	defer rows.Close()
	out := make(map[queue.RequestKey]queue.StoredRequest, len(keys))
	for rows.Next() {
		var k queue.RequestKey
		var r queue.StoredRequest
		if err := rows.Scan(&k.Device, &k.Key, &r.Op, &r.Result); err != nil {
			return nil, t.wrap("look up requests", err)
		}
		out[k] = r
	}
	if err := rows.Err(); err != nil {
		return nil, t.wrap("look up requests", err)
	}
	return out, nil
}

// SaveRequests records several request results in one multi-row insert.
func (t *tx) SaveRequests(ctx context.Context, reqs []queue.SavedRequest) error {
	if len(reqs) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("INSERT INTO requests (device, idem_key, op, result, at) VALUES ")
	args := make([]any, 0, 5*len(reqs))
	for i, r := range reqs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?)")
		res := r.Result
		if res == nil {
			res = []byte{}
		}
		args = append(args, r.Device, r.Key, r.Op, res, r.AtMs)
	}
	if _, err := t.execText(ctx, t.s.d.Rebind(b.String()), args...); err != nil {
		return t.wrap("save requests", err)
	}
	return nil
}
