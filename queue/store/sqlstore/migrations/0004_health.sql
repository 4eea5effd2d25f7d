-- /readyz proves the store can write by upserting its daemon's row here in
-- a transaction (a read-only file or server, a full disk or a hung server
-- fail it). The words in double braces are the dialect's (see 0001_init.sql).
-- daemon names the daemon (host and configured protocol address), so
-- daemons sharing a database do not contend for one row.
CREATE TABLE health (
    daemon    TEXT    NOT NULL PRIMARY KEY,
    probed_ms {{int64}} NOT NULL
);
