package io.github.distlock.jdbc;

import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.zaxxer.hikari.HikariDataSource;

import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockLostException;
import io.github.distlock.core.Fences;
import io.github.distlock.core.LockCore;
import io.github.distlock.testsupport.Delegation;
import io.github.distlock.testsupport.LostHolds;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

/** The JDBC registry's settings, schema and dialects, on H2 in memory. */
class JdbcLockRegistryTests {

    private static TestDatabase database;

    @BeforeAll
    static void startDatabase() {
        database = TestDatabase.start(TestDatabase.Kind.H2);
    }

    @AfterAll
    static void stopDatabase() {
        database.close();
    }

    @ParameterizedTest
    @ValueSource(strings = { "", "1ABC", "DISTRIBUTED-LOCK_", "A B", "a.b.c", "x;DROP TABLE y", "s.", ".p" })
    void badTablePrefixesAreRejectedNamingTheValue(String prefix) {
        JdbcLockRegistry.Builder builder = JdbcLockRegistry.builder(database.pool("bad-prefix", 1));
        assertThatIllegalArgumentException().isThrownBy(() -> builder.tablePrefix(prefix))
            .withMessageStartingWith("JDBC table prefix must");
        assertThatIllegalArgumentException().isThrownBy(() -> JdbcSchema.initialize(database.pool("schema", 1), prefix))
            .withMessageStartingWith("JDBC table prefix must");
    }

    @Test
    void badDurationsAreRejectedNamingTheValue() {
        JdbcLockRegistry.Builder builder = JdbcLockRegistry.builder(database.pool("bad-durations", 1));
        assertThatIllegalArgumentException().isThrownBy(() -> builder.leaseTtl(Duration.ofMillis(999)))
            .withMessage("JDBC lease TTL must be at least 1000ms, but was PT0.999S");
        assertThatIllegalArgumentException().isThrownBy(() -> builder.leaseTtl(Duration.ofNanos(1_500_000_001)))
            .withMessageContaining("whole number of milliseconds");
        assertThatIllegalArgumentException().isThrownBy(() -> builder.pollInterval(Duration.ZERO))
            .withMessage("JDBC poll interval must be between 1ms and 1m, but was PT0S");
        assertThatIllegalArgumentException().isThrownBy(() -> builder.requestTimeout(Duration.ofSeconds(-1)))
            .withMessageContaining("Request timeout must be positive");
        // The driver's network timeout is int milliseconds: a longer one made every call fail.
        assertThatIllegalArgumentException().isThrownBy(() -> builder.requestTimeout(Duration.ofDays(25)))
            .withMessage("Request timeout must be at most 24 days, but was PT600H");
        assertThatIllegalArgumentException().isThrownBy(() -> builder.ownerIdentity("a\nb"))
            .withMessageContaining("line breaks");
    }

    @Test
    void connectAfterCloseFailsInsteadOfThrowing() {
        JdbcLockRegistry closed = JdbcLockRegistry.builder(database.pool("closed", 1)).build();
        closed.close();
        assertThat(closed.connect()).failsWithin(Duration.ofSeconds(30)).withThrowableThat()
            .withMessageContaining("The lock registry is closed");
    }

    /**
     * A renewal stuck on a connection (one that died without a word, say) does not keep the next
     * from renewing the session on another: the hold outlives its TTL while the database answers.
     */
    @Test
    void aStuckRenewalDoesNotCostTheSession() throws Exception {
        CountDownLatch testDone = new CountDownLatch(1);
        AtomicInteger renewals = new AtomicInteger();
        assertSessionOutlivesRenewalFaults("STUCK_RENEWAL_", testDone, renewals, 1, renewal -> {
            if (renewal == 1) {
                testDone.await();
            }
        });
    }

