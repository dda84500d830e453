package io.github.distlock.jdbc;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import com.zaxxer.hikari.HikariDataSource;
import io.github.distlock.FencedLock;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockLostException;
import io.github.distlock.core.Fences;
import io.github.distlock.testsupport.BackgroundAcquirer;
import io.github.distlock.testsupport.DatabaseServer;
import io.github.distlock.testsupport.FaultInjectionTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static io.github.distlock.testsupport.BoundedCalls.assertAGiveUpReturnsAtItsTimeoutWhileFrozen;
import static io.github.distlock.testsupport.BoundedCalls.assertBoundedWhileDown;
import static io.github.distlock.testsupport.LockAttempts.tryAndRelease;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A database failing under the locks: a crash and restart, a frozen server, a server that is not
 * there at start, a pool the application exhausted. Subclasses say which database. Calls end within their bounds (G10), holds
 * survive an outage shorter than the TTL (the session's expiry is the database's), holds the
 * registry could not renew are reported lost (G5), fences keep increasing (G3), and locking
 * resumes once the database answers again.
 */
@FaultInjectionTest
abstract class AbstractJdbcFaultIntegrationTests {

    private static final Duration TTL = Duration.ofSeconds(10);

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(2);

    private static final Duration LONG = Duration.ofSeconds(30);

    private static final String DESCRIPTION = "the database under test";

    private TestDatabase database;

    private String prefix;

    private JdbcLockRegistry holder;

    private JdbcLockRegistry waiter;

    private final List<JdbcLockRegistry> others = new ArrayList<>();

    /** @return which database */
    protected abstract TestDatabase.Kind kind();

    @BeforeEach
    void start() {
        this.database = TestDatabase.start(kind());
        this.prefix = "F" + UUID.randomUUID().toString().substring(0, 8).toUpperCase(java.util.Locale.ROOT) + "_";
        this.database.createTables(this.prefix);
        this.holder = registry(this.database.pool("holder"), "holder", TTL);
        this.waiter = registry(this.database.pool("waiter"), "waiter", TTL);
    }

    private JdbcLockRegistry registry(HikariDataSource pool, String owner, Duration ttl) {
        JdbcLockRegistry registry = JdbcLockRegistry.builder(pool).tablePrefix(this.prefix).leaseTtl(ttl)
            .ownerIdentity(owner).requestTimeout(REQUEST_TIMEOUT).description(DESCRIPTION).build();
        this.others.add(registry);
        return registry;
    }

    /** Starts a registry whose first sweep, of both kinds, follows its first renewal a second after it connects. */
    private void startSweeper() throws Exception {
        JdbcLockRegistry sweeper = registry(this.database.pool("sweeper"), "sweeper", Duration.ofSeconds(3));
        sweeper.connect().get(LONG.toSeconds(), TimeUnit.SECONDS);
    }

    private DatabaseServer server() {
        return this.database.server();
    }

    @AfterEach
    void tearDown() {
        server().resume();
        this.others.forEach(JdbcLockRegistry::close);
        this.database.close();
    }

    /**
     * G3 across a real step back of the database server's clock (libfaketime): a key with no entry
     * left gets a fence above its last one, which its row keeps, while a key never used before gets
     * the stepped clock's (so the step did take effect); and a key held across the step stays held.
     */
    @Test
    void aStepBackOfTheDatabaseClockLowersNoFenceOfAnIdleKey() throws Exception {
        try (TestDatabase stepped = TestDatabase.startWithSteppableClock(kind())) {
            stepped.createTables(this.prefix);
            JdbcLockRegistry registry = registry(stepped.pool("stepped", 4), "stepped", TTL);
            FencedLock idle = registry.obtain("idle-across-the-step");
            idle.lock();
            long before = Fences.storeFence(idle.getFence());
            idle.unlock();
            FencedLock held = registry.obtain("held-across-the-step");
            held.lock();
            long heldFence = held.getFence();
            String entriesOfIdle = "SELECT COUNT(*) FROM " + this.prefix + "ENTRY WHERE LOCK_ID = '"
                    + JdbcTables.lockId("idle-across-the-step") + "'";
            await().atMost(LONG).until(() -> stepped.queryLong(entriesOfIdle) == 0);

            stepClockAndAwait(stepped, Duration.ofSeconds(-30));

            FencedLock fresh = registry.obtain("first-used-after-the-step");
            fresh.lock();
            long freshFence = Fences.storeFence(fresh.getFence());
            fresh.unlock();
            assertThat(freshFence).as("a new key's fence, from the clock 30 s behind").isLessThan(before);
            idle.lock();
            try {
                assertThat(Fences.storeFence(idle.getFence()))
                    .as("the idle key's fence after the step back, against its last (%d)", before)
                    .isGreaterThan(before);
            }
            finally {
                idle.unlock();
            }
            assertThat(held.isLockedByCurrentThread()).as("a hold across the step back").isTrue();
            assertThat(held.getFence()).isEqualTo(heldFence);
            held.unlock();
            stepped.server().stepClock(Duration.ZERO);
        }
    }

