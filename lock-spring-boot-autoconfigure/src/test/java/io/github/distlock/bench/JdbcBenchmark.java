package io.github.distlock.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.github.distlock.jdbc.JdbcLockRegistry;
import io.github.distlock.testsupport.DatabaseServer;
import io.github.distlock.testsupport.JvmProcess;
import io.github.distlock.testsupport.MariaDbServer;
import io.github.distlock.testsupport.PostgresServer;

/**
 * The JDBC benchmarks, on a private PostgreSQL server of their own (loopback, data in the
 * machine's temporary directory, {@code fsync} and {@code synchronous_commit} on as PostgreSQL
 * ships), each measurement beside the raw database floor and Spring Integration's
 * {@code JdbcLockRegistry} measured in the same run:
 * <ul>
 * <li>J1, uncontended acquire and release by one thread: the registry (unfair and fair), the raw
 * floor (insert a row under a unique key, delete it, each in autocommit on a connection borrowed
 * from the same pool: the textbook database lock) and Spring Integration's
 * {@code JdbcLockRegistry} ({@code DefaultLockRepository}, its defaults), taking turns in rounds so
 * drift hits all alike;</li>
 * <li>J2, four processes looping on one key with an empty critical section: fair and unfair against
 * Spring Integration's {@code JdbcLockRegistry}, runs alternating; a handoff is an acquisition by
 * another process than the one before;</li>
 * <li>J1m, the same as J1 on a private MariaDB server, if MariaDB is installed (skip with
 * {@code -Dbench.jdbc.mariadb=false}).</li>
 * </ul>
 */
final class JdbcBenchmark {

    private static final String PREFIX = "BENCH_";

    private static final String FLOOR_TABLE = "BENCH_FLOOR_LOCK";

    private static final int WARMUP_CYCLES = 500;

    private static final int ROUNDS = 10;

    private static final int CYCLES_PER_ROUND = 200;

    private static final int PROCESSES = 4;

    private static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(6);

    private static final long WARMUP_RUN_NANOS = TimeUnit.SECONDS.toNanos(4);

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private JdbcBenchmark() {
    }

    /** @return the database servers' versions and settings, for the table's heading */
    static String run(ResultTable table) throws Exception {
        String heading;
        try (PostgresServer postgres = PostgresServer.start()) {
            double floorRate;
            try (HikariDataSource pool = pool(postgres, "bench-j1", new Properties())) {
                JdbcBenchWorkerMain.createTables(pool, PREFIX, "postgresql");
                createFloorTable(pool);
                heading = "PostgreSQL " + query(pool, "SHOW server_version") + " (fsync " + query(pool, "SHOW fsync")
                        + ", synchronous_commit " + query(pool, "SHOW synchronous_commit") + ", wal_sync_method "
                        + query(pool, "SHOW wal_sync_method") + ")";
                System.out.println("[bench] jdbc J1: uncontended acquire+release, PostgreSQL");
                floorRate = uncontended(pool, "J1", "", table, true);
            }
            handoffs(postgres, floorRate, table);
        }
        if (Boolean.parseBoolean(System.getProperty("bench.jdbc.mariadb", "true"))) {
            heading += ", " + mariaDb(table);
        }
        return heading;
    }

    private static HikariDataSource pool(DatabaseServer server, String name, Properties driverProperties) {
        return JdbcBenchWorkerMain.pool(server.jdbcUrl(), server.username(), server.password(), name, driverProperties);
    }

    // ---- J1 ------------------------------------------------------------------------------------