    /**
     * Renewals that fail at once are retried every tenth of the TTL; a retry that then sticks just
     * before a due renewal must not keep that renewal from running: the next due one would come
     * after the session's deadline. With a 3 s TTL: renewals due every second, the second and its
     * two retries fail, the third retry (started 0.9 s after the second) hangs.
     */
    @Test
    void aRetryThatSticksJustBeforeADueRenewalDoesNotCostTheSession() throws Exception {
        CountDownLatch testDone = new CountDownLatch(1);
        AtomicInteger renewals = new AtomicInteger();
        assertSessionOutlivesRenewalFaults("STUCK_RETRY_", testDone, renewals, 5, renewal -> {
            if (renewal >= 2 && renewal <= 4) {
                throw new SQLException("connection reset (renewal " + renewal + ")");
            }
            if (renewal == 5) {
                testDone.await();
            }
        });
    }

    /** What a test does to the n-th renewal (from 1) on the calling thread, before it is prepared. */
    @FunctionalInterface
    private interface RenewalFault {

        void before(int renewal) throws Exception;
    }

    /**
     * Holds a key with a 3 s TTL on a registry whose renewals meet {@code fault}, and checks that
     * the session and its hold outlive two TTLs once {@code faultyRenewals} renewals were made.
     */
    private static void assertSessionOutlivesRenewalFaults(String prefix, CountDownLatch testDone,
            AtomicInteger renewals, int faultyRenewals, RenewalFault fault) throws Exception {
        HikariDataSource pool = database.pool(prefix.toLowerCase(java.util.Locale.ROOT), 4);
        JdbcSchema.initialize(pool, prefix);
        DataSource faulty = JdbcProxies.connectionsCalling(pool, (method, args) -> {
            if (method.getName().startsWith("prepare") && String.valueOf(args[0]).contains("SET EXPIRES_AT")) {
                fault.before(renewals.incrementAndGet());
            }
        });
        Duration ttl = Duration.ofSeconds(3);
        try (JdbcLockRegistry registry = JdbcLockRegistry.builder(faulty).tablePrefix(prefix).leaseTtl(ttl).build()) {
            FencedLock lock = registry.obtain("held", true);
            assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
            await().atMost(ttl.multipliedBy(3)).until(() -> renewals.get() >= faultyRenewals);
            await().during(ttl.multipliedBy(2)).atMost(ttl.multipliedBy(3))
                .until(() -> registry.isSessionAlive() && registry.getStatistics().getHoldsLost() == 0);
            lock.unlock();
        }
        finally {
            testDone.countDown();
            pool.close();
        }
    }

    /**
     * Closing the registry ends its waiters, those queued in the database and those of the same
     * process waiting at the unfair gate behind a thread of this process alike.
     */
    @Test
    void closingTheRegistryEndsEveryWaiterAlsoThoseAtTheUnfairGate() throws Exception {
        HikariDataSource pool = database.pool("closing", 4);
        JdbcSchema.initialize(pool, "CLOSING_");
        ExecutorService threads = Executors.newFixedThreadPool(3);
        CountDownLatch testDone = new CountDownLatch(1);
        try {
            JdbcLockRegistry registry = JdbcLockRegistry.builder(pool).tablePrefix("CLOSING_").build();
            CountDownLatch held = new CountDownLatch(1);
            threads.submit(() -> {
                registry.obtain("job").lock();
                held.countDown();
                testDone.await();
                return null;
            });
            assertThat(held.await(30, TimeUnit.SECONDS)).isTrue();
            Future<Boolean> fairWaiter = threads.submit(() -> registry.obtain("job", true).tryLock(5, TimeUnit.MINUTES));
            Future<Boolean> unfairWaiter = threads.submit(() -> registry.obtain("job").tryLock(5, TimeUnit.MINUTES));
            await().atMost(Duration.ofSeconds(30)).until(() -> registry.getWaitingThreadCount() == 2);
            registry.close();
            for (Future<Boolean> waiter : List.of(fairWaiter, unfairWaiter)) {
                assertThat(waiter).failsWithin(Duration.ofSeconds(30))
                    .withThrowableOfType(ExecutionException.class)
                    .havingCause()
                    .isInstanceOfSatisfying(LockAcquisitionException.class, (failure) -> assertThat(failure.getReason())
                        .isEqualTo(LockAcquisitionException.Reason.REGISTRY_CLOSED))
                    .withMessageContaining("the lock registry was closed");
            }
        }
        finally {
            testDone.countDown();
            threads.shutdownNow();
            pool.close();
        }
    }

