-- What a reader of the event log needs without remembering tickets (see
-- queue.Event): the issuing service, the ticket's service day, its status,
-- queue and counter before the change, its wait so far and, on DONE, its
-- service time. Events written before this migration have them empty.
ALTER TABLE events ADD COLUMN issuer TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN day TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN from_status TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN from_queue TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN from_counter TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN waited_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN service_ms BIGINT NOT NULL DEFAULT 0;
-- A ticket's first call, so its wait (issue to first call) survives a
-- re-entry or transfer that calls it again.
ALTER TABLE tickets ADD COLUMN first_called_at BIGINT NOT NULL DEFAULT 0;
UPDATE tickets SET first_called_at = called_at WHERE called_at > 0;