    /**
     * A step ahead of the database server's clock past a session's expiry: the database, and so every
     * other process, counts the session dead before its renewal is due here. An acquisition must not
     * hold on it (in the PostgreSQL nemesis minute, seed 20260443, another process took the key 16 ms
     * after such a grant): it starts a new session and holds on that.
     */
    @Test
    void anAcquisitionAfterTheDatabaseClockSteppedPastItsSessionsExpiryHoldsOnANewSession() throws Exception {
        try (TestDatabase stepped = TestDatabase.startWithSteppableClock(kind())) {
            stepped.createTables(this.prefix);
            // Renewed every 20 s: the step and the acquisition come well before the first renewal.
            Duration ttl = Duration.ofSeconds(60);
            JdbcLockRegistry registry = registry(stepped.pool("stepped", 4), "stepped", ttl);
            JdbcLockRegistry other = registry(stepped.pool("other", 4), "other", ttl);
            FencedLock warmUp = registry.obtain("starts-the-session");
            warmUp.lock();
            warmUp.unlock();

            stepClockAndAwait(stepped, Duration.ofSeconds(120));

            FencedLock lock = registry.obtain("after-the-step");
            // A try-once makes one attempt, on the session the database expired: it does not hold, and
            // since the database answered, it is no store failure (LockAcquisitionException) either.
            assertThat(lock.tryLock()).as("a try-once on the expired session").isFalse();
            assertThat(lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).as("an acquisition after the step").isTrue();
            try {
                long left = stepped.queryLong("SELECT s.EXPIRES_AT - " + databaseNow() + " FROM " + this.prefix + "SESSION s JOIN "
                        + this.prefix + "ENTRY e ON e.SESSION_ID = s.SESSION_ID WHERE e.LOCK_ID = '"
                        + JdbcTables.lockId("after-the-step") + "'");
                assertThat(left).as("milliseconds the holder's session has left by the database's clock").isPositive();
                assertThat(tryAndRelease(other.obtain("after-the-step"))).as("another process's try-once").isFalse();
                assertThat(lock.isLockedByCurrentThread()).isTrue();
            }
            finally {
                lock.unlock();
            }
            assertThat(registry.getStatistics().getSessionsLost()).as("sessions the database expired early").isEqualTo(1);
            stepped.server().stepClock(Duration.ZERO);
        }
    }

    /**
     * Steps the server's clock and waits until the registries' calls run on it. Every server process
     * (on PostgreSQL one per connection, the registry's LISTEN connection among them) reads the offset
     * at its next look at the clock, but a statement that read it just before may still run on the old
     * one for CLOCK_STEP_DELAY: the calls run on the stepped clock once that has passed and a
     * connection shows it (within 5 s).
     */
    private void stepClockAndAwait(TestDatabase stepped, Duration offset) {
        stepped.server().stepClock(offset);
        long steppedAt = System.nanoTime();
        String clock = "SELECT " + databaseNow();
        await().atMost(LONG).until(() -> System.nanoTime() - steppedAt > DatabaseServer.CLOCK_STEP_DELAY.toNanos()
                && Math.abs(stepped.queryLong(clock) - System.currentTimeMillis() - offset.toMillis()) < 5_000);
    }

