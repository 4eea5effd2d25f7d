-- How many times the ticket had been called when the event happened, so a
-- display can show "A023 (call 2)" for a recall. All three dialects: int is
-- the dialect's spelling of a 32-bit integer (see 0001_init.sql).
ALTER TABLE events ADD COLUMN call_count {{int}} NOT NULL DEFAULT 0;
