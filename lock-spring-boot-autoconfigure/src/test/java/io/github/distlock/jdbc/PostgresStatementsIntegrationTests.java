package io.github.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What the PostgreSQL statements of the store rely on: several statements sent in one call run in
 * one transaction (the write of an entry and the release each send theirs at once, and the key
 * row's lock must last until the last statement ran), each with a snapshot of its own; the
 * statement that takes the key row's lock holds it until the transaction ends, also where the row
 * exists and is not rewritten.
 */
class PostgresStatementsIntegrationTests {

    private static TestDatabase database;

    @BeforeAll
    static void startDatabase() {
        database = TestDatabase.start(TestDatabase.Kind.POSTGRESQL);
    }

    @AfterAll
    static void stopDatabase() {
        database.close();
    }

    @Test
    void statementsSentInOneCallRunInOneTransactionEvenWithAutoCommit() throws Exception {
        HikariDataSource pool = database.pool("statements", 1);
        try (Connection connection = pool.getConnection()) {
            assertThat(connection.getAutoCommit()).isTrue();
            try (PreparedStatement both = connection.prepareStatement(
                    "SELECT txid_current(), ?::TEXT; SELECT txid_current(), statement_timestamp()")) {
                both.setString(1, "first");
                assertThat(both.execute()).isTrue();
                long first;
                try (ResultSet rows = both.getResultSet()) {
                    rows.next();
                    first = rows.getLong(1);
                }
                assertThat(both.getMoreResults()).isTrue();
                try (ResultSet rows = both.getResultSet()) {
                    rows.next();
                    assertThat(rows.getLong(1)).as("the second statement's transaction").isEqualTo(first);
                }
            }
            try (PreparedStatement next = connection.prepareStatement("SELECT txid_current()");
                    ResultSet rows = next.executeQuery()) {
                rows.next();
                assertThat(rows.getLong(1)).as("a later call's transaction").isGreaterThan(0);
            }
        }
    }

    @Test
    void theKeyRowStatementLocksAnExistingRowUntilTheTransactionEndsWithoutWritingANewVersion() throws Exception {
        HikariDataSource pool = database.pool("key-row", 2);
        JdbcSchema.initialize(pool, "KEY_ROW_");
        JdbcTables tables = new JdbcTables("KEY_ROW_", JdbcDialect.POSTGRESQL);
        String lockId = JdbcTables.lockId("orders");
        try (Connection holder = pool.getConnection(); Connection other = pool.getConnection()) {
            lockKeyRow(holder, tables, lockId);
            long created = rowVersion(other, tables, lockId);
            holder.setAutoCommit(false);
            lockKeyRow(holder, tables, lockId);
            try (Statement statement = other.createStatement()) {
                statement.execute("SET lock_timeout = '200ms'");
                assertThatExceptionOfType(SQLException.class).isThrownBy(() -> lockKeyRow(other, tables, lockId))
                    .satisfies(ex -> assertThat(ex.getSQLState()).as("lock not available").isEqualTo("55P03"));
                holder.commit();
                assertThat(rowVersion(other, tables, lockId)).as("the row's version after a transaction locked it")
                    .isEqualTo(created);
                lockKeyRow(other, tables, lockId);
                statement.execute("RESET lock_timeout");
            }
        }
        finally {
            pool.close();
        }
    }

    private static void lockKeyRow(Connection connection, JdbcTables tables, String lockId) throws SQLException {
        try (PreparedStatement statement = connection.prepareStatement(tables.lockKeyRow)) {
            statement.setString(1, lockId);
            statement.setString(2, "orders");
            statement.executeUpdate();
        }
    }

    /** @return the transaction that wrote the row's current version */
    private static long rowVersion(Connection connection, JdbcTables tables, String lockId) throws SQLException {
        try (PreparedStatement statement = connection
            .prepareStatement("SELECT xmin::TEXT::BIGINT FROM " + tables.keys + " WHERE LOCK_ID = ?")) {
            statement.setString(1, lockId);
            try (ResultSet row = statement.executeQuery()) {
                assertThat(row.next()).as("the key's row").isTrue();
                return row.getLong(1);
            }
        }
    }
}
