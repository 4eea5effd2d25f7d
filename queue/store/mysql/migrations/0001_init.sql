-- nowserving schema, MySQL 8 / MariaDB 10.6+. Every time is unix
-- milliseconds, 0 = not yet. MySQL commits DDL at once, so every statement
-- here may run twice: CREATE ... IF NOT EXISTS, indexes inside the table.
-- Binary collation: codes compare as on PostgreSQL and SQLite.

-- service issued the number (its day counter gave seq); queue is the
-- service whose queue the ticket waits in now (a transfer keeps the number).
-- tickets_head has the columns, in order and direction, of Head's WHERE and
-- ORDER BY (the primary key id is appended by InnoDB): anything else makes
-- InnoDB lock every row it scans.
CREATE TABLE IF NOT EXISTS tickets (
    id             BIGINT       NOT NULL AUTO_INCREMENT,
    site           VARCHAR(64)  NOT NULL,
    service        VARCHAR(64)  NOT NULL,
    queue          VARCHAR(64)  NOT NULL,
    day            CHAR(10)     NOT NULL,
    seq            INT          NOT NULL,
    number         VARCHAR(32)  NOT NULL,
    class          VARCHAR(16)  NOT NULL,
    status         VARCHAR(16)  NOT NULL,
    rnk            INT          NOT NULL DEFAULT 0,
    sort_key       BIGINT       NOT NULL DEFAULT 0,
    counter        VARCHAR(64)  NOT NULL DEFAULT '',
    target_counter VARCHAR(64)  NOT NULL DEFAULT '',
    call_count     INT          NOT NULL DEFAULT 0,
    noshow_count   INT          NOT NULL DEFAULT 0,
    issued_at      BIGINT       NOT NULL DEFAULT 0,
    waiting_since  BIGINT       NOT NULL DEFAULT 0,
    called_at      BIGINT       NOT NULL DEFAULT 0,
    serving_at     BIGINT       NOT NULL DEFAULT 0,
    finished_at    BIGINT       NOT NULL DEFAULT 0,
    device         VARCHAR(128) NOT NULL DEFAULT '',
    idem_key       VARCHAR(128) NOT NULL DEFAULT '',
    PRIMARY KEY (id),
    UNIQUE KEY tickets_seq_uq (site, service, day, seq),
    KEY tickets_head (site, day, queue, status, target_counter, rnk, sort_key),
    KEY tickets_wait (site, day, queue, status, target_counter, waiting_since),
    KEY tickets_number (site, day, number),
    KEY tickets_status (site, status, day)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS day_counters (
    site    VARCHAR(64) NOT NULL,
    service VARCHAR(64) NOT NULL,
    day     CHAR(10)    NOT NULL,
    last    INT         NOT NULL,
    PRIMARY KEY (site, service, day)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS site_versions (
    site    VARCHAR(64) NOT NULL,
    version BIGINT      NOT NULL,
    PRIMARY KEY (site)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS events (
    site      VARCHAR(64)  NOT NULL,
    version   BIGINT       NOT NULL,
    type      VARCHAR(32)  NOT NULL,
    ticket_id BIGINT       NOT NULL DEFAULT 0,
    number    VARCHAR(32)  NOT NULL DEFAULT '',
    service   VARCHAR(64)  NOT NULL DEFAULT '',
    class     VARCHAR(16)  NOT NULL DEFAULT '',
    status    VARCHAR(16)  NOT NULL DEFAULT '',
    counter   VARCHAR(64)  NOT NULL DEFAULT '',
    actor     VARCHAR(128) NOT NULL DEFAULT '',
    detail    TEXT         NOT NULL,
    at        BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (site, version)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS counters (
    site      VARCHAR(64) NOT NULL,
    id        VARCHAR(64) NOT NULL,
    mode      VARCHAR(16) NOT NULL,
    ticket_id BIGINT      NOT NULL DEFAULT 0,
    since     BIGINT      NOT NULL DEFAULT 0,
    PRIMARY KEY (site, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS requests (
    device   VARCHAR(128) NOT NULL,
    idem_key VARCHAR(128) NOT NULL,
    op       VARCHAR(64)  NOT NULL,
    result   LONGBLOB,
    at       BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (device, idem_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS service_streaks (
    site    VARCHAR(64) NOT NULL,
    service VARCHAR(64) NOT NULL,
    n       INT         NOT NULL,
    PRIMARY KEY (site, service)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
