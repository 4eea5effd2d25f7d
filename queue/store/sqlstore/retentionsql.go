package sqlstore

// purgeRequests deletes up to n request results saved before before,
// oldest first, by requests_at. MySQL takes ORDER BY and LIMIT on DELETE
// itself (and no LIMIT in an IN subquery); PostgreSQL has no DELETE ...
// LIMIT, so there the rows are picked by key in a subquery.
func (q *queries) purgeRequests(before int64, n int) Stmt {
	if q.d.Upsert == OnDuplicateKey {
		return Stmt{"DELETE FROM requests WHERE at < ? ORDER BY at LIMIT ?", []any{before, n}}
	}
	return Stmt{q.d.Rebind("DELETE FROM requests WHERE (device, idem_key) IN " +
		"(SELECT device, idem_key FROM requests WHERE at < ? ORDER BY at LIMIT ?)"), []any{before, n}}
}