    /**
     * A try-once behind a holder whose session expired (its process died) ends that session, as
     * every waiter does, within the one attempt it has: it does not wait for a sweep, and a read
     * it could not make in the time already over is no backend error.
     */
    @Test
    void aTryOnceBehindADeadHolderTakesTheKeyWithoutABackendError() throws Exception {
        DataSource pool = database.pool("dead-holder", 2);
        JdbcSchema.initialize(pool, "DEAD_HOLDER_");
        String key = "job";
        try (Connection connection = pool.getConnection(); Statement statement = connection.createStatement()) {
            connection.setAutoCommit(true);
            // What a killed process leaves: its session row, expired by the database's clock, and its entry.
            statement.executeUpdate("INSERT INTO DEAD_HOLDER_SESSION VALUES ('dead', 'killed', 0, 2000)");
            statement.executeUpdate("INSERT INTO DEAD_HOLDER_LOCK_KEY (LOCK_ID, LOCK_KEY) VALUES ('"
                    + JdbcTables.lockId(key) + "', '" + key + "')");
            statement.executeUpdate("INSERT INTO DEAD_HOLDER_ENTRY (LOCK_ID, SESSION_ID, ENTRY_NUMBER, ENTRY_VALUE) "
                    + "VALUES ('" + JdbcTables.lockId(key) + "', 'dead', 1, 'killed')");
        }
        // A long TTL: its first sweep comes after the test.
        try (JdbcLockRegistry registry = JdbcLockRegistry.builder(pool).tablePrefix("DEAD_HOLDER_")
            .leaseTtl(Duration.ofMinutes(3)).build()) {
            FencedLock lock = registry.obtain(key, true);
            assertThat(lock.tryLock()).as("try-once behind the dead holder").isTrue();
            lock.unlock();
            assertThat(registry.getStatistics().getBackendErrors()).as("backend errors").isZero();
        }
    }

    /**
     * A lost session tells its entries one after another, after its warning: a hold read in
     * between must already read as lost (the state is set up here by ending the session alone).
     */
    @Test
    void aHoldReadsAsLostOnceItsSessionIsEvenBeforeTheLossReachesItsEntry() throws Exception {
        JdbcSchema.initialize(database.pool("session-loss-schema", 1), "SESSION_LOSS_");
        try (JdbcLockRegistry registry = JdbcLockRegistry.builder(database.pool("session-loss", 2))
            .tablePrefix("SESSION_LOSS_")
            .build()) {
            FencedLock lock = registry.obtain("held", true);
            assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
            JdbcSession session = registry.jdbc().session();
            assertThat(session).isNotNull();
            assertThat(session.lose("ended by the test")).isTrue();
            LostHolds.assertReadsAsLostAndIsCountedOnce(lock, registry);
        }
    }