    /** @return the SQL of the database's clock in epoch milliseconds, as the store reads it */
    private String databaseNow() {
        return ((kind() == TestDatabase.Kind.POSTGRESQL) ? JdbcDialect.POSTGRESQL : JdbcDialect.MYSQL).nowMillis();
    }

    @Test
    void holdSurvivesACrashAndRestartShorterThanTheTtlAndTheWaiterGetsTheLockAfterwards() throws Exception {
        FencedLock held = this.holder.obtain("restart", true);
        held.lock();
        long holderFence = held.getFence();
        CompletableFuture<Long> next = BackgroundAcquirer.acquireAndRelease(this.waiter.obtain("restart", true), LONG);
        await().atMost(LONG).until(() -> this.waiter.getWaitingThreadCount() == 1);

        server().kill();
        assertBoundedWhileDown(this.holder.obtain("another-key", true));
        server().restart();

        // The session row and both entries were committed: the holder keeps renewing once the
        // database is back, within the TTL; the waiter (on PostgreSQL with its LISTEN connection
        // replaced) still waits.
        long restartedAt = System.nanoTime();
        await().atMost(LONG).until(() -> this.holder.getSessionRenewalAge() != null
                && this.holder.getSessionRenewalAge().toNanos() < System.nanoTime() - restartedAt);
        assertThat(held.isLockedByCurrentThread()).isTrue();
        assertThat(next).isNotDone();
        held.unlock();
        assertThat(next.get(LONG.toSeconds(), TimeUnit.SECONDS)).isGreaterThan(holderFence);
        assertThat(this.holder.getStatistics().getHoldsLost()).isZero();
    }

    @Test
    void aTimedWaitThatEndsWhileTheDatabaseIsFrozenReturnsAtItsTimeout() throws Exception {
        FencedLock held = this.holder.obtain("late", true);
        held.lock();
        assertAGiveUpReturnsAtItsTimeoutWhileFrozen(this.waiter.obtain("late", true),
                () -> this.waiter.getWaitingThreadCount() == 1,
                () -> this.holder.describeLock("late", 10).waiters().isEmpty(), () -> server().pause(),
                () -> server().resume());
        held.unlock();
    }

    @Test
    void callsEndWithinTheirBoundsWhileTheDatabaseIsFrozenAndHoldsSurviveAShortFreeze() throws Exception {
        FencedLock held = this.holder.obtain("frozen", true);
        held.lock();

        server().pause();
        assertBoundedWhileDown(this.waiter.obtain("frozen", false));
        long start = System.nanoTime();
        assertThatExceptionOfType(LockAcquisitionException.class)
            .isThrownBy(() -> this.waiter.obtain("other-key", true).lock())
            .withMessageContaining(DESCRIPTION);
        // An untimed lock() bears a failing store for one request timeout; allow a loaded machine more.
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(REQUEST_TIMEOUT.plusSeconds(3));
        start = System.nanoTime();
        assertThatExceptionOfType(IllegalStateException.class)
            .isThrownBy(() -> this.waiter.describeLock("frozen", 10))
            .withMessageContaining(DESCRIPTION);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(REQUEST_TIMEOUT.plusSeconds(3));
        server().resume();

        assertThat(held.isLockedByCurrentThread()).isTrue();
        held.unlock();
        FencedLock after = this.waiter.obtain("frozen", true);
        assertThat(after.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        after.unlock();
        assertThat(this.holder.getStatistics().getHoldsLost()).isZero();
    }

    @Test
    void databaseMissingAtStartFailsWithinTheBoundAndLockingWorksOnceItIsUp() throws Exception {
        server().kill();
        JdbcLockRegistry cold = registry(this.database.pool("cold"), "cold", TTL);
        assertThat(cold.connect()).failsWithin(LONG)
            .withThrowableOfType(ExecutionException.class)
            .withMessageContaining(DESCRIPTION);
        FencedLock lock = cold.obtain("cold", true);
        long start = System.nanoTime();
        assertThatExceptionOfType(LockAcquisitionException.class)
            .isThrownBy(() -> lock.tryLock(500, TimeUnit.MILLISECONDS))
            .withMessageContaining(DESCRIPTION);
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));

