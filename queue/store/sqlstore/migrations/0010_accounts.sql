-- Staff accounts (issue 24): the people who log in to the browser pages.
-- hash is the password's argon2id hash in PHC form ($argon2id$v=19$...),
-- never the password; sites and counters are comma-separated lists (empty
-- sites: every site). Times are unix milliseconds.
CREATE TABLE accounts (
    name       TEXT    NOT NULL PRIMARY KEY,
    hash       TEXT    NOT NULL,
    role       TEXT    NOT NULL,
    sites      TEXT    NOT NULL DEFAULT '',
    counters   TEXT    NOT NULL DEFAULT '',
    disabled   INTEGER NOT NULL DEFAULT 0,
    created_at {{int64}} NOT NULL DEFAULT 0,
    updated_at {{int64}} NOT NULL DEFAULT 0,
    CONSTRAINT accounts_role CHECK (role IN ('counter', 'supervisor', 'admin'))
);
