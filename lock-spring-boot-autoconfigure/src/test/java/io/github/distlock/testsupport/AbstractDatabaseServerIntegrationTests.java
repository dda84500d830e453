package io.github.distlock.testsupport;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import com.sun.security.auth.module.UnixSystem;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * What the JDBC store's tests will rely on, against a real server: it serves SQL through the
 * driver, only with its password, committed rows survive a SIGKILL and a restart on the same
 * port, a frozen server answers nothing until resumed, and close leaves no process or file.
 */
abstract class AbstractDatabaseServerIntegrationTests {

    private static final Duration NETWORK_TIMEOUT = Duration.ofSeconds(1);

    /** @return a server just started */
    abstract DatabaseServer startServer();

    /** @return the JDBC URL's scheme, e.g. {@code jdbc:postgresql:} */
    abstract String urlScheme();

    /** @return a server just started with a steppable clock */
    abstract DatabaseServer startServerWithSteppableClock();

    /** @return a query that answers the server's wall clock, epoch milliseconds */
    abstract String clockQuery();

    /**
     * A server with a steppable clock: its wall clock follows {@link DatabaseServer#stepClock} back
     * and forth within {@link DatabaseServer#CLOCK_STEP_DELAY}, on a connection opened before the step
     * (a process that already runs) and on new ones, and still serves SQL.
     */
    @Test
    void aSteppableClockStepsTheServersWallClockBackAndForth() throws SQLException {
        try (DatabaseServer server = startServerWithSteppableClock(); Connection open = server.connect()) {
            assertThat(offsetMillis(open)).as("the clock before any step").isBetween(-2_000L, 2_000L);
            Duration settle = DatabaseServer.CLOCK_STEP_DELAY.plusSeconds(3);
            for (long offset : new long[] { -30, 20, 0 }) {
                server.stepClock(Duration.ofSeconds(offset));
                assertThat(server.clockOffset()).isEqualTo(Duration.ofSeconds(offset));
                long expected = offset * 1_000;
                await().atMost(settle).until(() -> Math.abs(offsetMillis(open) - expected) < 2_000);
                try (Connection fresh = server.connect()) {
                    assertThat(offsetMillis(fresh)).as("a new connection's clock, %d s off", offset)
                        .isBetween(expected - 2_000, expected + 2_000);
                    try (Statement statement = fresh.createStatement()) {
                        assertThat(statement.execute("SELECT 1")).isTrue();
                    }
                }
            }
        }
    }

    /**
     * A step reaches every process of the server at once, as a real server's one clock would: no
     * connection reads the old offset after {@link DatabaseServer#stepClock} returns, also on
     * connections whose processes read the clock just before. Processes that disagree would make a
     * step back look like a step forward to some of them (a session renewed on the stepped clock
     * expired on the other), which the nemesis checker rightly does not excuse.
     */
    @Test
    void aClockStepReachesEveryProcessOfTheServerAtOnce() throws SQLException {
        List<Connection> connections = new ArrayList<>();
        try (DatabaseServer server = startServerWithSteppableClock()) {
            for (int i = 0; i < 4; i++) {
                connections.add(server.connect());
            }
            for (long offset : new long[] { -30, 20, 0 }) {
                for (Connection connection : connections) {
                    offsetMillis(connection);
                }
                server.stepClock(Duration.ofSeconds(offset));
                long expected = offset * 1_000;
                for (int i = 0; i < connections.size(); i++) {
                    assertThat(offsetMillis(connections.get(i)))
                        .as("connection %d's clock right after a step to %d s", i, offset)
                        .isBetween(expected - 2_000, expected + 2_000);
                }
            }
        }
        finally {
            for (Connection connection : connections) {
                connection.close();
            }
        }
    }

