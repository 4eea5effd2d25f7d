-- Retention (issue 23). IF NOT EXISTS: MySQL commits DDL at once, so the
-- tables may be created twice.

-- One row per maintenance job that one daemon at a time runs (the purge):
-- holder is the daemon holding it until until_ms; another daemon takes it
-- over only once that has passed.
CREATE TABLE IF NOT EXISTS leases (
    name     VARCHAR(64)  NOT NULL,
    holder   VARCHAR(255) NOT NULL,
    until_ms BIGINT       NOT NULL,
    PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Where a site's kept detail begins once the purge removed older days:
-- version is its oldest kept event (the event log is gapless from there),
-- day the first service day whose tickets keep all their events. `check`
-- starts there. No row: nothing was purged.
CREATE TABLE IF NOT EXISTS purge_floors (
    site    VARCHAR(64) NOT NULL,
    version BIGINT      NOT NULL,
    day     VARCHAR(10) NOT NULL,
    PRIMARY KEY (site)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Stored request results expire by age (retention.requests): the purge
-- takes the oldest first, by this index, in small batches. Last: the one
-- statement that cannot run twice.
CREATE INDEX requests_at ON requests (at);
