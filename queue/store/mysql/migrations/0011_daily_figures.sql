-- Daily figures (issue 23): each finished service day of a site summed,
-- so a report of past days reads these rows and not the event log, and
-- they outlive the purge of the detail. kind is 'day' (the site's total;
-- its row marks the day summed), 'service', 'counter' or 'booking', id
-- the service code, the counter, or for the booking events of the day the
-- day of their slots and the resource ('2026-03-02 dr-li'); '' for 'day'.
-- figures is the row's figures as JSON (package report, type Figures);
-- summed_at is when the day was summed, unix milliseconds.
CREATE TABLE IF NOT EXISTS daily_figures (
    site      VARCHAR(64)  NOT NULL,
    day       VARCHAR(10)  NOT NULL,
    kind      VARCHAR(16)  NOT NULL,
    id        VARCHAR(64)  NOT NULL,
    figures   MEDIUMTEXT   NOT NULL,
    summed_at BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (site, day, kind, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
