package io.github.distlock.jdbc;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.core.Fences;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Local handoffs of unfair locks on PostgreSQL: a kept entry costs no database call, and a
 * notification tells a holder when another process queues behind it, which ends a linger at once.
 * Every linger here is far beyond the tests' bounds, so only that signal can end it in time.
 */
class PostgresLocalHandoffIntegrationTests {

    private static final Duration LONG = Duration.ofSeconds(30);

    /** Far beyond any test's bound: a test that waits for it fails. */
    private static final Duration FOREVER = Duration.ofMinutes(10);

    private static TestDatabase database;

    private final ExecutorService threads = Executors.newCachedThreadPool((task) -> {
        Thread thread = new Thread(task, "postgres-handoff-test");
        thread.setDaemon(true);
        return thread;
    });

    private final List<JdbcLockRegistry> registries = new CopyOnWriteArrayList<>();

    private String prefix;

    private String key;

    @BeforeAll
    static void startDatabase() {
        database = TestDatabase.start(TestDatabase.Kind.POSTGRESQL);
    }

    @AfterAll
    static void stopDatabase() {
        database.close();
    }

    @BeforeEach
    void setUp(TestInfo test) {
        this.prefix = "H" + UUID.randomUUID().toString().substring(0, 8).toUpperCase(Locale.ROOT) + "_";
        database.createTables(this.prefix);
        this.key = test.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        this.threads.shutdownNow();
        this.threads.awaitTermination(LONG.toMillis(), MILLISECONDS);
        this.registries.forEach(JdbcLockRegistry::close);
    }

    /** A registry on a pool of its own, as another process would have. */
    private JdbcLockRegistry newRegistry(String owner, LocalHandoff localHandoff) {
        JdbcLockRegistry registry = JdbcLockRegistry.builder(database.pool(owner, 4))
            .tablePrefix(this.prefix)
            .ownerIdentity(owner)
            .localHandoff(localHandoff)
            .build();
        this.registries.add(registry);
        return registry;
    }

    /**
     * Acquires and releases {@code key} once the registry listens, so that its entry lingers: one
     * written before the registry's LISTEN took effect counts as queued behind (a notification may
     * have been missed) and goes back, and the registry starts listening with its first entry.
     */
    private void lockUntilLingering(JdbcLockRegistry registry, String key) throws Exception {
        FencedLock lock = registry.obtain(key);
        lock.lock();
        lock.unlock();
        await().atMost(LONG).until(() -> registry.isListening() && entries(key) == 0);
        lock.lock();
        lock.unlock();
        assertThat(entries(key)).as("entries of '%s' after an unlock", key).isEqualTo(1);
    }

    @Test
    void aLingeringEntryServesTheNextAcquisitionWithoutADatabaseWrite() throws Exception {
        JdbcLockRegistry registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        lockUntilLingering(registry, this.key);
        long lingeringFence = newestFence();
        long handoffsBefore = registry.getStatistics().getLocalHandoffs();
        FencedLock lock = registry.obtain(this.key);
        lock.lock();
        long fence = lock.getFence();
        lock.unlock();
        // A release and a new write would have drawn a new fence from the sequence.
        assertThat(newestFence()).as("newest entry after a re-acquisition").isEqualTo(lingeringFence);
        assertThat(entries(this.key)).isEqualTo(1);
        assertThat(Fences.storeFence(fence)).isEqualTo(lingeringFence);
        assertThat(Fences.pass(fence)).isPositive();
        assertThat(registry.getStatistics().getLocalHandoffs()).isEqualTo(handoffsBefore + 1);
    }

    @Test
    void anotherProcessQueueingBehindALingeringEntryEndsTheLingerAtOnce() throws Exception {
        JdbcLockRegistry registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        JdbcLockRegistry peer = newRegistry("peer", LocalHandoff.DEFAULT);
        lockUntilLingering(registry, this.key);
        long lingeringFence = newestFence();
        long peerFence = this.threads.submit(() -> holdAndGetFence(peer.obtain(this.key, true), LONG))
            .get(LONG.toMillis() * 2, MILLISECONDS);
        assertThat(Fences.storeFence(peerFence)).isGreaterThan(lingeringFence);
        await().atMost(LONG).until(() -> entries(this.key) == 0);
    }

