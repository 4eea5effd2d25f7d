-- A loss of acknowledged work a daemon found and repaired (queue.LossRecord):
-- the store stood at store_version while the daemon had seen known_version
-- (a node that became primary before it had the last commits, a restore
-- from a backup). Versions gap_from..gap_to were skipped, so no version is
-- given to two events; check accepts that gap and prints the record.
-- numbers and lost are lines of text: the day counters moved on, the
-- tickets not restored. IF NOT EXISTS: MySQL commits DDL at once.
CREATE TABLE IF NOT EXISTS lost_work (
    id            BIGINT       NOT NULL AUTO_INCREMENT,
    site          VARCHAR(64)  NOT NULL,
    at_ms         BIGINT       NOT NULL,
    daemon        VARCHAR(255) NOT NULL DEFAULT '',
    store_version BIGINT       NOT NULL,
    known_version BIGINT       NOT NULL,
    gap_from      BIGINT       NOT NULL DEFAULT 0,
    gap_to        BIGINT       NOT NULL DEFAULT 0,
    requests      INT          NOT NULL DEFAULT 0,
    tickets       INT          NOT NULL DEFAULT 0,
    events        INT          NOT NULL DEFAULT 0,
    numbers       TEXT         NOT NULL,
    lost          TEXT         NOT NULL,
    reason        TEXT         NOT NULL,
    PRIMARY KEY (id),
    KEY lost_work_site (site, gap_to)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
