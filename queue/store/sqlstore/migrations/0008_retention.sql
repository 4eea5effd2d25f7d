-- Retention (issue 23). The words in double braces are the dialect's (see
-- 0001_init.sql).

-- Stored request results expire by age (retention.requests): the purge
-- takes the oldest first, by this index, in small batches.
CREATE INDEX requests_at ON requests (at);

-- One row per maintenance job that one daemon at a time runs (the purge):
-- holder is the daemon holding it until until_ms; another daemon takes it
-- over only once that has passed.
CREATE TABLE leases (
    name     TEXT    NOT NULL PRIMARY KEY,
    holder   TEXT    NOT NULL,
    until_ms {{int64}} NOT NULL
);

-- Where a site's kept detail begins once the purge removed older days:
-- version is its oldest kept event (the event log is gapless from there),
-- day the first service day whose tickets keep all their events. `check`
-- starts there. No row: nothing was purged.
CREATE TABLE purge_floors (
    site    TEXT    NOT NULL PRIMARY KEY,
    version {{int64}} NOT NULL,
    day     TEXT    NOT NULL
);
