package io.github.distlock;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.github.distlock.core.CoreLockRegistry;
import io.github.distlock.core.Fences;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import static io.github.distlock.testsupport.LockAttempts.tryAndRelease;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Local handoffs of unfair locks against a real store: a kept entry costs no store call, and the
 * store tells a holder when another process queues behind it, which ends a linger at once, also
 * when the holder took the key after waiting with others already behind it or queueing later.
 * Every linger here is far beyond the tests' bounds, so only that signal can end it in time.
 * Subclasses give registries that behave as separate processes (own clients, sessions, pools) and
 * add what is particular to their store (lost messages, reconnects).
 */
public abstract class AbstractLocalHandoffIntegrationTests {

    protected static final Duration LONG = Duration.ofSeconds(30);

    /** Far beyond any test's bound: a test that waits for it fails. */
    protected static final Duration FOREVER = Duration.ofMinutes(10);

    protected final ExecutorService threads = Executors.newCachedThreadPool((task) -> {
        Thread thread = new Thread(task, "local-handoff-test");
        thread.setDaemon(true);
        return thread;
    });

    protected String key;

    @BeforeEach
    void nameTheKey(TestInfo test) {
        this.key = test.getTestMethod().orElseThrow().getName();
    }

    @AfterEach
    void stopThreads() throws InterruptedException {
        this.threads.shutdownNow();
        this.threads.awaitTermination(LONG.toMillis(), MILLISECONDS);
    }

    /**
     * @return a registry with a client or pool and a session of its own, as another process would
     * have, closed after the test
     */
    protected abstract CoreLockRegistry<?> newRegistry(String owner, LocalHandoff localHandoff) throws Exception;

    /**
     * @return the key's entries in the store, oldest first, each as a text that changes if the
     * entry is written again (its name or id with a revision, or its fence)
     */
    protected abstract List<String> entries(String key) throws Exception;

    /**
     * @param settings what the test wants of another process's registry
     * @return what that registry gets: the settings, or (a store that tells only when every
     * instance lingers) the same with a linger
     */
    protected LocalHandoff otherProcess(LocalHandoff settings) {
        return settings;
    }

    /**
     * Deletes every entry of {@code key} directly in the store, as an operator, a failover to a
     * replica without them or a restore would.
     */
    protected abstract void deleteEntriesBehindTheRegistrysBack(String key) throws Exception;

    /**
     * @return how soon a process learns that its entry vanished once another process took the key:
     * shorter than the registries' renewal interval where the store tells it at once
     */
    protected Duration lossNotice() {
        return Duration.ofSeconds(10);
    }

    /** @return whether a try-once of another process surely finds a lingering entry in its way */
    protected boolean tryOnceFindsTheLingeringEntry() {
        return true;
    }

    /**
     * Acquires and releases {@code key} so that its entry lingers; a store that starts listening
     * for signals with its first entry waits for that first.
     */
    protected void lockUntilLingering(CoreLockRegistry<?> registry, String key) throws Exception {
        FencedLock lock = registry.obtain(key);
        lock.lock();
        lock.unlock();
        assertThat(entries(key)).as("entries of '%s' after an unlock", key).hasSize(1);
    }

    @Test
    void aLingeringEntryServesTheNextAcquisitionWithoutAStoreWrite() throws Exception {
        CoreLockRegistry<?> registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        lockUntilLingering(registry, this.key);
        List<String> lingering = entries(this.key);
        long handoffsBefore = registry.getStatistics().getLocalHandoffs();
        FencedLock lock = registry.obtain(this.key);
        lock.lock();
        long fence = lock.getFence();
        lock.unlock();
        // A release and a new write would have left another entry with a new fence.
        assertThat(entries(this.key)).as("the key's entries after a re-acquisition").isEqualTo(lingering);
        assertThat(Fences.pass(fence)).isPositive();
        assertThat(registry.getStatistics().getLocalHandoffs()).isEqualTo(handoffsBefore + 1);
    }

    @Test
    void anotherProcessQueueingBehindALingeringEntryEndsTheLingerAtOnce() throws Exception {
        CoreLockRegistry<?> registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        CoreLockRegistry<?> peer = newRegistry("peer", otherProcess(LocalHandoff.DEFAULT));
        lockUntilLingering(registry, this.key);
        FencedLock mine = registry.obtain(this.key);
        mine.lock();
        long lingeringFence = mine.getFence();
        mine.unlock();
        if (tryOnceFindsTheLingeringEntry()) {
            // The documented cost of lingering: a try-once elsewhere finds the key taken.
            assertThat(this.threads.submit(() -> tryAndRelease(peer.obtain(this.key))).get(LONG.toMillis(), MILLISECONDS))
                .isFalse();
        }
        long peerFence = this.threads.submit(() -> holdAndGetFence(peer.obtain(this.key, true), LONG))
            .get(LONG.toMillis() * 2, MILLISECONDS);
        assertThat(Fences.storeFence(peerFence)).isGreaterThan(Fences.storeFence(lingeringFence));
        assertThat(Fences.pass(peerFence)).isZero();
        await().atMost(LONG).until(() -> entries(this.key).isEmpty());
    }

