package io.github.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the PostgreSQL statements of the store rely on: several statements sent in one call run in
 * one transaction (the write of an entry and the release each send theirs at once, and the key
 * row's lock must last until the last statement ran), each with a snapshot of its own.
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
}
