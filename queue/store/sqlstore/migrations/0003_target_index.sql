-- Tickets transferred to a counter are looked up by counter across every
-- queue on each call-next: give that lookup its own index, in the order of
-- its ORDER BY, instead of a scan of the day's waiting tickets.
CREATE INDEX tickets_target ON tickets (site, day, target_counter, rnk, sort_key, id) WHERE status = 'WAITING';
