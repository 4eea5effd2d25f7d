-- nowserving schema, SQLite and PostgreSQL. Every time is unix milliseconds,
-- 0 = not yet. A word in double braces is spelt by the dialect (see
-- sqlstore.Dialect.Words): id, an identity primary key; int, a 32-bit
-- integer; int64, a 64-bit integer; bytes, a byte string; without_rowid,
-- SQLite's clustered table.

-- service issued the number (its day counter gave seq); queue is the
-- service whose queue the ticket waits in now (a transfer keeps the number).
CREATE TABLE tickets (
    id             {{id}},
    site           TEXT    NOT NULL,
    service        TEXT    NOT NULL,
    queue          TEXT    NOT NULL,
    day            TEXT    NOT NULL,
    seq            INTEGER NOT NULL,
    number         TEXT    NOT NULL,
    class          TEXT    NOT NULL,
    status         TEXT    NOT NULL,
    rnk            INTEGER NOT NULL DEFAULT 0,
    sort_key       {{int64}} NOT NULL DEFAULT 0,
    counter        TEXT    NOT NULL DEFAULT '',
    target_counter TEXT    NOT NULL DEFAULT '',
    call_count     INTEGER NOT NULL DEFAULT 0,
    noshow_count   INTEGER NOT NULL DEFAULT 0,
    issued_at      {{int64}} NOT NULL DEFAULT 0,
    waiting_since  {{int64}} NOT NULL DEFAULT 0,
    called_at      {{int64}} NOT NULL DEFAULT 0,
    serving_at     {{int64}} NOT NULL DEFAULT 0,
    finished_at    {{int64}} NOT NULL DEFAULT 0,
    device         TEXT    NOT NULL DEFAULT '',
    idem_key       TEXT    NOT NULL DEFAULT ''
);

-- The last line of defence against a number issued twice (DESIGN §6.1).
CREATE UNIQUE INDEX tickets_seq_uq ON tickets (site, service, day, seq);
-- Head: the same columns and order as its WHERE and ORDER BY; partial, so a
-- ticket leaves the index when it is called.
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
){{without_rowid}};

CREATE TABLE site_versions (
    site    TEXT    NOT NULL PRIMARY KEY,
    version {{int64}} NOT NULL
){{without_rowid}};

CREATE TABLE events (
    site      TEXT    NOT NULL,
    version   {{int64}} NOT NULL,
    type      TEXT    NOT NULL,
    ticket_id {{int64}} NOT NULL DEFAULT 0,
    number    TEXT    NOT NULL DEFAULT '',
    service   TEXT    NOT NULL DEFAULT '',
    class     TEXT    NOT NULL DEFAULT '',
    status    TEXT    NOT NULL DEFAULT '',
    counter   TEXT    NOT NULL DEFAULT '',
    actor     TEXT    NOT NULL DEFAULT '',
    detail    TEXT    NOT NULL DEFAULT '',
    at        {{int64}} NOT NULL DEFAULT 0,
    PRIMARY KEY (site, version)
){{without_rowid}};

CREATE TABLE counters (
    site      TEXT    NOT NULL,
    id        TEXT    NOT NULL,
    mode      TEXT    NOT NULL,
    ticket_id {{int64}} NOT NULL DEFAULT 0,
    since     {{int64}} NOT NULL DEFAULT 0,
    PRIMARY KEY (site, id)
){{without_rowid}};

CREATE TABLE requests (
    device   TEXT    NOT NULL,
    idem_key TEXT    NOT NULL,
    op       TEXT    NOT NULL,
    result   {{bytes}},
    at       {{int64}} NOT NULL DEFAULT 0,
    PRIMARY KEY (device, idem_key)
){{without_rowid}};

CREATE TABLE service_streaks (
    site    TEXT    NOT NULL,
    service TEXT    NOT NULL,
    n       INTEGER NOT NULL,
    PRIMARY KEY (site, service)
){{without_rowid}};
