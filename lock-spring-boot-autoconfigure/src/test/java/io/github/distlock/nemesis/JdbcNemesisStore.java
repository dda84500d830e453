package io.github.distlock.nemesis;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.github.distlock.jdbc.JdbcSchema;
import io.github.distlock.nemesis.FaultPlan.Action;
import io.github.distlock.nemesis.FaultPlan.Fault;
import io.github.distlock.nemesis.HistoryEvent.FaultKind;
import io.github.distlock.testsupport.DatabaseServer;
import io.github.distlock.testsupport.MariaDbServer;
import io.github.distlock.testsupport.PostgresServer;
import io.github.distlock.testsupport.TestStore;

/**
 * A SQL database under a nemesis run: one PostgreSQL or MariaDB server, reached by every worker
 * through a proxy of its own. The server is killed and restarted on its data (every committed row
 * survives), paused, or killed and restarted from a backup taken once the lock tables existed and
 * before any worker wrote (every session and entry is gone: the store loses data, as a restore or a
 * failover to a replica that lagged would). Entries are also deleted behind the library's back.
 * <p>
 * The server's wall clock steps ({@link Action#CLOCK_STEP}): it runs under libfaketime, and a fault
 * sets it 2 to 20 s behind or ahead of the machine's, and back at its heal. The store reads that
 * clock for session expiry and fences: a step forward can expire sessions before their renewal (the
 * checker holds the holders to reporting their loss, as for a deletion), a step back puts off the
 * expiry of sessions renewed before it by its size (the checker lengthens the recovery bound by as
 * much) and must lower no fence, also on a key without entries.
 * <p>
 * Two combinations stay out of the schedule: a restore of the empty backup while the clock is
 * behind fences issued before (in the size of a forward step after its heal), and a step back of
 * the clock shortly after such a restore (within its size), which puts the clock behind fences
 * issued before the restore. The restore loses every key's last fence, so fences would go back: the
 * limit of G12 that the JDBC section of the README states (fences survive a restore as long as the
 * new server's clock is not behind the old one's). A restore waits until the clock has caught up,
 * and a step back until the clock after it is past the restore; seed 912 on MariaDB found both.
 */
final class JdbcNemesisStore implements NemesisStore {

    /**
     * How long the database takes to serve again after a heal. A heal returns only once the server
     * accepts connections again (a restart and its crash recovery are inside the fault window), so
     * what is left is the library's side: a call that went out on a connection just before a kill
     * or a pause fails when that connection breaks or, at the latest, when the library's request
     * timeout (5 s by default) ends; the pool then opens fresh connections.
     */
    static final Duration ELECTION = Duration.ofSeconds(5);

    /** The workers' table prefix. */
    static final String NAMESPACE = "NEMESIS_";

    /** Bounds how long a heal waits for the server to accept connections, past a slow crash recovery. */
    private static final Duration ACCEPT_TIMEOUT = Duration.ofSeconds(90);

    /** Bounds how long a delete of entries is retried, past any pause or restart of the server. */
    private static final Duration DELETE_TIMEOUT = Duration.ofSeconds(60);

    private final Type type;

    private final DatabaseServer server;

    /** The data as it was with the lock tables in place and no row in them. */
    private final Path emptyTables;

    /**
     * Until when (nanoTime) fences issued before the last step of the clock back to the machine's
     * may be ahead of the clock: a restore waits for it.
     */
    private volatile long clockBehindUntil = System.nanoTime();

    /** When (nanoTime) the last restore of the empty backup ended: a step back waits to keep the clock past it. */
    private volatile long restoredAt = System.nanoTime() - TimeUnit.HOURS.toNanos(1);

    private JdbcNemesisStore(Type type, DatabaseServer server, Path emptyTables) {
        this.type = type;
        this.server = server;
        this.emptyTables = emptyTables;
    }

