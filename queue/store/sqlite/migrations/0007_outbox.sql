-- Notifications (issue 11): one row per event and receiver (a webhook, a
-- command) that the event's type is routed to, written by AppendEvents in
-- the transaction that appends the event, so nothing is sent for a change
-- that rolled back. The delivery worker claims due rows (due_at <= now,
-- moving due_at past its lease and counting the attempt), deletes a row
-- once delivered, and after a failure sets the next attempt or, past the
-- configured attempts, state 'dead'. event_id is the stable id a receiver
-- sees on every attempt (the same for every receiver of one event); body is
-- the JSON sent, fixed when the event was written.
CREATE TABLE outbox (
    id         INTEGER PRIMARY KEY,
    event_id   TEXT    NOT NULL,
    receiver   TEXT    NOT NULL,
    site       TEXT    NOT NULL,
    version    INTEGER NOT NULL,
    type       TEXT    NOT NULL,
    body       TEXT    NOT NULL,
    state      TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'dead')),
    attempts   INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    due_at     INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL DEFAULT 0,
    last_at    INTEGER NOT NULL DEFAULT 0,
    last_error TEXT    NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX outbox_event_uq ON outbox (site, version, receiver);
-- The claim: due pending rows, oldest first.
CREATE INDEX outbox_due ON outbox (due_at, id) WHERE state = 'pending';
CREATE INDEX outbox_dead ON outbox (last_at, id) WHERE state = 'dead';
