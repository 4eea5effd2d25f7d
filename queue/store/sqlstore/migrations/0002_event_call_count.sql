-- How many times the ticket had been called when the event happened, so a
-- display can show "A023 (call 2)" for a recall.
ALTER TABLE events ADD COLUMN call_count INTEGER NOT NULL DEFAULT 0;
