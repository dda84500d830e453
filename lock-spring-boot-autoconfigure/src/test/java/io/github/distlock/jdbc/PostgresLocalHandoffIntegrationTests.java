package io.github.distlock.jdbc;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Future;

import io.github.distlock.AbstractLocalHandoffIntegrationTests;
import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.LockLoss;
import io.github.distlock.core.CoreLockRegistry;
import io.github.distlock.core.Fences;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static io.github.distlock.testsupport.LockAttempts.tryAndRelease;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Local handoffs on PostgreSQL: the write of an entry behind the head notifies every older entry
 * of its key; entries written before their registry's LISTEN took effect, or while it was being
 * replaced, assume someone queued.
 */
class PostgresLocalHandoffIntegrationTests extends AbstractLocalHandoffIntegrationTests {

    private static TestDatabase database;

    private final List<JdbcLockRegistry> registries = new CopyOnWriteArrayList<>();

    private String prefix;

    @BeforeAll
    static void startDatabase() {
        database = TestDatabase.start(TestDatabase.Kind.POSTGRESQL);
    }

    @AfterAll
    static void stopDatabase() {
        database.close();
    }

    @BeforeEach
    void createTables() {
        this.prefix = "H" + UUID.randomUUID().toString().substring(0, 8).toUpperCase(Locale.ROOT) + "_";
        database.createTables(this.prefix);
    }

    @AfterEach
    void closeRegistries() {
        this.registries.forEach(JdbcLockRegistry::close);
    }

    /** A registry on a pool of its own, as another process would have. */
    @Override
    protected JdbcLockRegistry newRegistry(String owner, LocalHandoff localHandoff) {
        JdbcLockRegistry registry = JdbcLockRegistry.builder(database.pool(owner, 4))
            .tablePrefix(this.prefix)
            .ownerIdentity(owner)
            .localHandoff(localHandoff)
            .build();
        this.registries.add(registry);
        return registry;
    }

    /**
     * With a linger of 1 ms: only a registry that lingers tells older entries (so every instance
     * sharing the tables should linger alike); the peers' entries then linger that long.
     */
    @Override
    protected LocalHandoff otherProcess(LocalHandoff settings) {
        return new LocalHandoff(settings.window(), Duration.ofMillis(1));
    }

    /**
     * Not surely: the try-once's write notifies the lingering registry (the peer lingers too), which
     * gives its entry back at once and so hands the key to that very entry, which can happen before
     * the try-once withdraws it; the try-once then holds. Seen whenever this class runs alone, where
     * this test comes first and the JVM is cold.
     */
    @Override
    protected boolean tryOnceFindsTheLingeringEntry() {
        return false;
    }

    @Override
    protected void deleteEntriesBehindTheRegistrysBack(String key) throws Exception {
        database.execute("DELETE FROM " + this.prefix + "ENTRY WHERE LOCK_ID = '" + JdbcTables.lockId(key) + "'");
    }

    /** The database tells no one: the session's next renewal (a third of the default 10 s TTL) finds the entry gone. */
    @Override
    protected Duration lossNotice() {
        return LONG;
    }

    /** The fences of the key's entries: a new entry draws a new one. */
    @Override
    protected List<String> entries(String key) throws Exception {
        return database.queryStrings("SELECT FENCE FROM " + this.prefix + "ENTRY WHERE LOCK_ID = '"
                + JdbcTables.lockId(key) + "' ORDER BY FENCE");
    }

    /**
     * Once the registry listens: an entry written before its LISTEN took effect counts as queued
     * behind (a notification may have been missed) and goes back, and the registry starts
     * listening with its first entry.
     */
    @Override
    protected void lockUntilLingering(CoreLockRegistry<?> registry, String key) throws Exception {
        FencedLock lock = registry.obtain(key);
        lock.lock();
        lock.unlock();
        await().atMost(LONG).until(() -> ((JdbcLockRegistry) registry).isListening() && entries(key).isEmpty());
        super.lockUntilLingering(registry, key);
    }

    /**
     * Another process's write that becomes the head of the key tells every registry (when the
     * writer lingers, as instances sharing the tables should alike): a registry whose lingering
     * entry was deleted behind its back learns it at once, not at its session's next renewal
     * (20 s away with this 60 s TTL).
     */
    @Test
    void aLingeringEntryDeletedBehindTheRegistrysBackIsLostAsSoonAsAnotherProcessTakesTheKey() throws Exception {
        JdbcLockRegistry registry = JdbcLockRegistry.builder(database.pool("me", 4))
            .tablePrefix(this.prefix)
            .ownerIdentity("me")
            .leaseTtl(Duration.ofSeconds(60))
            .localHandoff(new LocalHandoff(FOREVER, FOREVER))
            .build();
        this.registries.add(registry);
        JdbcLockRegistry peer = newRegistry("peer", otherProcess(LocalHandoff.DISABLED));
        lockUntilLingering(registry, this.key);
        deleteEntriesBehindTheRegistrysBack(this.key);
        FencedLock theirs = takeTheKey(peer);
        try {
            await().atMost(Duration.ofSeconds(5)).until(() -> registry.getStatistics().getKeptEntriesLost() == 1);
            assertThat(tryAndRelease(registry.obtain(this.key))).as("a try-once while the other process holds")
                .isFalse();
        }
        finally {
            theirs.unlock();
        }
    }

