-- Appointments (issue 11): bookable slots, created ahead by the daemon, and
-- the bookings in them. Every time is unix milliseconds, 0 = not set. Every
-- statement may run twice (MySQL commits DDL at once).

-- A slot's places: booked counts the bookings holding one (HELD, BOOKED,
-- CHECKED_IN, MISSED). A booking takes a place with one conditional UPDATE
-- (booked < capacity); the CHECK (enforced by MariaDB 10.2+ and MySQL
-- 8.0.16+) is the last line of defence.
CREATE TABLE IF NOT EXISTS slots (
    id       BIGINT      NOT NULL AUTO_INCREMENT,
    site     VARCHAR(64) NOT NULL,
    resource VARCHAR(64) NOT NULL,
    start_at BIGINT      NOT NULL,
    end_at   BIGINT      NOT NULL,
    capacity INT         NOT NULL,
    booked   INT         NOT NULL DEFAULT 0,
    closed   INT         NOT NULL DEFAULT 0,
    PRIMARY KEY (id),
    UNIQUE KEY slots_start_uq (site, resource, start_at),
    KEY slots_day (site, start_at),
    CONSTRAINT slots_places CHECK (booked >= 0 AND booked <= capacity)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- active_slot is the slot while the booking holds a place, NULL after:
-- the unique key on it is PostgreSQL's partial unique index (InnoDB lets
-- NULLs repeat).
CREATE TABLE IF NOT EXISTS bookings (
    id          BIGINT       NOT NULL AUTO_INCREMENT,
    site        VARCHAR(64)  NOT NULL,
    resource    VARCHAR(64)  NOT NULL,
    slot_id     BIGINT       NOT NULL,
    start_at    BIGINT       NOT NULL,
    end_at      BIGINT       NOT NULL,
    patient     VARCHAR(128) NOT NULL,
    code        VARCHAR(16)  NOT NULL,
    status      VARCHAR(16)  NOT NULL,
    held_until  BIGINT       NOT NULL DEFAULT 0,
    ticket_id   BIGINT       NOT NULL DEFAULT 0,
    number      VARCHAR(32)  NOT NULL DEFAULT '',
    created_at  BIGINT       NOT NULL DEFAULT 0,
    updated_at  BIGINT       NOT NULL DEFAULT 0,
    device      VARCHAR(128) NOT NULL DEFAULT '',
    idem_key    VARCHAR(128) NOT NULL DEFAULT '',
    active_slot BIGINT AS (CASE WHEN status IN ('HELD', 'BOOKED', 'CHECKED_IN', 'MISSED') THEN slot_id END) STORED,
    PRIMARY KEY (id),
    UNIQUE KEY bookings_code_uq (site, code),
    UNIQUE KEY bookings_patient_slot_uq (active_slot, patient),
    KEY bookings_patient (site, patient, start_at),
    KEY bookings_status (site, status, end_at),
    KEY bookings_slot (slot_id),
    CONSTRAINT bookings_slot_fk FOREIGN KEY (slot_id) REFERENCES slots (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One row per patient of a site, upserted (and so locked) by every
-- booking of the patient: two bookings of one patient serialise on it, and
-- the overlap check of the second sees the first.
CREATE TABLE IF NOT EXISTS patient_locks (
    site    VARCHAR(64)  NOT NULL,
    patient VARCHAR(128) NOT NULL,
    at      BIGINT       NOT NULL DEFAULT 0,
    PRIMARY KEY (site, patient)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Booking events name their booking and slot.
ALTER TABLE events
    ADD COLUMN booking_id BIGINT      NOT NULL DEFAULT 0,
    ADD COLUMN slot_id    BIGINT      NOT NULL DEFAULT 0,
    ADD COLUMN resource   VARCHAR(64) NOT NULL DEFAULT '',
    ADD COLUMN slot_at    BIGINT      NOT NULL DEFAULT 0;
