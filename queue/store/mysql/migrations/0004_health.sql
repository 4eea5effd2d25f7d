-- /readyz proves the store can write by upserting its daemon's row here in
-- a transaction (a read-only server, a full disk or a hung server fail it).
-- daemon names the daemon (host and configured protocol address), so
-- daemons sharing a database, or Galera nodes, do not contend for one row.
-- IF NOT EXISTS: MySQL commits DDL at once, so this may run twice.
CREATE TABLE IF NOT EXISTS health (
    daemon    VARCHAR(255) NOT NULL,
    probed_ms BIGINT       NOT NULL,
    PRIMARY KEY (daemon)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