    /**
     * The session's renewal reads its entries: one that finds the lingering entry confirms the
     * holds passed on it and unlocked before that renewal was sent, so that when the entry is
     * lost later only the holds unlocked since are reported lost.
     */
    @Test
    void holdsUnlockedBeforeARenewalFoundTheirEntryAreNotReportedLost() throws Exception {
        JdbcLockRegistry registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        JdbcLockRegistry peer = newRegistry("peer", otherProcess(LocalHandoff.DISABLED));
        List<LockLoss> losses = new CopyOnWriteArrayList<>();
        registry.addLossListener(losses::add);
        lockUntilLingering(registry, this.key);
        FencedLock mine = registry.obtain(this.key);
        long confirmed = holdAndGetFence(mine, LONG);
        long unlockedAt = System.nanoTime();
        await().atMost(LONG).until(() -> registry.getSessionRenewalAge().toNanos() < System.nanoTime() - unlockedAt);
        long unconfirmed = holdAndGetFence(mine, LONG);
        assertThat(Fences.storeFence(unconfirmed)).as("the same entry").isEqualTo(Fences.storeFence(confirmed));
        deleteEntriesBehindTheRegistrysBack(this.key);
        FencedLock theirs = takeTheKey(peer);
        theirs.unlock();
        await().atMost(lossNotice()).until(() -> !losses.isEmpty());
        assertThat(losses).singleElement().satisfies((loss) -> {
            assertThat(loss.firstFence()).isEqualTo(unconfirmed);
            assertThat(loss.lastFence()).isEqualTo(unconfirmed);
            assertThat(loss.unlocked()).isTrue();
        });
        assertThat(registry.getStatistics().getHoldsLost()).isOne();
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
        JdbcLockRegistry peer = newRegistry("peer", otherProcess(LocalHandoff.DISABLED));
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
        await().atMost(LONG).until(() -> entries(this.key).size() == 2);
        Future<Long> peerFence = this.threads.submit(() -> holdAndGetFence(peer.obtain(this.key, true), LONG));
        await().atMost(LONG).until(() -> entries(this.key).size() == 3);
        long myFence = mine.get(LONG.toMillis(), MILLISECONDS);
        assertThat(Fences.storeFence(peerFence.get(LONG.toMillis() * 2, MILLISECONDS)))
            .isGreaterThan(Fences.storeFence(myFence));
        await().atMost(LONG).until(() -> entries(this.key).isEmpty());
    }

    /** Notifications sent while the LISTEN connection was down are lost: its entries assume someone queued. */
    @Test
    void aLingeringEntryGoesBackWhenTheListenConnectionIsReplaced() throws Exception {
        JdbcLockRegistry registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        lockUntilLingering(registry, this.key);
        database.queryLong("SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                + "AND datname = current_database() AND backend_type = 'client backend'");
        await().atMost(LONG).until(() -> entries(this.key).isEmpty());
        assertThat(registry.getStatistics().getHoldsLost()).isZero();
    }

    /**
     * Kept entries due while the database is frozen: their releases wait for it, on at most the
     * registry's release threads ({@code LocalHandoffs.MAX_RELEASE_THREADS}), not on a thread each;
     * the rest go back once it answers.
     */
    @Test
    void keptEntriesDueWhileTheDatabaseIsFrozenWaitOnABoundedNumberOfThreads() throws Exception {
        int releaseThreads = 16;
        int keys = 3 * releaseThreads;
        JdbcLockRegistry registry = JdbcLockRegistry.builder(database.pool("frozen", 4))
            .tablePrefix(this.prefix)
            .ownerIdentity("frozen")
            .localHandoff(new LocalHandoff(FOREVER, Duration.ofSeconds(5)))
            .requestTimeout(Duration.ofSeconds(8))
            .leaseTtl(Duration.ofSeconds(60))
            .build();
        this.registries.add(registry);
        lockUntilLingering(registry, this.key + "-warm-up");
        for (int i = 0; i < keys; i++) {
            FencedLock lock = registry.obtain(this.key + "-" + i);
            lock.lock();
            lock.unlock();
        }
        String entries = "SELECT COUNT(*) FROM " + this.prefix + "ENTRY";
        assertThat(database.queryLong(entries)).as("entries kept after their unlock").isGreaterThanOrEqualTo(keys - 1);
        database.server().pause();
        try {
            await().atMost(LONG).until(() -> releasingThreads(registry) >= releaseThreads);
            assertThat(releasingThreads(registry)).isLessThanOrEqualTo(releaseThreads);
        }
        finally {
            database.server().resume();
        }
        await().atMost(LONG).until(() -> database.queryLong(entries) == 0);
        assertThat(registry.getStatistics().getHoldsLost()).isZero();
    }

    /** @return the threads now releasing kept entries of the registry to its store */
    private static long releasingThreads(JdbcLockRegistry registry) {
        String names = "distlock-handoff-release-" + registry.getNamespace() + "-";
        return Thread.getAllStackTraces().entrySet().stream()
            .filter((thread) -> thread.getKey().getName().startsWith(names)
                    && Arrays.stream(thread.getValue()).anyMatch((frame) -> frame.getMethodName().equals("releaseToStore")))
            .count();
    }
}