    /**
     * Starts the server, creates the lock tables and backs them up empty.
     * @param type {@link Type#POSTGRES} or {@link Type#MARIADB}
     */
    static JdbcNemesisStore start(Type type) {
        DatabaseServer server = switch (type) {
            case POSTGRES -> PostgresServer.start(true);
            case MARIADB -> MariaDbServer.start(true);
            default -> throw new IllegalArgumentException(type + " is no SQL database");
        };
        try {
            // The workers create the tables too (idempotently), but the backup must have them.
            try (HikariDataSource pool = pool(server)) {
                JdbcSchema.initialize(pool, NAMESPACE);
            }
            return new JdbcNemesisStore(type, server, server.backUp());
        }
        catch (RuntimeException ex) {
            server.close();
            throw ex;
        }
    }

    private static HikariDataSource pool(DatabaseServer server) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(server.jdbcUrl());
        config.setUsername(server.username());
        config.setPassword(server.password());
        config.setPoolName("nemesis-schema");
        config.setMaximumPoolSize(1);
        config.setConnectionTimeout(30_000);
        return new HikariDataSource(config);
    }

    @Override
    public Type type() {
        return this.type;
    }

    @Override
    public int members() {
        return 1;
    }

    @Override
    public List<String> addresses() {
        return List.of(this.server.host() + ":" + this.server.port());
    }

    @Override
    public String spec(List<String> addresses) {
        String direct = this.server.host() + ":" + this.server.port();
        String url = this.server.jdbcUrl().replace("//" + direct + "/", "//" + addresses.get(0) + "/");
        return "jdbc=" + url + "|" + this.server.username() + "|" + this.server.password();
    }

    @Override
    public String namespace() {
        return NAMESPACE;
    }

    @Override
    public Map<Action, Integer> weights() {
        return Map.of(Action.KILL_MEMBER, 15, Action.PAUSE_MEMBER, 15, Action.RESTART_EMPTY, 10,
                Action.DELETE_ENTRIES, 20, Action.NETWORK_WORKER, 15, Action.CLOCK_STEP, 15);
    }

    /**
     * @return how far a {@link Action#CLOCK_STEP} fault steps the server's clock: 2 to 20 s, back for
     * variants below 500 and forward from there
     */
    static Duration clockStep(Fault fault) {
        long seconds = 2 + (fault.variant() % 500) * 19L / 499;
        return Duration.ofSeconds((fault.variant() < 500) ? -seconds : seconds);
    }

    @Override
    public Duration stretch(Fault fault) {
        // Backward at the start or, for a step forward, at the heal: either puts off expiries by the step's size.
        return (fault.action() == Action.CLOCK_STEP) ? clockStep(fault).abs() : Duration.ZERO;
    }

    @Override
    public Bounds bounds(Duration ttl) {
        // waitOverrun: FencedLock documents timeout + 1 s (a store attempt's floor); every call waits for its database
        // call with the caller's deadline, also when the server is paused or its connection stalls in the proxy. 0.5 s
        // more for scheduling on a machine where the database and the worker JVMs share few cores.
        Duration waitOverrun = Duration.ofMillis(1_500);
        // lossReport: each renewal (every third of the TTL) checks that the session's row and entries are still there,
        // so a deleted entry or a restored table is found within a renewal period; a session that cannot be renewed
        // (server down or paused, network cut) is lost one TTL after the send of its last acknowledged renewal, which is
        // before the database's clock could expire it, so before another process could take the key. 1 s more for a
        // renewal's round trip and scheduling.
        Duration lossReport = ttl.plusSeconds(1);
        // fairnessSlack: a request is recorded before the call writes its entry, whose fence orders the queue: one round
        // trip on PostgreSQL (the write is sent at once), a short transaction of a few round trips on MariaDB, and a
        // session start before it after a loss. Two fair requests that close together may reach the database in either
        // order.
        Duration fairnessSlack = Duration.ofMillis((this.type == Type.MARIADB) ? 500 : 250);
        // Fences are the database's clock in microseconds, raised above the key's newest entry and its last fence (kept
        // in its key row for a day after its last use): no sequence, no row that a delete of entries could take back,
        // and a restore of the empty backup comes with the machine's clock, which is ahead of every fence issued before
        // (each clock step of the run heals before the next store fault). A step back of the clock, which the run
        // makes, must lower no fence: the checker excuses none.
        return new Bounds(ttl, ELECTION, waitOverrun, lossReport, fairnessSlack, true);
    }

    @Override
    public StoreFault fault(Fault fault) {
        String target = this.type.label();
        return switch (fault.action()) {
            // A crash: every committed row survives the restart (releases that PostgreSQL commits without waiting for
            // their flush may come back, as entries nobody acts on; that costs liveness, never a hold).
            case KILL_MEMBER -> new StoreFault(FaultKind.KILL_MEMBER, target, false, this.server::kill,
                    this.server::restart);
            case PAUSE_MEMBER -> new StoreFault(FaultKind.PAUSE_MEMBER, target, false, this.server::pause, () -> {
                this.server.resume();
                awaitAccepting();
            });
            // The restore waits until the server accepts connections on the backup's data.
            // Not while the clock is behind fences issued before (see the class comment).
            case RESTART_EMPTY -> new StoreFault(FaultKind.RESTART_EMPTY, target + " from a backup with no rows", true,
                    this.server::kill, () -> {
                        sleep(Math.max(0, TimeUnit.NANOSECONDS.toMillis(this.clockBehindUntil - System.nanoTime())));
                        this.server.restore(this.emptyTables);
                        this.restoredAt = System.nanoTime();
                    });
            // No data lost: the checker reads the step from the target (History.clockStepTarget) and models it.
            // The heal waits until every statement of the server runs on the machine's clock again, so that the step
            // forward that a heal of a step back is lies within the recorded window.
            case CLOCK_STEP -> {
                Duration step = clockStep(fault);
                yield new StoreFault(FaultKind.CLOCK_STEP, History.clockStepTarget(target, step), false,
                        () -> {
                            if (step.isNegative()) {
                                // Keeps the stepped clock past every fence issued before the last restore.
                                long after = this.restoredAt + step.abs().plus(DatabaseServer.CLOCK_STEP_DELAY).toNanos();
                                sleep(Math.max(0, TimeUnit.NANOSECONDS.toMillis(after - System.nanoTime())));
                            }
                            this.server.stepClock(step);
                        }, () -> {
                            this.server.stepClock(Duration.ZERO);
                            sleep(DatabaseServer.CLOCK_STEP_DELAY.toMillis());
                            if (!step.isNegative()) {
                                // Fences issued up to now may be ahead of the machine's clock by up to the step.
                                this.clockBehindUntil = System.nanoTime() + step.toNanos();
                            }
                        });
            }
            case DELETE_ENTRIES -> {
                String hot = NemesisRunner.KEYS.get(0);
                String[] scopes = { "every entry", "the entries of '" + hot + "'", "the oldest entry of '" + hot + "'" };
                // In the heal, on a heal thread: during a pause or restart of the server the delete waits for its heal.
                yield new StoreFault(FaultKind.DELETE_ENTRIES, scopes[fault.target()], true, () -> {
                }, () -> System.out.println("nemesis: deleted " + deleteEntries(fault.target()) + " entries"));
            }
            default -> throw new IllegalArgumentException(target + " has no fault " + fault.action());
        };
    }

    /** Waits until the server answers a query on a new connection, for up to {@link #ACCEPT_TIMEOUT}. */
    private void awaitAccepting() {
        long deadline = System.nanoTime() + ACCEPT_TIMEOUT.toNanos();
        SQLException failure = null;
        while (System.nanoTime() - deadline < 0) {
            try (Connection connection = this.server.connect(); Statement statement = connection.createStatement()) {
                statement.execute("SELECT 1");
                return;
            }
            catch (SQLException ex) {
                failure = ex;
                sleep(100);
            }
        }
        throw new IllegalStateException(this.type.label() + " accepted no connection within " + ACCEPT_TIMEOUT
                + " after its heal", failure);
    }

    /**
     * Deletes entries behind the library's back until the database confirms a delete (see
     * {@link NemesisStore#untilConfirmed}): a delete whose connection broke before its answer
     * either committed before the confirmed retry or never did.
     */
    private long deleteEntries(int scope) {
        String entries = NAMESPACE + "ENTRY";
        String hot = lockId(NemesisRunner.KEYS.get(0));
        return NemesisStore.untilConfirmed(this.type.label(), DELETE_TIMEOUT, () -> {
            try (Connection connection = this.server.connect()) {
                if (scope == 0) {
                    try (Statement delete = connection.createStatement()) {
                        return delete.executeUpdate("DELETE FROM " + entries);
                    }
                }
                if (scope == 1) {
                    try (PreparedStatement delete = connection.prepareStatement("DELETE FROM " + entries
                            + " WHERE LOCK_ID = ?")) {
                        delete.setString(1, hot);
                        return delete.executeUpdate();
                    }
                }
                // Two statements: MariaDB does not let a DELETE read its own table in a subquery. If the oldest entry
                // goes meanwhile, nothing is deleted, as when the key had none.
                Long oldest = null;
                try (PreparedStatement select = connection.prepareStatement("SELECT MIN(FENCE) FROM " + entries
                        + " WHERE LOCK_ID = ?")) {
                    select.setString(1, hot);
                    try (ResultSet rows = select.executeQuery()) {
                        if (rows.next()) {
                            long fence = rows.getLong(1);
                            oldest = rows.wasNull() ? null : fence;
                        }
                    }
                }
                if (oldest == null) {
                    return 0;
                }
                try (PreparedStatement delete = connection.prepareStatement("DELETE FROM " + entries
                        + " WHERE LOCK_ID = ? AND FENCE = ?")) {
                    delete.setString(1, hot);
                    delete.setLong(2, oldest);
                    return delete.executeUpdate();
                }
            }
        });
    }

    /** @return the key's {@code LOCK_ID} as the store computes it (see {@link TestStore#entries}): no run key needs escaping */
    private static String lockId(String key) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                .digest(key.getBytes(StandardCharsets.UTF_8)));
        }
        catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * Counts the sessions that the database's clock still has alive, and their entries. A session
     * whose time has passed is dead for good (no renewal matches it, every waiter and sweep may
     * delete it with its entries), but once every worker is gone nobody is left to delete it: such
     * rows (of workers killed near the end) are listed for humans, not counted.
     */
    @Override
    public Observation observe() {
        String now = (this.type == Type.POSTGRES) ? "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT"
                : "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)";
        String sessions = NAMESPACE + "SESSION";
        String entries = NAMESPACE + "ENTRY";
        try (Connection connection = this.server.connect(); Statement statement = connection.createStatement()) {
            List<String> live = new ArrayList<>();
            List<String> expired = new ArrayList<>();
            try (ResultSet rows = statement.executeQuery("SELECT SESSION_ID, OWNER, EXPIRES_AT - " + now
                    + " FROM " + sessions)) {
                while (rows.next()) {
                    String session = rows.getString(2) + " " + rows.getString(1).substring(0, 8);
                    long left = rows.getLong(3);
                    ((left > 0) ? live : expired).add(session + " (" + left + " ms left)");
                }
            }
            List<String> liveEntries = new ArrayList<>();
            int expiredEntries = 0;
            try (ResultSet rows = statement.executeQuery("SELECT e.FENCE, e.LOCK_ID, s.EXPIRES_AT - " + now + " FROM "
                    + entries + " e LEFT JOIN " + sessions + " s ON s.SESSION_ID = e.SESSION_ID")) {
                while (rows.next()) {
                    long left = rows.getLong(3);
                    if (rows.wasNull() || left > 0) {
                        liveEntries.add(rows.getString(2).substring(0, 8) + "@" + rows.getLong(1));
                    }
                    else {
                        expiredEntries++;
                    }
                }
            }
            return new Observation(liveEntries.size(), live.size(), "live entries "
                    + liveEntries.stream().limit(10).toList() + ", live sessions " + live.stream().limit(10).toList()
                    + "; expired, left for a sweep: " + expired.size() + " sessions " + expired.stream().limit(5).toList()
                    + " with " + expiredEntries + " entries");
        }
        catch (SQLException ex) {
            throw new IllegalStateException("could not read what " + this.type.label() + " holds after the run", ex);
        }
    }

    private static void sleep(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", ex);
        }
    }

    @Override
    public void close() {
        this.server.close();
    }
}
