package io.github.distlock.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.locks.Lock;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.distlock.jdbc.JdbcLockRegistry;
import io.github.distlock.jdbc.JdbcSchema;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * A contender in its own JVM for the JDBC benchmarks: one HikariCP pool with one registry and one
 * Spring Integration {@code JdbcLockRegistry} (a {@link DefaultLockRepository} of its own) on it,
 * driven over stdin.
 *
 * <p>Arguments: {@code <jdbc url> <user> <password> <table prefix> <name>}. Commands, one per line:
 * {@code LOOP <run> <fair|unfair|si-jdbc> <key> <window start> <window end> <stop at> <file>}:
 * acquire and release {@code key} back to back with an empty critical section until {@code stop at},
 * write {@code <acquired> <released> <lock() called>} for every acquisition that returned inside
 * the window to {@code file}, then print {@code DONE <run> <count>}. Times are
 * {@link System#nanoTime()} values, the machine's monotonic clock in every JVM on Linux. The JVM
 * exits when its stdin ends.
 */
public final class JdbcBenchWorkerMain {

    private JdbcBenchWorkerMain() {
    }

    public static void main(String[] args) throws Exception {
        try (HikariDataSource pool = pool(args[0], args[1], args[2], args[4], new Properties());
                JdbcLockRegistry registry = JdbcLockRegistry.builder(pool).tablePrefix(args[3])
                    .ownerIdentity(args[4]).build()) {
            registry.connect().get();
            org.springframework.integration.jdbc.lock.JdbcLockRegistry springIntegration = springIntegration(pool);
            Map<String, Lock> springLocks = new HashMap<>();
            System.out.println("READY " + args[4]);
            Records.serveLoopCommands((mode, key) -> switch (mode) {
                case "fair" -> registry.obtain(key, true);
                case "unfair" -> registry.obtain(key, false);
                case "si-jdbc" -> springLocks.computeIfAbsent(key, k -> springIntegration.obtain("bench-si:" + k));
                default -> throw new IllegalArgumentException("unknown mode: " + mode);
            });
        }
    }

    /**
     * A pool as an application would have: 10 connections, all opened up front so that no
     * measurement pays for a connection set-up.
     * @param driverProperties extra properties for the driver
     */
    static HikariDataSource pool(String url, String user, String password, String name, Properties driverProperties) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setPassword(password);
        config.setPoolName(name);
        config.setMaximumPoolSize(10);
        config.setMinimumIdle(10);
        config.setConnectionTimeout(10_000);
        config.setDataSourceProperties(driverProperties);
        return new HikariDataSource(config);
    }

    /**
     * Spring Integration's {@code JdbcLockRegistry} as its documentation sets it up, outside an
     * application context: a {@link DefaultLockRepository} (table prefix {@code INT_}, region
     * {@code DEFAULT}, a client id of its own) with a {@link DataSourceTransactionManager} on the pool.
     * Its defaults stay: 10 s TTL, 100 ms between tries.
     */
    static org.springframework.integration.jdbc.lock.JdbcLockRegistry springIntegration(DataSource pool) {
        DefaultLockRepository repository = new DefaultLockRepository(pool);
        repository.setTransactionManager(new DataSourceTransactionManager(pool));
        repository.afterPropertiesSet();
        repository.afterSingletonsInstantiated();
        repository.start();
        return new org.springframework.integration.jdbc.lock.JdbcLockRegistry(repository);
    }

    /**
     * Creates our lock tables and Spring Integration's {@code INT_LOCK} table, from the scripts in
     * the two jars ({@code schema-postgresql.sql} or {@code schema-mysql.sql} of
     * spring-integration-jdbc; only its {@code INT_LOCK} statement, not the message store's tables).
     * @param dialect {@code postgresql} or {@code mysql}
     */
    static void createTables(DataSource pool, String prefix, String dialect) throws IOException, SQLException {
        JdbcSchema.initialize(pool, prefix);
        String resource = "org/springframework/integration/jdbc/schema-" + dialect + ".sql";
        String script;
        try (InputStream in = DefaultLockRepository.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is missing from spring-integration-jdbc");
            }
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        String createLockTable = Arrays.stream(script.split(";"))
            .map(String::strip)
            .filter(statement -> statement.startsWith("CREATE TABLE INT_LOCK "))
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("No CREATE TABLE INT_LOCK in " + resource));
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute(createLockTable);
        }
    }
}
