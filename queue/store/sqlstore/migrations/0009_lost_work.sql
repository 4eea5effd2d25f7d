-- A loss of acknowledged work a daemon found and repaired (queue.LossRecord):
-- the store stood at store_version while the daemon had seen known_version
-- (a standby promoted before it received the last commits, a restore from a
-- backup). Versions gap_from..gap_to were skipped, so no version is given to
-- two events; check accepts that gap and prints the record. numbers and
-- lost are lines of text: the day counters moved on, the tickets not
-- restored.
CREATE TABLE lost_work (
    id            {{id}},
    site          TEXT    NOT NULL,
    at_ms         {{int64}} NOT NULL,
    daemon        TEXT    NOT NULL DEFAULT '',
    store_version {{int64}} NOT NULL,
    known_version {{int64}} NOT NULL,
    gap_from      {{int64}} NOT NULL DEFAULT 0,
    gap_to        {{int64}} NOT NULL DEFAULT 0,
    requests      INTEGER NOT NULL DEFAULT 0,
    tickets       INTEGER NOT NULL DEFAULT 0,
    events        INTEGER NOT NULL DEFAULT 0,
    numbers       TEXT    NOT NULL,
    lost          TEXT    NOT NULL,
    reason        TEXT    NOT NULL
);
CREATE INDEX lost_work_site ON lost_work (site, gap_to);
