-- Appointments (issue 11): bookable slots, created ahead by the daemon, and
-- the bookings in them. Every time is unix milliseconds, 0 = not set. The
-- words in double braces are the dialect's (see 0001_init.sql).

-- A slot's places: booked counts the bookings holding one (HELD, BOOKED,
-- CHECKED_IN, MISSED). A booking takes a place with one conditional UPDATE
-- (booked < capacity); the CHECK is the last line of defence.
CREATE TABLE slots (
    id       {{id}},
    site     TEXT    NOT NULL,
    resource TEXT    NOT NULL,
    start_at BIGINT  NOT NULL,
    end_at   BIGINT  NOT NULL,
    capacity INTEGER NOT NULL,
    booked   INTEGER NOT NULL DEFAULT 0,
    closed   INTEGER NOT NULL DEFAULT 0,
    CONSTRAINT slots_places CHECK (booked >= 0 AND booked <= capacity)
);
-- Generation is idempotent: a rerun never creates a slot twice.
CREATE UNIQUE INDEX slots_start_uq ON slots (site, resource, start_at);
CREATE INDEX slots_day ON slots (site, start_at);

CREATE TABLE bookings (
    id         {{id}},
    site       TEXT    NOT NULL,
    resource   TEXT    NOT NULL,
    slot_id    BIGINT  NOT NULL REFERENCES slots (id),
    start_at   BIGINT  NOT NULL,
    end_at     BIGINT  NOT NULL,
    patient    TEXT    NOT NULL,
    code       TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    held_until BIGINT  NOT NULL DEFAULT 0,
    ticket_id  BIGINT  NOT NULL DEFAULT 0,
    number     TEXT    NOT NULL DEFAULT '',
    created_at BIGINT  NOT NULL DEFAULT 0,
    updated_at BIGINT  NOT NULL DEFAULT 0,
    device     TEXT    NOT NULL DEFAULT '',
    idem_key   TEXT    NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX bookings_code_uq ON bookings (site, code);
-- At most one booking holding a place per patient per slot.
CREATE UNIQUE INDEX bookings_patient_slot_uq ON bookings (slot_id, patient)
    WHERE status IN ('HELD', 'BOOKED', 'CHECKED_IN', 'MISSED');
CREATE INDEX bookings_patient ON bookings (site, patient, start_at);
CREATE INDEX bookings_status ON bookings (site, status, end_at);
CREATE INDEX bookings_slot ON bookings (slot_id);

-- One row per patient of a site, upserted (and so locked) by every
-- booking of the patient: two bookings of one patient serialise on it, and
-- the overlap check of the second sees the first.
CREATE TABLE patient_locks (
    site    TEXT   NOT NULL,
    patient TEXT   NOT NULL,
    at      BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (site, patient)
);

-- Booking events name their booking and slot.
ALTER TABLE events ADD COLUMN booking_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN slot_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN resource TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN slot_at BIGINT NOT NULL DEFAULT 0;
