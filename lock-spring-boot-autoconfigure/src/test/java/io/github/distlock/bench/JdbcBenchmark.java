package io.github.distlock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.stream.Stream;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.github.distlock.jdbc.JdbcLockRegistry;
import io.github.distlock.jdbc.JdbcStatementsByHand;
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
 * drift hits all alike; beside them the registry's own statements run by hand on the calling thread
 * (see {@link JdbcStatementsByHand}), which tells what the statements cost from what the registry
 * adds;</li>
 * <li>J2, four processes looping on one key with an empty critical section: fair and unfair against
 * Spring Integration's {@code JdbcLockRegistry}, runs alternating; a handoff is an acquisition by
 * another process than the one before;</li>
 * <li>J1 accounting, after the timed scenarios (the server restarted with {@code pg_stat_statements}
 * loaded, so that its overhead is in no timed number): per acquire and release of the floor, the
 * registry, its statements by hand and Spring Integration's registry, round trips (counted on the client's sockets),
 * statements, writing commits, WAL fsyncs and bytes, where the time goes (executing statements,
 * WAL fsync, the rest: network, driver, pool, threads), and CPU time and context switches of the
 * client JVM and of the server's processes;</li>
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

    /** Cycles of one kind in one block of the accounting; the kinds take turns for this many rounds. */
    private static final int ACCOUNTED_CYCLES = 150;

    private static final int ACCOUNTING_ROUNDS = 4;

    private static final int PROCESSES = 4;

    private static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(6);

    private static final long WARMUP_RUN_NANOS = TimeUnit.SECONDS.toNanos(4);

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    /** For the backends told to flush their statistics to do so. */
    private static final long STATS_SETTLE_MILLIS = 300;

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
            System.out.println("[bench] jdbc J1 accounting: restarting PostgreSQL with pg_stat_statements");
            account(postgres, table);
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
        Samples byHand = new Samples();
        Samples floorFlushingOnce = new Samples();
        try (JdbcLockRegistry registry = JdbcLockRegistry.builder(pool).tablePrefix(PREFIX).ownerIdentity("bench-j1")
            .build()) {
            List<UncontendedRounds.Cycle> cycles = new ArrayList<>(List.of(
                    UncontendedRounds.Cycle.of(registry.obtain("uncontended", false)),
                    UncontendedRounds.Cycle.of(registry.obtain("uncontended", true)),
                    UncontendedRounds.Cycle.of(JdbcBenchWorkerMain.springIntegration(pool).obtain("bench-j1-si"))));
            List<Samples> samples = new ArrayList<>(List.of(unfair, fair, springIntegration));
            if (targets) {
                // PostgreSQL only: elsewhere the registry writes an entry in a transaction of several round trips.
                cycles.add(new JdbcStatementsByHand(registry, "uncontended-by-hand")::cycle);
                samples.add(byHand);
                // The same change the registry's release made, applied to the floor: what the target would be
                // against a textbook lock that took it too.
                cycles.add(() -> floorCycle(pool, true));
                samples.add(floorFlushingOnce);
            }
            UncontendedRounds.measureCycles(() -> floorCycle(pool, false), floor, cycles, samples, WARMUP_CYCLES,
                    ROUNDS, CYCLES_PER_ROUND);
        }
        table.info(scenario, "raw floor" + database + ": INSERT + DELETE of one row, autocommit, serial",
                measured(floor), "", "");
        addUncontended(table, scenario, "unfair" + database, unfair, floor, targets);
        addUncontended(table, scenario, "fair" + database, fair, floor, targets);
        if (targets) {
            // Tells the statements' own cost from the registry's: its call threads, waits and local state.
            table.info(scenario, "  the registry's statements by hand (calling thread, no registry)",
                    measured(byHand), "floor " + ResultTable.latency(floor),
                    ResultTable.ratio((double) byHand.median() / floor.median()));
            table.info(scenario, "  raw floor, its DELETE not waiting for the WAL flush (as the registry's release)",
                    measured(floorFlushingOnce), "unfair lock()+unlock() " + ResultTable.latency(unfair),
                    ResultTable.ratio((double) unfair.median() / floorFlushingOnce.median()) + " (unfair/this)");
        }
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

    /**
     * The textbook database lock: insert the key's row (a duplicate means held), delete it with a compare on the owner.
     * @param deleteWithoutFlush whether the delete commits with {@code synchronous_commit} off (PostgreSQL)
     */
    private static void floorCycle(DataSource pool, boolean deleteWithoutFlush) throws SQLException {
        try (Connection connection = pool.getConnection();
                PreparedStatement insert = connection.prepareStatement("INSERT INTO " + FLOOR_TABLE
                        + " (LOCK_KEY, OWNER) VALUES (?, ?)")) {
            insert.setString(1, "bench-j1-floor");
            insert.setString(2, "bench-j1");
            if (insert.executeUpdate() != 1) {
                throw new IllegalStateException("raw floor row was not inserted");
            }
        }
        String deleteRow = "DELETE FROM " + FLOOR_TABLE + " WHERE LOCK_KEY = ? AND OWNER = ?";
        try (Connection connection = pool.getConnection();
                PreparedStatement delete = connection.prepareStatement(deleteWithoutFlush
                        ? "SELECT set_config('synchronous_commit', 'off', true); " + deleteRow : deleteRow)) {
            delete.setString(1, "bench-j1-floor");
            delete.setString(2, "bench-j1");
            int deleted;
            if (deleteWithoutFlush) {
                delete.execute();
                delete.getMoreResults();
                deleted = delete.getUpdateCount();
            }
            else {
                deleted = delete.executeUpdate();
            }
            if (deleted != 1) {
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

    // ---- J1 accounting -------------------------------------------------------------------------

    /** What one kind of cycle costs, summed over the blocks of cycles measured. */
    private static final class Cost {

        private final String what;

        /** Round trips, statements, writing commits, WAL fsyncs, WAL fsync ms, WAL bytes, executing ms, wall ms,
         * client CPU ms, server CPU ms, client context switches, server context switches. */
        private final double[] totals = new double[12];

        private long cycles;

        Cost(String what) {
            this.what = what;
        }

        private double per(int index) {
            return this.totals[index] / this.cycles;
        }

        String counts() {
            return ResultTable.number("%.1f round trips, %.1f statements, %.1f writing commits, %.1f WAL fsyncs, "
                    + "%.0f WAL bytes", per(0), per(1), per(2), per(3), per(5));
        }

        String times() {
            return ResultTable.number("mean %.2f ms: executing %.2f, WAL fsync %.2f, rest %.2f", per(7), per(6), per(4),
                    per(7) - per(6) - per(4));
        }

        String cpu() {
            return ResultTable.number("client %.3f ms, server %.3f ms", per(8), per(9));
        }

        String switches() {
            return ResultTable.number("client %.1f, server %.1f", per(10), per(11));
        }
    }

    private static void account(PostgresServer postgres, ResultTable table) throws Exception {
        try (Connection connection = postgres.connect(); Statement statement = connection.createStatement()) {
            statement.execute("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
            statement.execute("ALTER SYSTEM SET track_wal_io_timing = on");
        }
        postgres.restart();
        try (Connection connection = postgres.connect(); Statement statement = connection.createStatement()) {
            // Known only once the library is loaded. Nested statements too: foreign key checks, pg_notify.
            statement.execute("ALTER SYSTEM SET pg_stat_statements.track = 'all'");
            statement.execute("SELECT pg_reload_conf()");
            // The restart was a crash: the checkpoint after recovery should not fall into a measurement.
            statement.execute("CHECKPOINT");
        }
        Properties counting = new Properties();
        counting.setProperty("socketFactory", CountingSocketFactory.class.getName());
        try (Connection stats = postgres.connect(); HikariDataSource pool = pool(postgres, "bench-accounting", counting);
                JdbcLockRegistry registry = JdbcLockRegistry.builder(pool).tablePrefix(PREFIX)
                    .ownerIdentity("bench-accounting").build()) {
            try (Statement statement = stats.createStatement()) {
                statement.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
            }
            Lock unfair = registry.obtain("accounted", false);
            Lock springIntegration = JdbcBenchWorkerMain.springIntegration(pool).obtain("bench-accounted-si");
            Map<Cost, UncontendedRounds.Cycle> kinds = new LinkedHashMap<>();
            kinds.put(new Cost("raw floor"), () -> floorCycle(pool, false));
            kinds.put(new Cost("registry, unfair"), () -> {
                unfair.lock();
                unfair.unlock();
            });
            kinds.put(new Cost("registry's statements by hand"),
                    new JdbcStatementsByHand(registry, "accounted-by-hand")::cycle);
            kinds.put(new Cost("Spring Integration JdbcLockRegistry"), () -> {
                springIntegration.lock();
                springIntegration.unlock();
            });
            for (int i = 0; i < WARMUP_CYCLES; i++) {
                for (UncontendedRounds.Cycle cycle : kinds.values()) {
                    cycle.run();
                }
            }
            // Blocks of each kind in turn, so that drift (the disk's fsync time above all) hits all alike.
            for (int round = 0; round < ACCOUNTING_ROUNDS; round++) {
                for (Map.Entry<Cost, UncontendedRounds.Cycle> kind : kinds.entrySet()) {
                    measureBlock(postgres, stats, pool, kind.getKey(), kind.getValue(), round == ACCOUNTING_ROUNDS - 1);
                }
            }
            for (Cost cost : kinds.keySet()) {
                System.out.println("[bench] jdbc J1 accounting, " + cost.what + ": " + cost.counts() + "; " + cost.times()
                        + "; CPU " + cost.cpu() + "; context switches " + cost.switches());
                table.info("J1", "per cycle, " + cost.what + ": counts; mean time", cost.counts(), cost.times(), "");
                table.info("J1", "  CPU; context switches", cost.cpu(), cost.switches(), "");
            }
        }
    }

    /**
     * Runs {@link #ACCOUNTED_CYCLES} cycles and adds what they cost to {@code cost}: round trips on
     * the client's sockets, statements from pg_stat_statements, commits and WAL from the server,
     * CPU time and context switches of this JVM and of the server's processes (Linux, from /proc).
     * @param print whether to print the statements the cycles ran
     */
    private static void measureBlock(PostgresServer postgres, Connection stats, HikariDataSource pool, Cost cost,
            UncontendedRounds.Cycle cycle, boolean print) throws Exception {
        flushStatistics(pool);
        query(stats, "SELECT pg_stat_statements_reset()");
        long[] before = databaseCounters(stats);
        long roundTrips = CountingSocketFactory.roundTrips();
        long[] clientBefore = cpuAndSwitches(ProcessHandle.current().pid(), false);
        long[] serverBefore = cpuAndSwitches(postgres.pid(), true);
        long started = System.nanoTime();
        for (int i = 0; i < ACCOUNTED_CYCLES; i++) {
            cycle.run();
        }
        long elapsed = System.nanoTime() - started;
        long[] clientAfter = cpuAndSwitches(ProcessHandle.current().pid(), false);
        long[] serverAfter = cpuAndSwitches(postgres.pid(), true);
        roundTrips = CountingSocketFactory.roundTrips() - roundTrips;
        flushStatistics(pool);
        long[] after = databaseCounters(stats);
        double statements = 0;
        double executingMillis = 0;
        if (print) {
            System.out.println("[bench] jdbc J1 accounting, " + cost.what + ": statements per cycle (calls per cycle, "
                    + "mean ms, SQL; nested ones, run by triggers or functions, marked +)");
        }
        try (Statement statement = stats.createStatement();
                ResultSet rows = statement.executeQuery("SELECT calls, total_exec_time, toplevel, query "
                        + "FROM pg_stat_statements WHERE query NOT ILIKE '%pg_stat%' AND dbid = (SELECT oid "
                        + "FROM pg_database WHERE datname = current_database()) ORDER BY toplevel DESC, calls DESC")) {
            while (rows.next()) {
                long calls = rows.getLong(1);
                double total = rows.getDouble(2);
                boolean topLevel = rows.getBoolean(3);
                String sql = rows.getString(4).replaceAll("\\s+", " ");
                if (topLevel) {
                    statements += calls;
                    // A COMMIT's time is mostly its WAL fsync, which is counted on its own.
                    if (!sql.equalsIgnoreCase("COMMIT")) {
                        executingMillis += total;
                    }
                }
                if (print) {
                    System.out.println(ResultTable.number("[bench]   %s%5.2f  %.3f ms  %s", topLevel ? " " : "+",
                            (double) calls / ACCOUNTED_CYCLES, total / calls, sql));
                }
            }
        }
        // The read of the counters before is a write transaction too (txid_current() assigns an id).
        double[] block = { roundTrips, statements, after[0] - before[0] - 1, after[1] - before[1],
                (after[2] - before[2]) / 1e3, after[3] - before[3], executingMillis, elapsed / 1e6,
                (clientAfter[0] - clientBefore[0]) / 1e6, (serverAfter[0] - serverBefore[0]) / 1e6,
                clientAfter[1] - clientBefore[1], serverAfter[1] - serverBefore[1] };
        for (int i = 0; i < block.length; i++) {
            cost.totals[i] += block[i];
        }
        cost.cycles += ACCOUNTED_CYCLES;
    }

    /**
     * @param pid a process
     * @param descendants whether to add its descendants (the server's backends)
     * @return CPU nanoseconds and context switches (voluntary and not) of all its threads so far, from
     * /proc ({@code 0, 0} where there is none)
     */
    private static long[] cpuAndSwitches(long pid, boolean descendants) {
        List<Long> pids = new ArrayList<>();
        pids.add(pid);
        if (descendants) {
            ProcessHandle.of(pid).ifPresent(process -> process.descendants().forEach(child -> pids.add(child.pid())));
        }
        long cpu = 0;
        long switches = 0;
        for (long process : pids) {
            try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(process), "task"))) {
                for (Path task : tasks.toList()) {
                    try {
                        cpu += Long.parseLong(Files.readString(task.resolve("schedstat")).trim().split(" ")[0]);
                        for (String line : Files.readAllLines(task.resolve("status"))) {
                            if (line.startsWith("voluntary_ctxt_switches") || line.startsWith("nonvoluntary_ctxt_switches")) {
                                switches += Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
                            }
                        }
                    }
                    catch (IOException | RuntimeException ex) {
                        // The thread ended meanwhile.
                    }
                }
            }
            catch (IOException ex) {
                // The process ended meanwhile, or there is no /proc.
            }
        }
        return new long[] { cpu, switches };
    }

    /**
     * @return write transactions so far (transaction ids assigned: each durable commit has one, and this
     * read takes one), WAL syncs, WAL sync microseconds and WAL bytes (the insert position)
     */
    private static long[] databaseCounters(Connection stats) throws SQLException {
        try (Statement statement = stats.createStatement();
                ResultSet row = statement.executeQuery("SELECT txid_current(), w.wal_sync, w.wal_sync_time * 1000, "
                        + "pg_current_wal_insert_lsn() - '0/0'::pg_lsn FROM pg_stat_wal w")) {
            row.next();
            return new long[] { row.getLong(1), row.getLong(2), (long) row.getDouble(3), row.getLong(4) };
        }
    }

    /**
     * Makes every idle backend of the pool publish its statistics now: PostgreSQL holds them back
     * for up to 10 s after the backend's last flush otherwise.
     */
    private static void flushStatistics(HikariDataSource pool) throws Exception {
        List<Connection> idle = new ArrayList<>();
        try {
            int count = pool.getHikariPoolMXBean().getIdleConnections();
            for (int i = 0; i < count; i++) {
                idle.add(pool.getConnection());
            }
            for (Connection connection : idle) {
                query(connection, "SELECT pg_stat_force_next_flush()");
            }
        }
        finally {
            for (Connection connection : idle) {
                connection.close();
            }
        }
        Thread.sleep(STATS_SETTLE_MILLIS);
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
