-- nowserving schema, SQLite. Every time is unix milliseconds, 0 = not yet.

-- service issued the number (its day counter gave seq); queue is the
-- service whose queue the ticket waits in now (a transfer keeps the number).
CREATE TABLE tickets (
    id             INTEGER PRIMARY KEY,
    site           TEXT    NOT NULL,
    service        TEXT    NOT NULL,
    queue          TEXT    NOT NULL,
    day            TEXT    NOT NULL,
    seq            INTEGER NOT NULL,
    number         TEXT    NOT NULL,
    class          TEXT    NOT NULL,
    status         TEXT    NOT NULL,
    rnk            INTEGER NOT NULL DEFAULT 0,
    sort_key       INTEGER NOT NULL DEFAULT 0,
    counter        TEXT    NOT NULL DEFAULT '',
    target_counter TEXT    NOT NULL DEFAULT '',
    call_count     INTEGER NOT NULL DEFAULT 0,
    noshow_count   INTEGER NOT NULL DEFAULT 0,
    issued_at      INTEGER NOT NULL DEFAULT 0,
    waiting_since  INTEGER NOT NULL DEFAULT 0,
    called_at      INTEGER NOT NULL DEFAULT 0,
    serving_at     INTEGER NOT NULL DEFAULT 0,
    finished_at    INTEGER NOT NULL DEFAULT 0,
    device         TEXT    NOT NULL DEFAULT '',
    idem_key       TEXT    NOT NULL DEFAULT ''
);

-- The last line of defence against a number issued twice (DESIGN §6.1).
CREATE UNIQUE INDEX tickets_seq_uq ON tickets (site, service, day, seq);
-- Head: the same columns and order as its WHERE and ORDER BY.
CREATE INDEX tickets_head ON tickets (site, day, queue, target_counter, rnk, sort_key, id) WHERE status = 'WAITING';
CREATE INDEX tickets_wait ON tickets (site, day, queue, target_counter, waiting_since, id) WHERE status = 'WAITING';
CREATE INDEX tickets_number ON tickets (site, day, number);
CREATE INDEX tickets_status ON tickets (site, status, day);

CREATE TABLE day_counters (
    site    TEXT    NOT NULL,
    service TEXT    NOT NULL,
    day     TEXT    NOT NULL,
    last    INTEGER NOT NULL,
    PRIMARY KEY (site, service, day)
) WITHOUT ROWID;

CREATE TABLE site_versions (
    site    TEXT    NOT NULL PRIMARY KEY,
    version INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE events (
    site      TEXT    NOT NULL,
    version   INTEGER NOT NULL,
    type      TEXT    NOT NULL,
    ticket_id INTEGER NOT NULL DEFAULT 0,
    number    TEXT    NOT NULL DEFAULT '',
    service   TEXT    NOT NULL DEFAULT '',
    class     TEXT    NOT NULL DEFAULT '',
    status    TEXT    NOT NULL DEFAULT '',
    counter   TEXT    NOT NULL DEFAULT '',
    actor     TEXT    NOT NULL DEFAULT '',
    detail    TEXT    NOT NULL DEFAULT '',
    at        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (site, version)
) WITHOUT ROWID;

CREATE TABLE counters (
    site      TEXT    NOT NULL,
    id        TEXT    NOT NULL,
    mode      TEXT    NOT NULL,
    ticket_id INTEGER NOT NULL DEFAULT 0,
    since     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (site, id)
) WITHOUT ROWID;

CREATE TABLE requests (
    device   TEXT    NOT NULL,
    idem_key TEXT    NOT NULL,
    op       TEXT    NOT NULL,
    result   BLOB,
    at       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (device, idem_key)
) WITHOUT ROWID;

CREATE TABLE service_streaks (
    site    TEXT    NOT NULL,
    service TEXT    NOT NULL,
    n       INTEGER NOT NULL,
    PRIMARY KEY (site, service)
) WITHOUT ROWID;
