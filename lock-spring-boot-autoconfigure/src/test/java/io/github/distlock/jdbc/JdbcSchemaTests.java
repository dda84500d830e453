package io.github.distlock.jdbc;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The lock tables on H2: a registry says what to do when they are missing, whatever H2 reports
 * (an empty database, or tables of similar names), and {@link JdbcSchema#initialize} does not
 * repeat a run that got no connection.
 */
class JdbcSchemaTests {

    @Test
    void missingTablesOfAnEmptyDatabaseAreNamedWithWhatToDo() throws Exception {
        // H2 reports SQLState 42S04 when the database has no table at all.
        assertMissingTablesExplained(newH2Url(), null);
    }

    @Test
    void missingTablesBesideTablesOfSimilarNamesAreNamedWithWhatToDo() throws Exception {
        // And 42S03 when a table of a similar name exists (here a quoted lower-case one).
        assertMissingTablesExplained(newH2Url(), "CREATE TABLE \"distributed_lock_session\" (A INT)");
    }

    @Test
    void aRunThatGetsNoConnectionIsNotRepeated() {
        AtomicInteger attempts = new AtomicInteger();
        DataSource unreachable = new UnreachableDataSource(attempts);
        assertThatIllegalStateException().isThrownBy(() -> JdbcSchema.initialize(unreachable, "DISTRIBUTED_LOCK_"))
            .withMessageStartingWith("Could not create the lock tables DISTRIBUTED_LOCK_*: ")
            .withMessageContaining("connection is not available");
        assertThat(attempts).hasValue(1);
    }

    private static void assertMissingTablesExplained(String url, String setUp) throws Exception {
        try (Connection connection = DriverManager.getConnection(url, "sa", "")) {
            if (setUp != null) {
                try (Statement statement = connection.createStatement()) {
                    statement.execute(setUp);
                }
            }
            try (HikariDataSource pool = new HikariDataSource()) {
                pool.setJdbcUrl(url);
                pool.setUsername("sa");
                try (JdbcLockRegistry registry = JdbcLockRegistry.builder(pool).build()) {
                    FencedLock lock = registry.obtain("no-tables");
                    assertThatExceptionOfType(LockAcquisitionException.class)
                        .isThrownBy(() -> lock.tryLock(2, TimeUnit.SECONDS))
                        .withMessageContaining("The lock tables DISTRIBUTED_LOCK_* are missing")
                        .withMessageContaining("distributed-lock.jdbc.initialize-schema=always");
                }
            }
        }
    }

    private static String newH2Url() {
        // Kept open by the test's own connection.
        return "jdbc:h2:mem:schema-" + UUID.randomUUID();
    }

    /** A pool whose database cannot be reached: every connection request fails, as a pool's timeout does. */
    private record UnreachableDataSource(AtomicInteger attempts) implements DataSource {

        @Override
        public Connection getConnection() throws SQLException {
            this.attempts.incrementAndGet();
            throw new SQLTransientConnectionException("pool - connection is not available, request timed out");
        }

        @Override
        public Connection getConnection(String username, String password) throws SQLException {
            return getConnection();
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
        public Logger getParentLogger() {
            return Logger.getGlobal();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            throw new SQLException("Not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }
    }
}