    /**
     * @param scenario the table's scenario label
     * @param database how the rows name the database, e.g. {@code " (MariaDB)"}
     * @param targets whether the rows carry the targets (PostgreSQL) or are for context only
     * @return the floor's serial rate
     */
    private static double uncontended(DataSource pool, String scenario, String database, ResultTable table,
            boolean targets) throws Exception {
        Samples floor = new Samples();
        Samples unfair = new Samples();
        Samples fair = new Samples();
        Samples springIntegration = new Samples();
        try (JdbcLockRegistry registry = JdbcLockRegistry.builder(pool).tablePrefix(PREFIX).ownerIdentity("bench-j1")
            .build()) {
            List<Lock> locks = List.of(registry.obtain("uncontended", false), registry.obtain("uncontended", true),
                    JdbcBenchWorkerMain.springIntegration(pool).obtain("bench-j1-si"));
            UncontendedRounds.measure(() -> floorCycle(pool), floor, locks, List.of(unfair, fair, springIntegration),
                    WARMUP_CYCLES, ROUNDS, CYCLES_PER_ROUND);
        }
        table.info(scenario, "raw floor" + database + ": INSERT + DELETE of one row, autocommit, serial",
                measured(floor), "", "");
        addUncontended(table, scenario, "unfair" + database, unfair, floor, targets);
        addUncontended(table, scenario, "fair" + database, fair, floor, targets);
        table.info(scenario, "Spring Integration JdbcLockRegistry" + database + " lock()+unlock() (reference)",
                measured(springIntegration), "floor " + ResultTable.latency(floor),
                ResultTable.ratio((double) springIntegration.median() / floor.median()));
        return floor.serialRate();
    }

    private static String measured(Samples samples) {
        return ResultTable.latency(samples) + ", " + ResultTable.rate(samples.serialRate());
    }

    private static void addUncontended(ResultTable table, String scenario, String mode, Samples measured,
            Samples floor, boolean targets) {
        double ratio = (double) measured.median() / floor.median();
        if (targets) {
            table.add(scenario, "uncontended lock()+unlock(), " + mode, measured(measured),
                    "floor " + ResultTable.latency(floor), ResultTable.ratio(ratio), "median <= 1.30x floor",
                    ratio <= 1.30);
        }
        else {
            table.info(scenario, "uncontended lock()+unlock(), " + mode, measured(measured),
                    "floor " + ResultTable.latency(floor), ResultTable.ratio(ratio));
        }
    }

