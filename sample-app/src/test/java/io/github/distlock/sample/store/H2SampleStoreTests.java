package io.github.distlock.sample.store;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.logging.Logger;

import javax.sql.DataSource;

import io.github.distlock.jdbc.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link JdbcSampleStore} on H2 in memory, and how it fails: a database that refuses connections
 * fails a call at once with the driver's reason, and one that never hands out a connection fails it
 * after {@code sample.store.timeout}; either way a {@link StoreUnavailableException}, which the
 * sample answers with 503.
 */
class H2SampleStoreTests extends AbstractJdbcSampleStoreTests {

    private static TestDatabase database;

    @BeforeAll
    static void startDatabase() {
        database = TestDatabase.start(TestDatabase.Kind.H2);
    }

    @AfterAll
    static void stopDatabase() {
        if (database != null) {
            database.close();
        }
    }

    @Override
    protected TestDatabase database() {
        return database;
    }

    @Test
    void aDatabaseThatRefusesConnectionsFailsCallsAtOnceWithItsReason() {
        JdbcSampleStore refused = store(new FakeDataSource(() -> {
            throw new SQLException("Connection to 127.0.0.1:5432 refused", "08001");
        }), "/sample/", TIMEOUT);
        assertUnavailableWithin(TIMEOUT, () -> refused.get("orders/1001"),
                "database request failed (read orders/1001): Connection to 127.0.0.1:5432 refused");
        assertUnavailableWithin(TIMEOUT, () -> refused.putFenced("orders/1001", "paid", 3), "(write orders/1001)");
    }

    @Test
    void aCallThatGetsNoConnectionFailsAfterTheStoreTimeout() {
        CountDownLatch never = new CountDownLatch(1);
        Duration timeout = Duration.ofMillis(500);
        JdbcSampleStore stuck = store(new FakeDataSource(() -> {
            try {
                never.await();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            throw new SQLException("interrupted while waiting for a connection");
        }), "/sample/", timeout);
        try {
            // The bound plus a margin for a loaded machine; nothing here could end it sooner.
            assertUnavailableWithin(timeout.plusSeconds(2), () -> stuck.get("orders/1001"),
                    "the database did not answer within 500 ms (read orders/1001)");
            assertUnavailableWithin(timeout.plusSeconds(2), () -> stuck.put("stock/sku-1", "3"),
                    "the database did not answer within 500 ms (write stock/sku-1)");
        }
        finally {
            never.countDown();
        }
    }

    /** A DataSource whose connections come from {@code connect}. */
    private record FakeDataSource(ConnectionSupplier connect) implements DataSource {

        @Override
        public Connection getConnection() throws SQLException {
            return this.connect.get();
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            return this.connect.get();
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {
        }

        @Override
        public void setLoginTimeout(int seconds) {
        }

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException();
        }

        @Override
        public <T> T unwrap(Class<T> type) throws SQLException {
            throw new SQLException("not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> type) {
            return false;
        }
    }

    @FunctionalInterface
    private interface ConnectionSupplier {

        Connection get() throws SQLException;
    }
}