    /**
     * The cost of lingering is for other processes: a fair try-once of the same process finds no
     * thread holding the key and takes it, after giving its own lingering entry back.
     */
    @Test
    void aFairTryOnceOfTheSameProcessGivesItsLingeringEntryBackAndTakesTheKey() throws Exception {
        CoreLockRegistry<?> registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        lockUntilLingering(registry, this.key);
        FencedLock unfair = registry.obtain(this.key);
        unfair.lock();
        long lingeringFence = unfair.getFence();
        unfair.unlock();
        FencedLock fair = registry.obtain(this.key, true);
        assertThat(fair.isLocked()).as("locked while lingering, for this process").isFalse();
        assertThat(fair.tryLock()).as("fair try-once").isTrue();
        try {
            assertThat(Fences.storeFence(fair.getFence())).isGreaterThan(Fences.storeFence(lingeringFence));
        }
        finally {
            fair.unlock();
        }
        await().atMost(LONG).until(() -> entries(this.key).isEmpty());
    }

    /**
     * The peer queues while another process holds; the entry that takes the key next, with the
     * peer already behind it, does not linger in its way.
     */
    @Test
    void anEntryHandedTheKeyWithAnotherQueuedBehindItDoesNotLinger() throws Exception {
        CoreLockRegistry<?> first = newRegistry("first", otherProcess(LocalHandoff.DISABLED));
        CoreLockRegistry<?> registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        CoreLockRegistry<?> peer = newRegistry("peer", otherProcess(LocalHandoff.DISABLED));
        // Ready for signals: a conservative guess cannot be what makes the test pass.
        lockUntilLingering(registry, this.key + "-warm-up");
        FencedLock firstLock = first.obtain(this.key);
        firstLock.lock();
        CompletableFuture<Long> mine = new CompletableFuture<>();
        this.threads.submit(() -> mine.complete(holdAndGetFence(registry.obtain(this.key), LONG)));
        await().atMost(LONG).until(() -> entries(this.key).size() == 2);
        Future<Long> peerFence = this.threads.submit(() -> holdAndGetFence(peer.obtain(this.key, true), LONG));
        await().atMost(LONG).until(() -> entries(this.key).size() == 3);
        firstLock.unlock();
        long myFence = mine.get(LONG.toMillis(), MILLISECONDS);
        assertThat(Fences.storeFence(peerFence.get(LONG.toMillis() * 2, MILLISECONDS)))
            .isGreaterThan(Fences.storeFence(myFence));
        await().atMost(LONG).until(() -> entries(this.key).isEmpty());
    }

    /**
     * As above, but the peer queues only after the entry took the key, while its holder is in the
     * critical section.
     */
    @Test
    void anEntryHandedTheKeyLearnsOfAPeerThatQueuesLater() throws Exception {
        CoreLockRegistry<?> first = newRegistry("first", otherProcess(LocalHandoff.DISABLED));
        CoreLockRegistry<?> registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        CoreLockRegistry<?> peer = newRegistry("peer", otherProcess(LocalHandoff.DISABLED));
        lockUntilLingering(registry, this.key + "-warm-up");
        FencedLock firstLock = first.obtain(this.key);
        firstLock.lock();
        CompletableFuture<Long> myFence = new CompletableFuture<>();
        CompletableFuture<Void> mayUnlock = new CompletableFuture<>();
        this.threads.submit(() -> {
            FencedLock lock = registry.obtain(this.key);
            lock.lock();
            try {
                myFence.complete(lock.getFence());
                mayUnlock.get(LONG.toMillis(), MILLISECONDS);
            }
            finally {
                lock.unlock();
            }
            return null;
        });
        await().atMost(LONG).until(() -> entries(this.key).size() == 2);
        firstLock.unlock();
        long mine = myFence.get(LONG.toMillis(), MILLISECONDS);
        Future<Long> peerFence = this.threads.submit(() -> holdAndGetFence(peer.obtain(this.key, true), LONG));
        await().atMost(LONG).until(() -> entries(this.key).size() == 2);
        mayUnlock.complete(null);
        assertThat(Fences.storeFence(peerFence.get(LONG.toMillis() * 2, MILLISECONDS)))
            .isGreaterThan(Fences.storeFence(mine));
        await().atMost(LONG).until(() -> entries(this.key).isEmpty());
    }