    private static void createFloorTable(DataSource pool) throws SQLException {
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE " + FLOOR_TABLE + " (LOCK_KEY VARCHAR(255) NOT NULL PRIMARY KEY, "
                    + "OWNER VARCHAR(255) NOT NULL)");
        }
    }

    /** The textbook database lock: insert the key's row (a duplicate means held), delete it with a compare on the owner. */
    private static void floorCycle(DataSource pool) throws SQLException {
        try (Connection connection = pool.getConnection();
                PreparedStatement insert = connection.prepareStatement("INSERT INTO " + FLOOR_TABLE
                        + " (LOCK_KEY, OWNER) VALUES (?, ?)")) {
            insert.setString(1, "bench-j1-floor");
            insert.setString(2, "bench-j1");
            if (insert.executeUpdate() != 1) {
                throw new IllegalStateException("raw floor row was not inserted");
            }
        }
        try (Connection connection = pool.getConnection();
                PreparedStatement delete = connection.prepareStatement("DELETE FROM " + FLOOR_TABLE
                        + " WHERE LOCK_KEY = ? AND OWNER = ?")) {
            delete.setString(1, "bench-j1-floor");
            delete.setString(2, "bench-j1");
            if (delete.executeUpdate() != 1) {
                throw new IllegalStateException("raw floor row was not deleted");
            }
        }
    }

    // ---- J2 ------------------------------------------------------------------------------------

    private static void handoffs(PostgresServer postgres, double floorRate, ResultTable table) throws Exception {
        Path directory = Files.createTempDirectory("distlock-bench-jdbc-");
        List<JvmProcess> workers = new ArrayList<>();
        try {
            for (int i = 0; i < PROCESSES; i++) {
                workers.add(JvmProcess.builder(JdbcBenchWorkerMain.class)
                    .args(postgres.jdbcUrl(), postgres.username(), postgres.password(), PREFIX, "worker-" + i)
                    .start());
            }
            for (JvmProcess worker : workers) {
                worker.awaitLine(line -> line.startsWith("READY"), START_TIMEOUT);
            }
            ContentionWindows windows = new ContentionWindows("jdbc J2", workers, directory);
            System.out.println("[bench] jdbc J2: warming up the workers (not counted)");
            for (String mode : List.of("fair", "unfair", "si-jdbc")) {
                windows.measure(mode, WARMUP_RUN_NANOS, new Contention(PROCESSES));
            }
            Contention fair = new Contention(PROCESSES);
            Contention unfair = new Contention(PROCESSES);
            Contention springIntegration = new Contention(PROCESSES);
            for (String mode : List.of("fair", "si-jdbc", "unfair", "unfair", "si-jdbc", "fair")) {
                Contention into = switch (mode) {
                    case "fair" -> fair;
                    case "unfair" -> unfair;
                    default -> springIntegration;
                };
                windows.measure(mode, WINDOW_NANOS, into);
            }
            String reference = "SI JdbcLockRegistry " + ResultTable.rate(springIntegration.handoffRate());
            for (String mode : List.of("fair", "unfair")) {
                Contention measured = mode.equals("fair") ? fair : unfair;
                double ratio = measured.handoffRate() / springIntegration.handoffRate();
                table.add("J2", mode + ", 4 processes: handoffs between processes", ResultTable.rate(
                        measured.handoffRate()), reference, ResultTable.ratio(ratio), ">= 10x JdbcLockRegistry",
                        ratio >= 10);
                table.info("J2", mode + ": wait in lock()", ResultTable.latency(measured.waits()),
                        "SI " + ResultTable.latency(springIntegration.waits()), "");
                table.info("J2", mode + ": acquisitions; shares", ResultTable.rate(measured.rate()) + "; "
                        + measured.shares(), "SI " + ResultTable.rate(springIntegration.rate()) + "; "
                        + springIntegration.shares(), ResultTable.ratio(measured.rate() / springIntegration.rate()));
            }
            table.info("J2", "handoff gap (release to next holder's return)", "fair " + ResultTable.latency(fair.gaps()),
                    "SI " + ResultTable.latency(springIntegration.gaps()), "");
            table.info("J2", "fair handoffs vs the floor's serial rate", ResultTable.rate(fair.handoffRate()),
                    "floor serial cycles " + ResultTable.rate(floorRate), ResultTable.ratio(fair.handoffRate() / floorRate));
        }
        finally {
            workers.forEach(JvmProcess::close);
            HandoffScenario.deleteRecursively(directory);
        }
    }

    private static String query(DataSource pool, String sql) throws SQLException {
        try (Connection connection = pool.getConnection()) {
            return query(connection, sql);
        }
    }

    private static String query(Connection connection, String sql) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet row = statement.executeQuery(sql)) {
            row.next();
            return row.getString(1);
        }
    }

    // ---- J1m -----------------------------------------------------------------------------------

    /** @return the MariaDB version and settings for the heading, or why it did not run */
    private static String mariaDb(ResultTable table) throws Exception {
        MariaDbServer mariadb;
        try {
            mariadb = MariaDbServer.start();
        }
        catch (IllegalStateException ex) {
            System.out.println("[bench] jdbc J1m skipped: " + ex.getMessage());
            table.info("J1m", "MariaDB: not run", ex.getMessage().lines().findFirst().orElse(""), "", "");
            return "MariaDB not run";
        }
        try (mariadb; HikariDataSource pool = pool(mariadb, "bench-j1m", new Properties())) {
            JdbcBenchWorkerMain.createTables(pool, PREFIX, "mysql");
            createFloorTable(pool);
            String heading = "MariaDB " + query(pool, "SELECT VERSION()") + " (innodb_flush_log_at_trx_commit "
                    + query(pool, "SELECT @@innodb_flush_log_at_trx_commit") + ", binary log "
                    + query(pool, "SELECT IF(@@log_bin = 1, 'on', 'off')") + ")";
            System.out.println("[bench] jdbc J1m: uncontended acquire+release, MariaDB");
            uncontended(pool, "J1m", " (MariaDB)", table, false);
            return heading;
        }
    }
}
