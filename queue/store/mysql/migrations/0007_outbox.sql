-- Notifications (issue 11): one row per event and receiver (a webhook, a
-- command) that the event's type is routed to, written by AppendEvents in
-- the transaction that appends the event, so nothing is sent for a change
-- that rolled back. The delivery worker claims due rows (due_at <= now,
-- FOR UPDATE SKIP LOCKED, moving due_at past its lease and counting the
-- attempt), deletes a row once delivered, and after a failure sets the next
-- attempt or, past the configured attempts, state 'dead'. event_id is the
-- stable id a receiver sees on every attempt (the same for every receiver
-- of one event); body is the JSON sent, fixed when the event was written.
-- outbox_due has the columns of the claim's WHERE and ORDER BY, in order
-- (InnoDB appends id), so the claim locks only the rows it takes.
-- IF NOT EXISTS: MySQL commits DDL at once, so this may run twice.
CREATE TABLE IF NOT EXISTS outbox (
    id         BIGINT        NOT NULL AUTO_INCREMENT,
    event_id   CHAR(36)      NOT NULL,
    receiver   VARCHAR(64)   NOT NULL,
    site       VARCHAR(64)   NOT NULL,
    version    BIGINT        NOT NULL,
    type       VARCHAR(32)   NOT NULL,
    body       MEDIUMTEXT    NOT NULL,
    state      VARCHAR(8)    NOT NULL DEFAULT 'pending',
    attempts   INT           NOT NULL DEFAULT 0,
    due_at     BIGINT        NOT NULL DEFAULT 0,
    created_at BIGINT        NOT NULL DEFAULT 0,
    last_at    BIGINT        NOT NULL DEFAULT 0,
    last_error VARCHAR(1000) NOT NULL DEFAULT '',
    PRIMARY KEY (id),
    CONSTRAINT outbox_state CHECK (state IN ('pending', 'dead')),
    CONSTRAINT outbox_attempts CHECK (attempts >= 0),
    UNIQUE KEY outbox_event_uq (site, version, receiver),
    KEY outbox_due (state, due_at),
    KEY outbox_dead (state, last_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