    /** @return the server's wall clock minus this machine's, in milliseconds */
    private long offsetMillis(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet row = statement.executeQuery(clockQuery())) {
            row.next();
            return row.getLong(1) - System.currentTimeMillis();
        }
    }

    @Test
    void servesSqlOnALoopbackPortAsAnUnprivilegedUserAndOnlyWithItsPassword() throws SQLException {
        try (DatabaseServer server = startServer()) {
            assertThat(server.jdbcUrl()).startsWith(urlScheme() + "//127.0.0.1:" + server.port() + "/");
            try (Connection connection = server.connect()) {
                createAndFill(connection, 1, "first");
                assertThat(names(connection)).containsExactly("first");
            }
            String expectedUser = new UnixSystem().getUid() == 0 ? "nobody" : System.getProperty("user.name");
            assertThat(ProcessHandle.of(server.pid()).flatMap(handle -> handle.info().user())).contains(expectedUser);
            Properties wrongPassword = new Properties();
            wrongPassword.setProperty("user", server.username());
            wrongPassword.setProperty("password", server.password() + "x");
            assertThatExceptionOfType(SQLException.class)
                .isThrownBy(() -> DriverManager.getConnection(server.jdbcUrl(), wrongPassword).close());
        }
    }

    @Test
    void committedRowsSurviveAKillAndARestartOnTheSamePort() throws SQLException {
        try (DatabaseServer server = startServer()) {
            int port = server.port();
            long pid = server.pid();
            try (Connection connection = server.connect()) {
                createAndFill(connection, 1, "committed");
            }
            server.kill();
            assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive)).isNotEqualTo(java.util.Optional.of(true));
            assertThatExceptionOfType(SQLException.class).isThrownBy(() -> server.connect().close());
            server.restart();
            assertThat(server.port()).isEqualTo(port);
            assertThat(server.pid()).isNotEqualTo(pid);
            try (Connection connection = server.connect()) {
                assertThat(names(connection)).containsExactly("committed");
            }
        }
    }

    @Test
    void aPausedServerAnswersNothingUntilResumed() throws SQLException {
        try (DatabaseServer server = startServer()) {
            try (Connection connection = server.connect()) {
                createAndFill(connection, 1, "before");
                connection.setNetworkTimeout(Runnable::run, (int) NETWORK_TIMEOUT.toMillis());
                server.pause();
                try {
                    long started = System.nanoTime();
                    assertThatExceptionOfType(SQLException.class).isThrownBy(() -> names(connection));
                    Duration waited = Duration.ofNanos(System.nanoTime() - started);
                    // It failed because nothing answered within the timeout, not at once for another reason.
                    assertThat(waited).isGreaterThanOrEqualTo(NETWORK_TIMEOUT.minusMillis(50))
                        .isLessThan(Duration.ofSeconds(15));
                }
                finally {
                    server.resume();
                }
            }
            try (Connection connection = server.connect()) {
                assertThat(names(connection)).containsExactly("before");
            }
        }
    }

    @Test
    void closeEndsEveryProcessAndRemovesTheDirectory() throws SQLException {
        DatabaseServer server = startServer();
        Path directory = server.directory();
        List<ProcessHandle> processes = new ArrayList<>();
        try (Connection connection = server.connect()) {
            createAndFill(connection, 1, "gone");
            ProcessHandle main = ProcessHandle.of(server.pid()).orElseThrow();
            processes.add(main);
            processes.addAll(main.descendants().toList());
            assertThat(Files.isDirectory(directory)).isTrue();
            server.close();
        }
        await().atMost(Duration.ofSeconds(15)).until(() -> processes.stream().allMatch(DatabaseServer::isGone));
        assertThat(Files.exists(directory)).isFalse();
        server.close();
    }

    private static void createAndFill(Connection connection, int id, String name) throws SQLException {
        connection.setAutoCommit(false);
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE probe (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL)");
        }
        try (PreparedStatement insert = connection.prepareStatement("INSERT INTO probe (id, name) VALUES (?, ?)")) {
            insert.setInt(1, id);
            insert.setString(2, name);
            assertThat(insert.executeUpdate()).isEqualTo(1);
        }
        connection.commit();
        connection.setAutoCommit(true);
    }

    private static List<String> names(Connection connection) throws SQLException {
        List<String> names = new ArrayList<>();
        try (Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT name FROM probe ORDER BY id")) {
            while (rows.next()) {
                names.add(rows.getString(1));
            }
        }
        return names;
    }
}
