-- The least SQL a ticket issue needs, one transaction per ticket: the day
-- counter upsert and the ticket insert (no idempotency record, no event).
BEGIN;
INSERT INTO day_counters (site, service, day, last) VALUES ('bench', 'A', '2026-11-30', 1) ON CONFLICT (site, service, day) DO UPDATE SET last = day_counters.last + 1 RETURNING last \gset
INSERT INTO tickets (site, service, queue, day, seq, number, class, status, rnk, sort_key, counter, target_counter, call_count, noshow_count, issued_at, waiting_since, called_at, serving_at, finished_at, device, idem_key) VALUES ('bench', 'A', 'A', '2026-11-30', :last, 'A' || lpad(:last::text, 6, '0'), 'normal', 'WAITING', 20, :last::bigint * 1048576, '', '', 0, 0, 1764464400000, 1764464400000, 0, 0, 0, 'kiosk-' || :client_id, '') ;
END;
