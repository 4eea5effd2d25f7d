-- One ticket issue as the PostgreSQL store runs it (queue/store/sqlstore):
-- idempotency lookup, day counter upsert, ticket insert, event append with
-- the site version upsert, idempotency record. One transaction per ticket.
\set k random(1, 1000000000000)
BEGIN;
SELECT op, result FROM requests WHERE device = 'kiosk-' || :client_id AND idem_key = :k::text;
INSERT INTO day_counters (site, service, day, last) VALUES ('bench', 'A', '2026-11-30', 1) ON CONFLICT (site, service, day) DO UPDATE SET last = day_counters.last + 1 RETURNING last \gset
INSERT INTO tickets (site, service, queue, day, seq, number, class, status, rnk, sort_key, counter, target_counter, call_count, noshow_count, issued_at, waiting_since, called_at, serving_at, finished_at, device, idem_key) VALUES ('bench', 'A', 'A', '2026-11-30', :last, 'A' || lpad(:last::text, 6, '0'), 'normal', 'WAITING', 20, :last::bigint * 1048576, '', '', 0, 0, 1764464400000, 1764464400000, 0, 0, 0, 'kiosk-' || :client_id, :k::text) RETURNING id \gset
WITH v AS (INSERT INTO site_versions (site, version) VALUES ('bench', 1) ON CONFLICT (site) DO UPDATE SET version = site_versions.version + 1 RETURNING site, version) INSERT INTO events (site, version, type, ticket_id, number, service, class, status, counter, actor, detail, at) SELECT v.site, v.version, 'ISSUED', :id, 'A' || lpad(:last::text, 6, '0'), 'A', 'normal', 'WAITING', '', 'kiosk-' || :client_id, '', 1764464400000 FROM v RETURNING version;
INSERT INTO requests (device, idem_key, op, result, at) VALUES ('kiosk-' || :client_id, :k::text, 'issue', decode(repeat('7b', 420), 'hex'), 1764464400000);
END;
