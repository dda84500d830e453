package io.github.distlock.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * What differs between the databases the JDBC store supports: the database clock as epoch
 * milliseconds and microseconds, the upsert that takes a key's row lock, the schema script, and
 * whether waiters can be woken by {@code LISTEN/NOTIFY}. Everything else is plain SQL that all of
 * them run.
 */
enum JdbcDialect {

    POSTGRESQL("postgresql", "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT",
            "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000)::BIGINT", true) {
        @Override
        String lockKeyRow(String keys) {
            // An existing row is locked even though WHERE FALSE updates nothing: no new row version to
            // write, log and vacuum on every acquisition. One statement, so a concurrent delete of the
            // row cannot come between finding it and locking it.
            return "INSERT INTO " + keys + " (LOCK_ID, LOCK_KEY) VALUES (?, ?) "
                    + "ON CONFLICT (LOCK_ID) DO UPDATE SET LOCK_KEY = EXCLUDED.LOCK_KEY WHERE FALSE";
        }
    },

    /** MySQL 8.0+ and MariaDB 10.3+. */
    MYSQL("mysql", "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)",
            "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6))", false) {
        @Override
        String lockKeyRow(String keys) {
            // On a duplicate, InnoDB takes the row's exclusive lock before the (no-op) update.
            // LOCK_KEY = LOCK_KEY rather than VALUES(), deprecated since MySQL 8.0.20; the row lock is the same.
            return "INSERT INTO " + keys + " (LOCK_ID, LOCK_KEY) VALUES (?, ?) "
                    + "ON DUPLICATE KEY UPDATE LOCK_KEY = LOCK_KEY";
        }

        @Override
        String lockKeyRowReservingFence(String keys) {
            // On a duplicate, InnoDB takes the row's exclusive lock before the update, which reads the
            // last fence under that lock.
            return "INSERT INTO " + keys + " (LOCK_ID, LOCK_KEY, LAST_FENCE) VALUES (?, ?, " + nowMicros() + ") "
                    + "ON DUPLICATE KEY UPDATE LAST_FENCE = GREATEST(LAST_FENCE + 1, " + nowMicros() + ")";
        }
    },

    /** H2 2.x, whose clock is the transaction's start. */
    H2("h2", "CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000 AS BIGINT)",
            "CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000000 AS BIGINT)", false) {
        @Override
        String lockKeyRow(String keys) {
            return "MERGE INTO " + keys + " (LOCK_ID, LOCK_KEY) KEY (LOCK_ID) VALUES (?, ?)";
        }

        @Override
        String lockKeyRowReservingFence(String keys) {
            // The update locks the row; two that create it race, and the loser's unique violation is retried.
            return "MERGE INTO " + keys + " k USING (VALUES (CAST(? AS CHAR(64)), CAST(? AS CHARACTER VARYING))) "
                    + "v (LOCK_ID, LOCK_KEY) ON k.LOCK_ID = v.LOCK_ID "
                    + "WHEN MATCHED THEN UPDATE SET LAST_FENCE = GREATEST(k.LAST_FENCE + 1, " + nowMicros() + ") "
                    + "WHEN NOT MATCHED THEN INSERT (LOCK_ID, LOCK_KEY, LAST_FENCE) VALUES (v.LOCK_ID, v.LOCK_KEY, "
                    + nowMicros() + ")";
        }
    };

    private final String scriptName;

    private final String nowMillis;

    private final String nowMicros;

    private final boolean notifications;

    JdbcDialect(String scriptName, String nowMillis, String nowMicros, boolean notifications) {
        this.scriptName = scriptName;
        this.nowMillis = nowMillis;
        this.nowMicros = nowMicros;
        this.notifications = notifications;
    }

    /**
     * @param keys the name of the key table
     * @return a statement (lock id, escaped key) that creates the key's row if missing and holds its
     * row lock until the transaction ends, so that entries of one key are written one transaction
     * at a time
     */
    abstract String lockKeyRow(String keys);

    /**
     * @param keys the name of the key table
     * @return {@link #lockKeyRow}, which also sets the row's {@code LAST_FENCE} to the key's next
     * fence: the clock, or one above the last fence where the clock is behind it (a new row: the
     * clock); {@code null} on PostgreSQL, whose write of an entry computes and stores its fence in
     * the statement that inserts it
     */
    @Nullable String lockKeyRowReservingFence(String keys) {
        return null;
    }

    /** @return an SQL expression: the database's clock, epoch milliseconds */
    String nowMillis() {
        return this.nowMillis;
    }

    /**
     * @return an SQL expression: the database's clock, epoch microseconds, the floor of every fence
     * (they stay below {@code Long.MAX_VALUE >>> 10}, the most a store fence may be, until the year 2255)
     */
    String nowMicros() {
        return this.nowMicros;
    }

    /** @return whether waiters are woken by {@code LISTEN/NOTIFY} */
    boolean hasNotifications() {
        return this.notifications;
    }

    /** @return the class-path resource of the schema script, with {@value JdbcTables#DEFAULT_PREFIX} as the prefix */
    String schemaScript() {
        return "io/github/distlock/jdbc/schema-" + this.scriptName + ".sql";
    }

    /**
     * @param connection a connection to the database
     * @return its dialect
     * @throws SQLException if the metadata could not be read
     * @throws IllegalStateException if the database is none the store supports
     */
    static JdbcDialect of(Connection connection) throws SQLException {
        DatabaseMetaData metaData = connection.getMetaData();
        String product = metaData.getDatabaseProductName();
        int major = metaData.getDatabaseMajorVersion();
        int minor = metaData.getDatabaseMinorVersion();
        if (major == 5 && minor == 5) {
            // MySQL's driver calls MariaDB "MySQL 5.5.5-10.x": the real version follows.
            String version = metaData.getDatabaseProductVersion();
            java.util.regex.Matcher mariadb = java.util.regex.Pattern.compile("^5\\.5\\.5-(\\d+)\\.(\\d+)")
                .matcher(version);
            if (!mariadb.find()) {
                throw new IllegalStateException("The JDBC lock store needs MySQL 8.0 or MariaDB 10.3 or later, but the "
                        + "DataSource connects to " + product + " " + version);
            }
            return of("MariaDB", Integer.parseInt(mariadb.group(1)), Integer.parseInt(mariadb.group(2)));
        }
        return of(product, major, minor);
    }

    static JdbcDialect of(String product, int major, int minor) {
        String name = product.toLowerCase(Locale.ROOT);
        if (name.contains("postgres")) {
            requireVersion(product, major, minor, 10, 0);
            return POSTGRESQL;
        }
        if (name.contains("mariadb")) {
            requireVersion(product, major, minor, 10, 3);
            return MYSQL;
        }
        if (name.contains("mysql")) {
            requireVersion(product, major, minor, 8, 0);
            return MYSQL;
        }
        if (name.equals("h2")) {
            requireVersion(product, major, minor, 2, 0);
            return H2;
        }
        throw new IllegalStateException("The JDBC lock store supports PostgreSQL 10+, MySQL 8.0+, MariaDB 10.3+ and "
                + "H2 2.x, but the DataSource connects to " + product + " " + major + "." + minor);
    }

    private static void requireVersion(String product, int major, int minor, int minMajor, int minMinor) {
        if (major < minMajor || (major == minMajor && minor < minMinor)) {
            throw new IllegalStateException("The JDBC lock store needs " + product + " " + minMajor + "." + minMinor
                    + " or later, but the DataSource connects to " + product + " " + major + "." + minor);
        }
    }
}
