-- distlock JDBC lock store, MySQL 8.0+ and MariaDB 10.3+ (InnoDB). Idempotent; safe to run from several
-- instances at once. For Flyway or Liquibase: copy it into a migration, replacing DISTRIBUTED_LOCK_ if you set
-- distributed-lock.jdbc.table-prefix. The registry writes FENCE itself; AUTO_INCREMENT numbers only rows written
-- without one (by hand, or by instances of versions before 2026-11-29), and follows the fences written.

CREATE TABLE IF NOT EXISTS DISTRIBUTED_LOCK_SESSION (
    SESSION_ID VARCHAR(36) NOT NULL PRIMARY KEY,
    OWNER TEXT NOT NULL,
    EXPIRES_AT BIGINT NOT NULL,
    LEASE_MILLIS BIGINT NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS DISTRIBUTED_LOCK_LOCK_KEY (
    LOCK_ID CHAR(64) NOT NULL PRIMARY KEY,
    LOCK_KEY MEDIUMTEXT NOT NULL,
    -- The last fence issued for the key (epoch µs by the database's clock): the next is above it, also once the
    -- key has no entry left; the row stays 24 h after it. Tables of earlier versions lack it: the
    -- registry's schema initialisation adds it, or run
    -- ALTER TABLE DISTRIBUTED_LOCK_LOCK_KEY ADD COLUMN LAST_FENCE BIGINT NOT NULL DEFAULT 0;
    LAST_FENCE BIGINT NOT NULL DEFAULT 0
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS DISTRIBUTED_LOCK_ENTRY (
    FENCE BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    LOCK_ID CHAR(64) NOT NULL,
    SESSION_ID VARCHAR(36) NOT NULL,
    ENTRY_NUMBER BIGINT NOT NULL,
    ENTRY_VALUE TEXT NOT NULL,
    UNIQUE KEY DISTRIBUTED_LOCK_ENTRY_NUMBER (SESSION_ID, ENTRY_NUMBER),
    KEY DISTRIBUTED_LOCK_ENTRY_QUEUE (LOCK_ID, FENCE),
    FOREIGN KEY (LOCK_ID) REFERENCES DISTRIBUTED_LOCK_LOCK_KEY (LOCK_ID),
    FOREIGN KEY (SESSION_ID) REFERENCES DISTRIBUTED_LOCK_SESSION (SESSION_ID) ON DELETE CASCADE
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
