package io.github.distlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.distlock.testsupport.DatabaseServer;
import io.github.distlock.testsupport.MariaDbServer;
import io.github.distlock.testsupport.PostgresServer;
import org.jspecify.annotations.Nullable;

/**
 * A database the JDBC store's tests run on: H2 in memory, or a private PostgreSQL or MariaDB server
 * started for the test class. Each {@link #pool} is a HikariCP pool of its own, as another process
 * would have; {@link #execute} runs SQL behind the registries' backs.
 */
public final class TestDatabase implements AutoCloseable {

    /** The kinds of database. */
    public enum Kind { H2, POSTGRESQL, MARIADB }

    private final Kind kind;

    private final @Nullable DatabaseServer server;

    private final String h2Url;

    private final java.util.List<HikariDataSource> pools = new java.util.concurrent.CopyOnWriteArrayList<>();

    private TestDatabase(Kind kind, boolean steppableClock) {
        this.kind = kind;
        this.server = switch (kind) {
            case H2 -> null;
            case POSTGRESQL -> PostgresServer.start(steppableClock);
            case MARIADB -> MariaDbServer.start(steppableClock);
        };
        this.h2Url = "jdbc:h2:mem:locks-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
    }

    /**
     * @param kind which database
     * @return the database, started
     */
    public static TestDatabase start(Kind kind) {
        return new TestDatabase(kind, false);
    }

    /**
     * @param kind {@link Kind#POSTGRESQL} or {@link Kind#MARIADB}
     * @return the database, started with a clock that {@link DatabaseServer#stepClock} steps
     */
    public static TestDatabase startWithSteppableClock(Kind kind) {
        if (kind == Kind.H2) {
            throw new IllegalArgumentException("H2 runs in the test JVM, on its clock");
        }
        return new TestDatabase(kind, true);
    }

    public Kind kind() {
        return this.kind;
    }

    /** @return the server, for faults (kill, pause, restart); {@code null} for H2 */
    public @Nullable DatabaseServer server() {
        return this.server;
    }

    public String jdbcUrl() {
        return (this.server != null) ? this.server.jdbcUrl() : this.h2Url;
    }

    public String username() {
        return (this.server != null) ? this.server.username() : "sa";
    }

    public String password() {
        return (this.server != null) ? this.server.password() : "";
    }

    /**
     * @param name the pool's name, for thread names
     * @param maximumSize its size
     * @return a new pool, closed with the database
     */
    public HikariDataSource pool(String name, int maximumSize) {
        return pool(name, maximumSize, jdbcUrl(), config -> {
        });
    }

    /**
     * @param transactionIsolation the pool's isolation level, for example {@code TRANSACTION_REPEATABLE_READ}
     * @return a new pool of 4 connections at that level, closed with the database
     */
    public HikariDataSource poolAt(String transactionIsolation, String name) {
        return pool(name, 4, jdbcUrl(), config -> config.setTransactionIsolation(transactionIsolation));
    }

    /**
     * @param username a user of the database other than the tests' own
     * @param password its password
     * @return a new pool of 4 connections that log in as that user, closed with the database
     */
    public HikariDataSource poolAs(String username, String password, String name) {
        return pool(name, 4, jdbcUrl(), config -> {
            config.setUsername(username);
            config.setPassword(password);
        });
    }

    /** @return a new pool of 4 connections whose auto-commit is off, as JPA applications often set it */
    public HikariDataSource poolWithoutAutoCommit(String name) {
        return pool(name, 4, jdbcUrl(), config -> config.setAutoCommit(false));
    }

    /**
     * @param proxy a proxy to this database's server, which plays the network
     * @param name the pool's name, for thread names
     * @return a new pool of 4 connections through the proxy, closed with the database
     */
    public HikariDataSource poolThrough(io.github.distlock.testsupport.TcpProxy proxy, String name) {
        return pool(name, 4, jdbcUrl().replace(serverAddress(), proxy.endpoint().substring("http://".length())),
                config -> {
                });
    }

    /** @return the server's {@code host:port}, for a proxy */
    public String serverAddress() {
        return jdbcUrl().replaceFirst("^jdbc:[a-z]+://([^/]+)/.*$", "$1");
    }

    private HikariDataSource pool(String name, int maximumSize, String url,
            java.util.function.Consumer<HikariConfig> customizer) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(username());
        config.setPassword(password());
        config.setPoolName(name);
        config.setMaximumPoolSize(maximumSize);
        config.setMinimumIdle(0);
        config.setConnectionTimeout(Duration.ofSeconds(3).toMillis());
        config.setValidationTimeout(Duration.ofSeconds(1).toMillis());
        // Starts without the database, as an application whose database is not up yet.
        config.setInitializationFailTimeout(-1);
        customizer.accept(config);
        HikariDataSource pool = new HikariDataSource(config);
        this.pools.add(pool);
        return pool;
    }

    /** @return a new pool of 10 connections */
    public HikariDataSource pool(String name) {
        return pool(name, 10);
    }

    /** Creates the tables with {@code prefix}, as the auto-configuration would. */
    public void createTables(String prefix) {
        try (HikariDataSource pool = pool("schema", 2)) {
            JdbcSchema.initialize(pool, prefix);
        }
    }

    /**
     * Runs {@code sql} on a connection of its own.
     * @return the rows it changed
     */
    public int execute(String sql) throws SQLException {
        try (Connection connection = connect(); Statement statement = connection.createStatement()) {
            return statement.executeUpdate(sql);
        }
    }

    /** @return the first column of the first row of {@code sql}'s answer, as a long */
    public long queryLong(String sql) throws SQLException {
        try (Connection connection = connect(); Statement statement = connection.createStatement();
                var rows = statement.executeQuery(sql)) {
            if (!rows.next()) {
                throw new SQLException("No row for " + sql);
            }
            return rows.getLong(1);
        }
    }

    /** @return the first column of every row of {@code sql}'s answer, as text */
    public java.util.List<String> queryStrings(String sql) throws SQLException {
        try (Connection connection = connect(); Statement statement = connection.createStatement();
                var rows = statement.executeQuery(sql)) {
            java.util.List<String> values = new java.util.ArrayList<>();
            while (rows.next()) {
                values.add(rows.getString(1));
            }
            return values;
        }
    }

    private Connection connect() throws SQLException {
        return (this.server != null) ? this.server.connect()
                : java.sql.DriverManager.getConnection(this.h2Url, "sa", "");
    }

    @Override
    public void close() {
        this.pools.forEach(HikariDataSource::close);
        if (this.server != null) {
            this.server.close();
        }
        else {
            try {
                execute("SHUTDOWN");
            }
            catch (SQLException ex) {
                // Gone already.
            }
        }
    }
}