    /**
     * The peer queues while another process holds; its notification names the key, so the entry
     * waiting ahead of it learns that too, and does not linger in its way once it takes the key.
     */
    @Test
    void anEntryHandedTheKeyWithAnotherQueuedBehindItDoesNotLinger() throws Exception {
        JdbcLockRegistry first = newRegistry("first", LocalHandoff.DISABLED);
        JdbcLockRegistry registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        JdbcLockRegistry peer = newRegistry("peer", LocalHandoff.DISABLED);
        // Its LISTEN has taken effect: a conservative guess cannot be what makes the test pass.
        lockUntilLingering(registry, this.key + "-warm-up");
        FencedLock firstLock = first.obtain(this.key);
        firstLock.lock();
        CompletableFuture<Long> mine = new CompletableFuture<>();
        this.threads.submit(() -> mine.complete(holdAndGetFence(registry.obtain(this.key), LONG)));
        await().atMost(LONG).until(() -> entries(this.key) == 2);
        Future<Long> peerFence = this.threads.submit(() -> holdAndGetFence(peer.obtain(this.key, true), LONG));
        await().atMost(LONG).until(() -> entries(this.key) == 3);
        firstLock.unlock();
        long myFence = mine.get(LONG.toMillis(), MILLISECONDS);
        assertThat(Fences.storeFence(peerFence.get(LONG.toMillis() * 2, MILLISECONDS)))
            .isGreaterThan(Fences.storeFence(myFence));
        await().atMost(LONG).until(() -> entries(this.key) == 0);
    }

    /**
     * A process died holding the key, and the peer queued behind it: the waiter ahead of the peer
     * takes the key by deleting the dead session (no release, no key-row lock, no notification of
     * its own), and still knows that the peer waits, since the peer's notification named the key,
     * not the dead head.
     */
    @Test
    void anEntryTakingTheKeyFromADeadHolderKnowsOfAnEntryQueuedBehindTheDeadOne() throws Exception {
        JdbcLockRegistry registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        JdbcLockRegistry peer = newRegistry("peer", LocalHandoff.DISABLED);
        lockUntilLingering(registry, this.key + "-warm-up");
        String now = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT";
        String lockId = JdbcTables.lockId(this.key);
        database.execute("INSERT INTO " + this.prefix + "SESSION (SESSION_ID, OWNER, EXPIRES_AT, LEASE_MILLIS) "
                + "VALUES ('dead-process', 'dead', " + now + " + 3000, 3000)");
        database.execute("INSERT INTO " + this.prefix + "LOCK_KEY (LOCK_ID, LOCK_KEY) VALUES ('" + lockId + "', '"
                + JdbcTables.escape(this.key) + "')");
        database.execute("INSERT INTO " + this.prefix + "ENTRY (LOCK_ID, SESSION_ID, ENTRY_NUMBER, ENTRY_VALUE) "
                + "VALUES ('" + lockId + "', 'dead-process', 1, 'dead')");
        CompletableFuture<Long> mine = new CompletableFuture<>();
        this.threads.submit(() -> mine.complete(holdAndGetFence(registry.obtain(this.key), LONG)));
        await().atMost(LONG).until(() -> entries(this.key) == 2);
        Future<Long> peerFence = this.threads.submit(() -> holdAndGetFence(peer.obtain(this.key, true), LONG));
        await().atMost(LONG).until(() -> entries(this.key) == 3);
        long myFence = mine.get(LONG.toMillis(), MILLISECONDS);
        assertThat(Fences.storeFence(peerFence.get(LONG.toMillis() * 2, MILLISECONDS)))
            .isGreaterThan(Fences.storeFence(myFence));
        await().atMost(LONG).until(() -> entries(this.key) == 0);
    }

    /** Notifications sent while the LISTEN connection was down are lost: its entries assume someone queued. */
    @Test
    void aLingeringEntryGoesBackWhenTheListenConnectionIsReplaced() throws Exception {
        JdbcLockRegistry registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        lockUntilLingering(registry, this.key);
        database.queryLong("SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                + "AND datname = current_database() AND backend_type = 'client backend'");
        await().atMost(LONG).until(() -> entries(this.key) == 0);
        assertThat(registry.getStatistics().getHoldsLost()).isZero();
    }

    private long entries(String key) throws Exception {
        return database.queryLong("SELECT COUNT(*) FROM " + this.prefix + "ENTRY WHERE LOCK_ID = '"
                + JdbcTables.lockId(key) + "'");
    }

    private long newestFence() throws Exception {
        return database.queryLong("SELECT COALESCE(MAX(FENCE), 0) FROM " + this.prefix + "ENTRY");
    }

    private static long holdAndGetFence(FencedLock lock, Duration wait) throws InterruptedException {
        if (!lock.tryLock(wait.toMillis(), MILLISECONDS)) {
            throw new AssertionError("not acquired within " + wait);
        }
        try {
            return lock.getFence();
        }
        finally {
            lock.unlock();
        }
    }
}