    /**
     * G12: the store loses the entry the process keeps (deleted by hand) and another process takes
     * the key. The process learns it and stops using the entry: no local hold overlaps the other
     * process's, the next one queues behind it with a greater fence, and the loss is counted (as a
     * kept entry, since no thread held it).
     */
    @Test
    void aLingeringEntryDeletedInTheStoreIsNoLongerUsedOnceAnotherProcessTookTheKey() throws Exception {
        CoreLockRegistry<?> registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        CoreLockRegistry<?> peer = newRegistry("peer", otherProcess(LocalHandoff.DISABLED));
        lockUntilLingering(registry, this.key);
        FencedLock mine = registry.obtain(this.key);
        deleteEntriesBehindTheRegistrysBack(this.key);
        FencedLock theirs = takeTheKey(peer);
        Future<Long> next;
        long peerFence;
        try {
            peerFence = theirs.getFence();
            await().atMost(lossNotice()).until(() -> registry.getStatistics().getKeptEntriesLost() == 1);
            assertThat(this.threads.submit(() -> tryAndRelease(mine)).get(LONG.toMillis(), MILLISECONDS))
                .as("a try-once of the process while the other one holds").isFalse();
            next = this.threads.submit(() -> holdAndGetFence(mine, LONG));
            await().atMost(LONG).until(() -> entries(this.key).size() == 2);
        }
        finally {
            theirs.unlock();
        }
        assertThat(next.get(LONG.toMillis() * 2, MILLISECONDS)).as("the process's next fence")
            .isGreaterThan(peerFence);
        // The lingering pass, if unlocked after the store last confirmed its entry (etcd, ZooKeeper: always).
        assertThat(registry.getStatistics().getHoldsLost()).as("holds lost").isLessThanOrEqualTo(1);
    }

    /**
     * A thread takes the lingering entry, the store loses it behind the registry's back, another
     * process takes the key, and the thread unlocks: its hold overlapped the other process's, and
     * it is told, at its unlock if the process learnt of the loss by then, otherwise by the loss
     * listeners once it does. Every hold reported lost counts as one.
     */
    @Test
    void aHoldPassedOnWhenTheStoreLostItsEntryIsToldAlsoAfterItsUnlock() throws Exception {
        CoreLockRegistry<?> registry = newRegistry("me", new LocalHandoff(FOREVER, FOREVER));
        CoreLockRegistry<?> peer = newRegistry("peer", otherProcess(LocalHandoff.DISABLED));
        List<LockLoss> losses = new CopyOnWriteArrayList<>();
        registry.addLossListener(losses::add);
        lockUntilLingering(registry, this.key);
        FencedLock mine = registry.obtain(this.key);
        mine.lock();
        long fence = mine.getFence();
        assertThat(Fences.pass(fence)).as("a local handoff").isPositive();
        deleteEntriesBehindTheRegistrysBack(this.key);
        FencedLock theirs = takeTheKey(peer);
        boolean toldAtUnlock;
        try {
            mine.unlock();
            toldAtUnlock = false;
        }
        catch (LockLostException ex) {
            assertThat(ex.getFence()).isEqualTo(fence);
            toldAtUnlock = true;
        }
        finally {
            theirs.unlock();
        }
        await().atMost(lossNotice()).until(() -> lossOf(losses, fence).isPresent());
        LockLoss loss = lossOf(losses, fence).orElseThrow();
        assertThat(loss.key()).isEqualTo(this.key);
        assertThat(loss.unlocked()).as("reported as unlocked before it was told").isEqualTo(!toldAtUnlock);
        assertThat(losses).as("each hold reported once").allSatisfy((other) -> assertThat(other == loss
                || other.lastFence() < loss.firstFence() || other.firstFence() > loss.lastFence()).isTrue());
        assertThat(registry.getStatistics().getHoldsLost()).as("holds lost")
            .isEqualTo(losses.stream().mapToLong(LockLoss::holds).sum());
    }

    private static Optional<LockLoss> lossOf(List<LockLoss> losses, long fence) {
        return losses.stream().filter((loss) -> loss.covers(fence)).findFirst();
    }

    /** @return the lock of the test's key, held by {@code peer} (another process) once it took it */
    protected FencedLock takeTheKey(CoreLockRegistry<?> peer) throws InterruptedException {
        FencedLock theirs = peer.obtain(this.key);
        assertThat(theirs.tryLock(LONG.toMillis(), MILLISECONDS)).as("the other process takes the key").isTrue();
        return theirs;
    }

    /** Holds {@code lock} for a moment, waiting at most {@code wait}. @return the hold's fence */
    protected static long holdAndGetFence(FencedLock lock, Duration wait) throws InterruptedException {
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