    /** The release is the first to find the entry gone: its WARN must name the hold's fence, local pass included. */
    @Test
    void aLocallyPassedHoldFoundGoneByItsReleaseIsLoggedWithItsOwnFence() throws Exception {
        JdbcSchema.initialize(database.pool("gone-at-release-schema", 1), "GONE_AT_RELEASE_");
        Logger logger = (Logger) LoggerFactory.getLogger(LockCore.class);
        ListAppender<ILoggingEvent> events = new ListAppender<>();
        events.start();
        logger.addAppender(events);
        ExecutorService second = Executors.newSingleThreadExecutor();
        // H2 cannot tell when another process queues, so passes end after the window: a long one.
        try (JdbcLockRegistry registry = JdbcLockRegistry.builder(database.pool("gone-at-release", 2))
            .tablePrefix("GONE_AT_RELEASE_")
            .localHandoff(new LocalHandoff(Duration.ofMinutes(5), Duration.ZERO))
            .build()) {
            FencedLock lock = registry.obtain("passed", false);
            lock.lock();
            Future<Long> passed = second.submit(() -> {
                lock.lock();
                return lock.getFence();
            });
            await().atMost(Duration.ofSeconds(30)).until(() -> registry.getWaitingThreadCount() == 1);
            lock.unlock();
            long fence = passed.get(30, TimeUnit.SECONDS);
            assertThat(Fences.pass(fence)).as("passed within the process").isPositive();
            assertThat(database.execute("DELETE FROM GONE_AT_RELEASE_ENTRY")).isEqualTo(1);
            LockLostException lost = second.submit(() -> catchThrowableOfType(lock::unlock, LockLostException.class))
                .get(30, TimeUnit.SECONDS);
            assertThat(lost).isNotNull();
            assertThat(lost.getFence()).isEqualTo(fence);
            // The held pass with its own fence; the pass before it, unlocked while the entry was kept after
            // the store last confirmed it (at its write), apart.
            assertThat(events.list).filteredOn(event -> event.getLevel() == Level.WARN)
                .extracting(ILoggingEvent::getFormattedMessage)
                .satisfiesExactlyInAnyOrder(
                        (held) -> assertThat(held).contains("(fence " + fence + ") lost while held"),
                        (unlocked) -> assertThat(unlocked).contains("1 hold(s) unlocked (fences " + (fence - 1) + " to "
                                + (fence - 1) + ")"));
            assertThat(registry.getStatistics().getHoldsLost()).as("the held pass and the one before").isEqualTo(2);
        }
        finally {
            logger.detachAppender(events);
            second.shutdownNow();
        }
    }

    @Test
    void missingTablesFailAcquisitionsWithAMessageThatSaysWhatToDo() {
        try (JdbcLockRegistry registry = withoutTables(database.pool("no-tables", 2))) {
            FencedLock lock = registry.obtain("orders", true);
            // Long enough for several attempts: on a loaded machine the first may get no answer in time.
            assertThatExceptionOfType(LockAcquisitionException.class)
                .isThrownBy(() -> lock.tryLock(3, TimeUnit.SECONDS))
                .withMessageContaining("MISSING_")
                .withMessageContaining("initialize-schema");
        }
    }

