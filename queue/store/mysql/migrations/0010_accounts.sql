-- Staff accounts (issue 24): the people who log in to the browser pages.
-- hash is the password's argon2id hash in PHC form ($argon2id$v=19$...),
-- never the password; sites and counters are comma-separated lists (empty
-- sites: every site). Times are unix milliseconds.
-- IF NOT EXISTS: MySQL commits DDL at once, so this may run twice.
CREATE TABLE IF NOT EXISTS accounts (
    name       VARCHAR(64)   NOT NULL,
    hash       VARCHAR(255)  NOT NULL,
    role       VARCHAR(16)   NOT NULL,
    sites      VARCHAR(2000) NOT NULL DEFAULT '',
    counters   VARCHAR(2000) NOT NULL DEFAULT '',
    disabled   INT           NOT NULL DEFAULT 0,
    created_at BIGINT        NOT NULL DEFAULT 0,
    updated_at BIGINT        NOT NULL DEFAULT 0,
    PRIMARY KEY (name),
    CONSTRAINT accounts_role CHECK (role IN ('counter', 'supervisor', 'admin'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
