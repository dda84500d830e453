package io.github.distlock.jdbc;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.distlock.AbstractLockRegistryContractTests;
import io.github.distlock.FencedLock;
import io.github.distlock.LockRegistry;
import io.github.distlock.core.Fences;
import io.github.distlock.testsupport.BackgroundAcquirer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The registry contract on a database: {@link #registry()} and {@link #peerRegistry()} use pools
 * and sessions of their own, as two processes would. Subclasses start their database with
 * {@link #start(TestDatabase.Kind)} from a {@code @BeforeAll}.
 */
abstract class AbstractJdbcLockRegistryContractTests extends AbstractLockRegistryContractTests {

    private static final String PREFIX = "CONTRACT_";

    private static TestDatabase database;

    private static JdbcLockRegistry registry;

    private static JdbcLockRegistry peer;

    static void start(TestDatabase.Kind kind) {
        database = TestDatabase.start(kind);
        database.createTables(PREFIX);
        registry = newRegistry("registry");
        peer = newRegistry("peer");
    }

    private static JdbcLockRegistry newRegistry(String owner) {
        // The TTL is far above responseTime(): an entry left behind would block the next waiter for
        // the rest of its TTL and fail the handoff bounds. Without notifications, waiters of the two
        // registries learn of each other's releases by polling: faster here, so that the contention
        // tests take seconds, not a minute.
        JdbcLockRegistry.Builder builder = JdbcLockRegistry.builder(database.pool(owner));
        if (database.kind() != TestDatabase.Kind.POSTGRESQL) {
            builder.pollInterval(Duration.ofMillis(10));
        }
        return builder
            .tablePrefix(PREFIX)
            .leaseTtl(Duration.ofSeconds(20))
            .ownerIdentity(owner)
            .description(database.kind() + " database")
            .build();
    }

    @AfterAll
    static void stop() {
        registry.close();
        peer.close();
        database.close();
    }

    @Override
    protected LockRegistry registry() {
        return registry;
    }

    @Override
    protected LockRegistry peerRegistry() {
        return peer;
    }

    @Override
    protected int waitersQueued(String key) {
        return registry.queuedWaiters(key) + peer.queuedWaiters(key);
    }

    @Override
    protected void assertNoTracesLeft(String key) {
        // The key's row stays until the idle-key sweep; it delays nobody, unlike an entry.
        await().atMost(responseTime()).untilAsserted(() -> assertThat(database.queryLong("SELECT COUNT(*) FROM "
                + PREFIX + "ENTRY WHERE LOCK_ID = '" + JdbcTables.lockId(key) + "'"))
            .as("entries left in the database for '%s'", key).isZero());
    }

    /**
     * A fence is the database's clock in microseconds, raised above the key's newest entry: when the
     * clock is behind an entry (it stepped back after that entry was written; here, entries written
     * by hand an hour ahead of it), a new entry still queues behind that one, with a higher fence,
     * and one whose raised fence is another key's goes above every entry instead.
     */
    @Test
    void anEntryWrittenWhileTheClockIsBehindTheKeysNewestQueuesBehindItWithAHigherFence() throws Exception {
        String key = "clock-behind";
        String keyId = JdbcTables.lockId(key);
        String otherKeyId = JdbcTables.lockId("clock-behind-other");
        long hourAhead = System.currentTimeMillis() + TimeUnit.HOURS.toMillis(1);
        long ahead = TimeUnit.MILLISECONDS.toMicros(hourAhead);
        try (Connection connection = database.pool("clock-ahead", 1).getConnection();
                Statement statement = connection.createStatement()) {
            // Another process's live session, with an entry of each key, the other key's one fence later.
            connection.setAutoCommit(false);
            statement.executeUpdate("INSERT INTO " + PREFIX + "SESSION (SESSION_ID, OWNER, EXPIRES_AT, LEASE_MILLIS) "
                    + "VALUES ('clock-ahead', 'by hand', " + hourAhead + ", 3600000)");
            statement.executeUpdate("INSERT INTO " + PREFIX + "LOCK_KEY (LOCK_ID, LOCK_KEY) VALUES ('" + keyId + "', '"
                    + key + "'), ('" + otherKeyId + "', 'clock-behind-other')");
            statement.executeUpdate("INSERT INTO " + PREFIX + "ENTRY (FENCE, LOCK_ID, SESSION_ID, ENTRY_NUMBER, "
                    + "ENTRY_VALUE) VALUES (" + ahead + ", '" + keyId + "', 'clock-ahead', 1, 'by hand'), ("
                    + (ahead + 1) + ", '" + otherKeyId + "', 'clock-ahead', 2, 'by hand')");
            connection.commit();
        }
        try {
            FencedLock lock = registry.obtain(key, true);
            assertThat(lock.tryLock()).as("taken while the entry written before it holds").isFalse();
            CompletableFuture<Long> next = BackgroundAcquirer.acquireAndRelease(lock, longWait());
            String entries = "SELECT COUNT(*) FROM " + PREFIX + "ENTRY WHERE LOCK_ID = '" + keyId + "'";
            await().atMost(longWait()).until(() -> database.queryLong(entries) == 2);
            database.execute("DELETE FROM " + PREFIX + "ENTRY WHERE LOCK_ID = '" + keyId + "' AND SESSION_ID = "
                    + "'clock-ahead'");
            assertThat(Fences.storeFence(next.get(longWait().toSeconds(), TimeUnit.SECONDS)))
                .as("the fence of the entry written behind them, against theirs: %d and %d", ahead, ahead + 1)
                .isGreaterThan(ahead + 1);
        }
        finally {
            database.execute("DELETE FROM " + PREFIX + "SESSION WHERE SESSION_ID = 'clock-ahead'");
        }
    }

    /**
     * A key with no entry left still gets a fence above its last one when the database's clock is
     * behind that fence: its row keeps the last fence it issued. Here the clock "stepped back" by an
     * hour: an entry written by hand an hour ahead of it raised the key's next fence to above its
     * own, and once every entry of the key is gone, the next acquisition must still go above that.
     */
    @Test
    void anIdleKeysNextFenceIsAboveItsLastAlsoWhenTheClockIsBehindIt() throws Exception {
        String key = "clock-behind-idle";
        String keyId = JdbcTables.lockId(key);
        long hourAhead = System.currentTimeMillis() + TimeUnit.HOURS.toMillis(1);
        long ahead = TimeUnit.MILLISECONDS.toMicros(hourAhead);
        try (Connection connection = database.pool("clock-ahead-idle", 1).getConnection();
                Statement statement = connection.createStatement()) {
            connection.setAutoCommit(false);
            statement.executeUpdate("INSERT INTO " + PREFIX + "SESSION (SESSION_ID, OWNER, EXPIRES_AT, LEASE_MILLIS) "
                    + "VALUES ('clock-ahead-idle', 'by hand', " + hourAhead + ", 3600000)");
            statement.executeUpdate("INSERT INTO " + PREFIX + "LOCK_KEY (LOCK_ID, LOCK_KEY) VALUES ('" + keyId + "', '"
                    + key + "')");
            statement.executeUpdate("INSERT INTO " + PREFIX + "ENTRY (FENCE, LOCK_ID, SESSION_ID, ENTRY_NUMBER, "
                    + "ENTRY_VALUE) VALUES (" + ahead + ", '" + keyId + "', 'clock-ahead-idle', 1, 'by hand')");
            connection.commit();
        }
        String entries = "SELECT COUNT(*) FROM " + PREFIX + "ENTRY WHERE LOCK_ID = '" + keyId + "'";
        long raised;
        try {
            FencedLock lock = registry.obtain(key, true);
            CompletableFuture<Long> next = BackgroundAcquirer.acquireAndRelease(lock, longWait());
            await().atMost(longWait()).until(() -> database.queryLong(entries) == 2);
            database.execute("DELETE FROM " + PREFIX + "ENTRY WHERE SESSION_ID = 'clock-ahead-idle'");
            raised = Fences.storeFence(next.get(longWait().toSeconds(), TimeUnit.SECONDS));
            assertThat(raised).as("the fence of the entry written behind the one ahead of the clock").isGreaterThan(ahead);
        }
        finally {
            database.execute("DELETE FROM " + PREFIX + "SESSION WHERE SESSION_ID = 'clock-ahead-idle'");
        }
        await().atMost(longWait()).until(() -> database.queryLong(entries) == 0);
        FencedLock lock = peer.obtain(key);
        assertThat(lock.tryLock(longWait().toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        try {
            assertThat(Fences.storeFence(lock.getFence()))
                .as("the fence of the idle key's next acquisition, against its last one (%d), with the clock an "
                        + "hour behind it", raised)
                .isGreaterThan(raised);
        }
        finally {
            lock.unlock();
        }
    }

    @Override
    protected int contentionIterations() {
        return 100;
    }
}