    @Test
    void aFailureCutShortByTheDeadlineStillReportsTheReasonAnEarlierAttemptGot() throws Exception {
        // After the first statement on the missing tables, the pool hands out no more connections,
        // so the next attempt ends with "no answer in time" at the caller's deadline.
        CountDownLatch poolHangs = new CountDownLatch(1);
        CountDownLatch testDone = new CountDownLatch(1);
        HikariDataSource pool = database.pool("hanging-pool", 2);
        DataSource hangingAfterFirstStatement = (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] { DataSource.class }, (proxy, method, args) -> {
                    if (method.getName().equals("getConnection") && poolHangs.getCount() == 0) {
                        testDone.await();
                    }
                    Object answer = Delegation.invoke(pool, method, args);
                    return (answer instanceof Connection connection) ? settingFlagOnStatements(connection, poolHangs)
                            : answer;
                });
        try (JdbcLockRegistry registry = withoutTables(hangingAfterFirstStatement)) {
            FencedLock lock = registry.obtain("orders", true);
            // Time for a hanging attempt after the first, however slow that first one was.
            assertThatExceptionOfType(LockAcquisitionException.class)
                .isThrownBy(() -> lock.tryLock(3, TimeUnit.SECONDS))
                .withMessageContaining("no answer in time")
                .withMessageContaining("an earlier attempt")
                .withMessageContaining("MISSING_")
                .withMessageContaining("initialize-schema");
        }
        finally {
            testDone.countDown();
            pool.close();
        }
    }

    /** @return a registry whose tables were never created */
    private static JdbcLockRegistry withoutTables(DataSource dataSource) {
        return JdbcLockRegistry.builder(dataSource)
            .tablePrefix("MISSING_")
            .requestTimeout(Duration.ofSeconds(2))
            .description("H2 under test")
            .build();
    }

    private static Connection settingFlagOnStatements(Connection connection, CountDownLatch flag) {
        return (Connection) Proxy.newProxyInstance(JdbcLockRegistryTests.class.getClassLoader(),
                new Class<?>[] { Connection.class }, (proxy, method, args) -> {
                    if (method.getName().startsWith("prepare")) {
                        flag.countDown();
                    }
                    return Delegation.invoke(connection, method, args);
                });
    }


    @Test
    void tablesInASchemaOfTheirOwnWorkAndTheScriptRunsTwiceWithoutHarm() throws Exception {
        database.execute("CREATE SCHEMA IF NOT EXISTS LOCKS");
        JdbcSchema.initialize(database.pool("schema", 1), "LOCKS.APP_");
        JdbcSchema.initialize(database.pool("schema-again", 1), "LOCKS.APP_");
        try (JdbcLockRegistry registry = JdbcLockRegistry.builder(database.pool("schema-registry", 2))
            .tablePrefix("LOCKS.APP_")
            .build()) {
            FencedLock lock = registry.obtain("orders", true);
            assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
            assertThat(database.queryLong("SELECT COUNT(*) FROM LOCKS.APP_ENTRY")).isEqualTo(1);
            lock.unlock();
        }
    }

    /** A schema-qualified prefix and the unqualified one its name folds to are two namespaces: two notification channels. */
    @Test
    void aPrefixInASchemaAndTheNameItFoldsToDoNotShareANotificationChannel() {
        JdbcTables qualified = new JdbcTables("locks.DISTRIBUTED_LOCK_", JdbcDialect.POSTGRESQL);
        JdbcTables folded = new JdbcTables("LOCKS_DISTRIBUTED_LOCK_", JdbcDialect.POSTGRESQL);
        assertThat(qualified.channel).isNotEqualTo(folded.channel);
        assertThat(folded.channel).as("unqualified prefixes keep their channel").isEqualTo("locks_distributed_lock_released");
        assertThat(new JdbcTables("locks.distributed_lock_", JdbcDialect.POSTGRESQL).channel)
            .as("one prefix whatever its case").isEqualTo(qualified.channel);
    }

    @Test
    void prefixesThatDifferOnlyInCaseAreOnePrefixOnEveryDatabase() throws Exception {
        JdbcSchema.initialize(database.pool("case-schema", 1), "cased_");
        try (JdbcLockRegistry lower = JdbcLockRegistry.builder(database.pool("lower", 2)).tablePrefix("cased_").build();
                JdbcLockRegistry upper = JdbcLockRegistry.builder(database.pool("upper", 2)).tablePrefix("CASED_")
                    .build()) {
            assertThat(lower.getNamespace()).isEqualTo("CASED_");
            FencedLock held = lower.obtain("orders", true);
            assertThat(held.tryLock(5, TimeUnit.SECONDS)).isTrue();
            assertThat(upper.obtain("orders", true).tryLock(0, TimeUnit.SECONDS)).isFalse();
            held.unlock();
        }
        assertThat(JdbcTables.normalize("Orders.locks_")).isEqualTo("Orders.LOCKS_");
    }

    @Test
    void aRowOfTheSessionThatNoAcquisitionOwnsIsDeletedByTheNextRenewal() throws Exception {
        // As a write that committed after its caller gave up and after its removal found nothing would leave it.
        JdbcSchema.initialize(database.pool("ghost-schema", 1), "GHOST_");
        try (JdbcLockRegistry owner = JdbcLockRegistry.builder(database.pool("ghost-owner", 2)).tablePrefix("GHOST_")
            .leaseTtl(Duration.ofMillis(1500)).build();
                JdbcLockRegistry peer = JdbcLockRegistry.builder(database.pool("ghost-peer", 2))
                    .tablePrefix("GHOST_").build()) {
            FencedLock warmUp = owner.obtain("warm-up", true);
            assertThat(warmUp.tryLock(5, TimeUnit.SECONDS)).isTrue();
            warmUp.unlock();
            String lockId = JdbcTables.lockId("ghost");
            database.execute("INSERT INTO GHOST_LOCK_KEY (LOCK_ID, LOCK_KEY) VALUES ('" + lockId + "', 'ghost')");
            database.execute("INSERT INTO GHOST_ENTRY (LOCK_ID, SESSION_ID, ENTRY_NUMBER, ENTRY_VALUE) VALUES ('"
                    + lockId + "', '" + owner.sessionId() + "', 999999, 'ghost')");
            // The owner's session stays alive, so only its renewal (every 500 ms) can clear the ghost.
            FencedLock lock = peer.obtain("ghost", true);
            assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
            lock.unlock();
            assertThat(owner.getStatistics().getHoldsLost()).isZero();
        }
    }

    /**
     * H2 restored from an older copy of the lock tables (their script, run again) has forgotten the
     * fences issued since, with the rows and the counters that numbered them; the next fence is
     * still above every one issued before.
     */
    @Test
    void fencesAfterARestoreOfAnOlderCopyAreAboveEveryFenceIssuedBefore(@TempDir Path directory) throws Exception {
        JdbcSchema.initialize(database.pool("restore-schema", 1), "RESTORED_");
        String tables = "RESTORED_ENTRY, RESTORED_LOCK_KEY, RESTORED_SESSION";
        Path copy = directory.resolve("copy.sql");
        List<Long> issued = new ArrayList<>();
        try (JdbcLockRegistry registry = JdbcLockRegistry.builder(database.pool("before-restore", 2))
            .tablePrefix("RESTORED_").build()) {
            FencedLock lock = registry.obtain("restored", true);
            for (int i = 0; i < 110; i++) {
                if (i == 10) {
                    database.queryStrings("SCRIPT TO '" + copy + "' TABLE " + tables);
                }
                assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
                issued.add(lock.getFence());
                lock.unlock();
            }
        }
        database.execute("DROP TABLE " + tables);
        database.execute("RUNSCRIPT FROM '" + copy + "'");
        try (JdbcLockRegistry registry = JdbcLockRegistry.builder(database.pool("after-restore", 2))
            .tablePrefix("RESTORED_").build()) {
            FencedLock lock = registry.obtain("restored", true);
            assertThat(lock.tryLock(10, TimeUnit.SECONDS)).isTrue();
            assertThat(lock.getFence()).as("the first fence after the restore, against the %d issued before",
                    issued.size()).isGreaterThan(Collections.max(issued));
            lock.unlock();
        }
    }

    @Test
    void onlySupportedDatabasesAndVersionsAreAccepted() {
        assertThat(JdbcDialect.of("PostgreSQL", 15, 4)).isEqualTo(JdbcDialect.POSTGRESQL);
        assertThat(JdbcDialect.of("MariaDB", 10, 11)).isEqualTo(JdbcDialect.MYSQL);
        assertThat(JdbcDialect.of("MySQL", 8, 0)).isEqualTo(JdbcDialect.MYSQL);
        assertThat(JdbcDialect.of("H2", 2, 4)).isEqualTo(JdbcDialect.H2);
        assertThatIllegalStateException().isThrownBy(() -> JdbcDialect.of("MySQL", 5, 7))
            .withMessageContaining("MySQL 8.0 or later");
        assertThatIllegalStateException().isThrownBy(() -> JdbcDialect.of("PostgreSQL", 9, 6))
            .withMessageContaining("PostgreSQL 10.0 or later");
        assertThatIllegalStateException().isThrownBy(() -> JdbcDialect.of("Oracle", 19, 0))
            .withMessageContaining("supports PostgreSQL 10+, MySQL 8.0+, MariaDB 10.3+ and H2 2.x")
            .withMessageContaining("Oracle 19.0");
    }

    @Test
    void keysThatNeedEscapingAreDistinctAndStoredReadably() {
        assertThat(JdbcTables.lockId("a\u0000")).isNotEqualTo(JdbcTables.lockId("a%u0000"));
        assertThat(JdbcTables.unescape(JdbcTables.escape("a\uD800b%"))).isEqualTo("a\uD800b%");
        assertThat(JdbcTables.escape("orders/42")).isEqualTo("orders/42");
    }
}
