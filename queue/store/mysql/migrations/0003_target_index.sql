-- Tickets transferred to a counter are looked up by counter across every
-- queue on each call-next (FOR UPDATE SKIP LOCKED): without an index in the
-- order of its ORDER BY, InnoDB scans and locks every waiting ticket of the
-- day.
CREATE INDEX tickets_target ON tickets (site, day, status, target_counter, rnk, sort_key);
