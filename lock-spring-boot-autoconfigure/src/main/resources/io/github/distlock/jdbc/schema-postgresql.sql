-- distlock JDBC lock store, PostgreSQL 10+. Idempotent; safe to run from several instances at once.
-- For Flyway or Liquibase: copy it into a migration, replacing DISTRIBUTED_LOCK_ if you set
-- distributed-lock.jdbc.table-prefix.

CREATE TABLE IF NOT EXISTS DISTRIBUTED_LOCK_SESSION (
    SESSION_ID VARCHAR(36) NOT NULL PRIMARY KEY,
    OWNER TEXT NOT NULL,
    EXPIRES_AT BIGINT NOT NULL,
    LEASE_MILLIS BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS DISTRIBUTED_LOCK_LOCK_KEY (
    LOCK_ID CHAR(64) NOT NULL PRIMARY KEY,
    LOCK_KEY TEXT NOT NULL,
    -- The last fence issued for the key (epoch µs by the database's clock): the next is above it, also once the
    -- key has no entry left; the row stays 24 h after it. Tables of earlier versions lack it: the
    -- registry's schema initialisation adds it, or run
    -- ALTER TABLE DISTRIBUTED_LOCK_LOCK_KEY ADD COLUMN LAST_FENCE BIGINT NOT NULL DEFAULT 0;
    LAST_FENCE BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS DISTRIBUTED_LOCK_ENTRY (
    FENCE BIGINT NOT NULL DEFAULT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT PRIMARY KEY,
    LOCK_ID CHAR(64) NOT NULL REFERENCES DISTRIBUTED_LOCK_LOCK_KEY (LOCK_ID),
    SESSION_ID VARCHAR(36) NOT NULL REFERENCES DISTRIBUTED_LOCK_SESSION (SESSION_ID) ON DELETE CASCADE,
    ENTRY_NUMBER BIGINT NOT NULL,
    ENTRY_VALUE TEXT NOT NULL,
    UNIQUE (SESSION_ID, ENTRY_NUMBER)
);

CREATE INDEX IF NOT EXISTS DISTRIBUTED_LOCK_ENTRY_QUEUE ON DISTRIBUTED_LOCK_ENTRY (LOCK_ID, FENCE);

-- Before 2026-11-29 FENCE was an identity column, which a failover or a restore can rewind. The registry
-- now writes every fence itself, from the database's clock; the identity goes, so that instances of
-- earlier versions fail instead of taking fences from it, and rows written by hand get the clock too.
-- Skipped with a warning (done at a later run) if the table's lock is not granted within 2 s, or if
-- this user may not alter the table.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'DISTRIBUTED_LOCK_ENTRY'::regclass
            AND attname = 'fence' AND attidentity <> '') THEN
        SET LOCAL lock_timeout = '2s';
        ALTER TABLE DISTRIBUTED_LOCK_ENTRY ALTER COLUMN FENCE DROP IDENTITY IF EXISTS;
        ALTER TABLE DISTRIBUTED_LOCK_ENTRY ALTER COLUMN FENCE
            SET DEFAULT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT;
    END IF;
EXCEPTION WHEN lock_not_available OR insufficient_privilege THEN
    RAISE WARNING 'DISTRIBUTED_LOCK_ENTRY.FENCE stays an identity column until a later run of the script: %', SQLERRM;
END
$$;