        server().restart();
        // Polled on this thread: the lock must be held by the thread that unlocks it.
        await().atMost(LONG).pollInSameThread().ignoreExceptions().until(() -> lock.tryLock(1, TimeUnit.SECONDS));
        assertThat(lock.getFence()).isPositive();
        lock.unlock();
    }

    @Test
    void aPoolTheApplicationExhaustedBoundsCallsAndAHoldThatCannotBeRenewedIsReportedLost() throws Exception {
        Duration shortTtl = Duration.ofSeconds(3);
        HikariDataSource pool = this.database.pool("shared", 2);
        JdbcLockRegistry shared = registry(pool, "shared", shortTtl);
        FencedLock held = shared.obtain("exhausted", true);
        held.lock();

        // The application takes every connection of the pool the registry shares (on PostgreSQL the
        // registry keeps one for LISTEN), and snatches any the registry gives back.
        pool.getHikariConfigMXBean().setConnectionTimeout(250);
        List<Connection> taken = new CopyOnWriteArrayList<>();
        AtomicBoolean hogging = new AtomicBoolean(true);
        Thread hog = new Thread(() -> {
            while (hogging.get()) {
                try {
                    taken.add(pool.getConnection());
                }
                catch (SQLException ex) {
                    // None free: wait again.
                }
            }
        }, "application");
        hog.start();
        await().atMost(LONG).until(() -> pool.getHikariPoolMXBean().getThreadsAwaitingConnection() > 0
                && pool.getHikariPoolMXBean().getIdleConnections() == 0
                && taken.size() == ((kind() == TestDatabase.Kind.POSTGRESQL) ? 1 : 2));
        try {
            assertBoundedWhileDown(shared.obtain("another-key", true));
            // No renewal gets a connection: the hold ends one TTL after the last one, and says so.
            await().atMost(LONG).pollInSameThread().until(() -> !held.isLockedByCurrentThread());
            assertThatExceptionOfType(LockLostException.class).isThrownBy(held::unlock)
                .withMessageContaining("exhausted");
            assertThat(shared.getStatistics().getHoldsLost()).isEqualTo(1);
            // Another process takes over once the database expired the session.
            FencedLock other = this.waiter.obtain("exhausted", true);
            assertThat(other.tryLock(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
            other.unlock();
        }
        finally {
            hogging.set(false);
            hog.join(LONG.toMillis());
            for (Connection connection : taken) {
                connection.close();
            }
        }
        // With connections back, the registry starts a new session and locks again.
        FencedLock again = shared.obtain("exhausted", true);
        await().atMost(LONG).pollInSameThread().ignoreExceptions().until(() -> again.tryLock(1, TimeUnit.SECONDS));
        again.unlock();
    }

    @Test
    void sweepsDeleteExpiredSessionsAndIdleKeysWhileAnotherTransactionHoldsRowsInUse() throws Exception {
        // On InnoDB a DELETE that scans for its rows locks every row it reads: one that waited for a
        // row in use would delete nothing, and stall the renewals and acquisitions that need its locks.
        FencedLock busy = this.holder.obtain("busy", true);
        busy.lock();
        String sessions = this.prefix + "SESSION";
        String keys = this.prefix + "LOCK_KEY";
        this.database.execute("INSERT INTO " + sessions + " (SESSION_ID, OWNER, EXPIRES_AT, LEASE_MILLIS) "
                + "VALUES ('a-live-session', 'test', 9000000000000000, 1000), ('expired-session', 'test', 0, 1000)");
        this.database.execute("INSERT INTO " + keys + " (LOCK_ID, LOCK_KEY) VALUES ('" + JdbcTables.lockId("idle")
                + "', 'idle')");
        String expiredLeft = "SELECT COUNT(*) FROM " + sessions + " WHERE SESSION_ID = 'expired-session'";
        String idleLeft = "SELECT COUNT(*) FROM " + keys + " WHERE LOCK_ID = '" + JdbcTables.lockId("idle") + "'";
        try (Connection other = this.database.pool("other-transaction", 1).getConnection()) {
            other.setAutoCommit(false);
            try (Statement statement = other.createStatement()) {
                statement.executeQuery("SELECT SESSION_ID FROM " + sessions
                        + " WHERE SESSION_ID = 'a-live-session' FOR UPDATE").close();
                statement.executeQuery("SELECT LOCK_ID FROM " + keys + " WHERE LOCK_ID = '" + JdbcTables.lockId("busy")
                        + "' FOR UPDATE").close();
            }
            startSweeper();
            await().atMost(LONG).until(() -> this.database.queryLong(expiredLeft) == 0
                    && this.database.queryLong(idleLeft) == 0);
            other.rollback();
        }
        assertThat(this.database.queryLong("SELECT COUNT(*) FROM " + sessions + " WHERE SESSION_ID = 'a-live-session'"))
            .isOne();
        assertThat(busy.isLockedByCurrentThread()).isTrue();
        busy.unlock();
    }

    @Test
    void oneSweepDeletesMoreIdleKeysThanItReadsAtATime() throws Exception {
        FencedLock busy = this.holder.obtain("busy", true);
        busy.lock();
        String keys = this.prefix + "LOCK_KEY";
        int idle = 2 * JdbcTables.SWEEP_BATCH + JdbcTables.IDLE_KEYS_PER_DELETE / 2;
        for (int from = 0; from < idle; from += 100) {
            StringBuilder rows = new StringBuilder();
            for (int i = from; i < Math.min(from + 100, idle); i++) {
                rows.append((i > from) ? ", " : "").append("('").append(JdbcTables.lockId("idle-" + i))
                    .append("', 'idle-").append(i).append("')");
            }
            this.database.execute("INSERT INTO " + keys + " (LOCK_ID, LOCK_KEY) VALUES " + rows);
        }
        // Keys created faster than one batch a minute must not pile up: one sweep, the first, deletes them all.
        startSweeper();
        await().atMost(LONG).until(() -> this.database.queryLong("SELECT COUNT(*) FROM " + keys
                + " WHERE LOCK_KEY LIKE 'idle-%'") == 0);
        assertThat(this.database.queryLong("SELECT COUNT(*) FROM " + keys + " WHERE LOCK_ID = '"
                + JdbcTables.lockId("busy") + "'")).isOne();
        busy.unlock();
    }

    @Test
    void anIdleKeySweepThatMeetsAnEntryWrittenMeanwhileLeavesThatKeyAndDeletesTheOthers() throws Exception {
        String sessions = this.prefix + "SESSION";
        String keys = this.prefix + "LOCK_KEY";
        String meanwhile = JdbcTables.lockId("written-meanwhile");
        String idle = JdbcTables.lockId("idle");
        this.database.execute("INSERT INTO " + sessions + " (SESSION_ID, OWNER, EXPIRES_AT, LEASE_MILLIS) "
                + "VALUES ('a-live-session', 'test', 9000000000000000, 1000)");
        this.database.execute("INSERT INTO " + keys + " (LOCK_ID, LOCK_KEY) VALUES ('" + meanwhile + "', 'written-meanwhile')");
        this.database.execute("INSERT INTO " + keys + " (LOCK_ID, LOCK_KEY) VALUES ('" + idle + "', 'idle')");
        String waitingDeletes = (kind() == TestDatabase.Kind.POSTGRESQL)
                ? "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM "
                        + keys + "%'"
                : "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE "
                        + "'DELETE FROM " + keys + "%'";
        try (Connection other = this.database.pool("other-transaction", 1).getConnection()) {
            // The other transaction writes an entry under the key row's lock, as an acquisition does,
            // while a sweep that found the key without entries waits to delete its row.
            other.setAutoCommit(false);
            try (Statement statement = other.createStatement()) {
                statement.executeQuery("SELECT LOCK_ID FROM " + keys + " WHERE LOCK_ID = '" + meanwhile + "' FOR UPDATE")
                    .close();
                startSweeper();
                await().atMost(LONG).until(() -> this.database.queryLong(waitingDeletes) > 0);
                statement.executeUpdate("INSERT INTO " + this.prefix + "ENTRY (LOCK_ID, SESSION_ID, ENTRY_NUMBER, "
                        + "ENTRY_VALUE) VALUES ('" + meanwhile + "', 'a-live-session', 1, 'test')");
            }
            other.commit();
        }
        await().atMost(LONG).until(() -> this.database.queryLong("SELECT COUNT(*) FROM " + keys + " WHERE LOCK_ID = '"
                + idle + "'") == 0);
        assertThat(this.database.queryLong("SELECT COUNT(*) FROM " + keys + " WHERE LOCK_ID = '" + meanwhile + "'"))
            .isOne();
    }

    @Test
    void removalsTheDatabaseDidNotConfirmAreRetriedUntilItAnswers() throws Exception {
        FencedLock held = this.holder.obtain("unconfirmed", true);
        held.lock();
        CompletableFuture<Boolean> gaveUp = new CompletableFuture<>();
        FencedLock waiting = this.waiter.obtain("unconfirmed", true);
        Thread waiterThread = new Thread(() -> {
            try {
                gaveUp.complete(!waiting.tryLock(3, TimeUnit.SECONDS));
            }
            catch (Throwable ex) {
                gaveUp.completeExceptionally(ex);
            }
        }, "giving-up");
        waiterThread.start();
        String entries = "SELECT COUNT(*) FROM " + this.prefix + "ENTRY WHERE LOCK_ID = '"
                + JdbcTables.lockId("unconfirmed") + "'";
        await().atMost(LONG).until(() -> this.database.queryLong(entries) == 2);

        // Frozen while the waiter gives up and the holder releases: neither removal is confirmed.
        server().pause();
        assertThat(gaveUp.get(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
        long start = System.nanoTime();
        held.unlock();
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(REQUEST_TIMEOUT.plusSeconds(3));
        server().resume();

        // Both are removed in the background long before the 10 s TTL would have ended them.
        long resumedAt = System.nanoTime();
        await().atMost(LONG).until(() -> this.database.queryLong(entries) == 0);
        assertThat(Duration.ofNanos(System.nanoTime() - resumedAt)).isLessThan(TTL.dividedBy(2));
        FencedLock next = this.waiter.obtain("unconfirmed", true);
        assertThat(next.tryLock(0, TimeUnit.SECONDS)).isTrue();
        next.unlock();
    }

    /**
     * A database restored from an older copy (a backup, or a replica that had not replicated the
     * last acquisitions when it was promoted) has forgotten the fences it issued since, with the
     * rows and the counters that numbered them; the next acquisition's fence is still above every
     * fence issued before (G12). More acquisitions follow the copy than PostgreSQL logs a sequence
     * ahead of its use (32), so that a fence drawn from a sequence would come again.
     */
    @Test
    void fencesAfterARestoreOfAnOlderCopyAreAboveEveryFenceIssuedBefore() throws Exception {
        FencedLock lock = this.holder.obtain("restored", true);
        List<Long> issued = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            issued.add(acquireAndRelease(lock));
        }
        Path copy = server().backUp();
        for (int i = 0; i < 100; i++) {
            issued.add(acquireAndRelease(lock));
        }
        server().restore(copy);

        JdbcLockRegistry afterRestore = registry(this.database.pool("after-restore"), "after-restore", TTL);
        long next = acquireAndRelease(afterRestore.obtain("restored", true));
        assertThat(next).as("the first fence after the restore, against the %d issued before", issued.size())
            .isGreaterThan(Collections.max(issued));
    }

    /** @return the fence of one acquisition, tried again while the database has just restarted */
    private static long acquireAndRelease(FencedLock lock) {
        // The first call after a restart may take a connection the restart closed, and fail.
        await().atMost(LONG).pollInSameThread().ignoreException(LockAcquisitionException.class)
            .until(() -> lock.tryLock(LONG.toSeconds(), TimeUnit.SECONDS));
        long fence = lock.getFence();
        lock.unlock();
        return fence;
    }
}
