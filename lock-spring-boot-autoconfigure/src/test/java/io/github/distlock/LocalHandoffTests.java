package io.github.distlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.distlock.core.Fences;
import io.github.distlock.metrics.LockRegistryMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * Local handoffs of unfair locks ({@link LocalHandoff}) in the core, over the in-memory store:
 * passes to a waiting thread of the process, their fences and bound, the linger and what ends
 * it. The store-specific side (etcd's watch telling a holder that someone queued behind it) is
 * tested with the etcd registry.
 */
class LocalHandoffTests {

    private static final Duration BOUND = Duration.ofSeconds(30);

    private static final LocalHandoff LONG_WINDOW = new LocalHandoff(Duration.ofMinutes(1), Duration.ZERO);

    private static final LocalHandoff LONG_LINGER = new LocalHandoff(Duration.ofMinutes(1), Duration.ofMinutes(1));

    private final ExecutorService threads = Executors.newCachedThreadPool((task) -> {
        Thread thread = new Thread(task, "local-handoff-test");
        thread.setDaemon(true);
        return thread;
    });

    @AfterEach
    void stopThreads() throws InterruptedException {
        this.threads.shutdownNow();
        this.threads.awaitTermination(BOUND.toMillis(), MILLISECONDS);
    }

    @Test
    void anUnfairHoldPassesToAWaitingThreadOfTheProcessWithTheNextFence() throws Exception {
        InMemoryLockRegistry registry = new InMemoryLockRegistry(LONG_WINDOW);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        new LockRegistryMetrics(registry).bindTo(meters);
        long[] fences = holderThenQueuedWaiter(registry, false);
        long holderFence = fences[0];
        long waiterFence = fences[1];
        assertThat(Fences.pass(holderFence)).isZero();
        assertThat(waiterFence).isEqualTo(holderFence + 1);
        assertThat(Fences.storeFence(waiterFence)).isEqualTo(Fences.storeFence(holderFence));
        assertThat(registry.getStatistics().getLocalHandoffs()).isEqualTo(1);
        assertThat(registry.getStatistics().getAcquired()).isEqualTo(2);
        assertThat(meters.get("distributed.lock.local.handoffs").functionCounter().count()).isEqualTo(1);
        awaitNoState(registry);
    }

    @Test
    void withoutLocalHandoffEveryAcquisitionGoesToTheStore() throws Exception {
        InMemoryLockRegistry registry = new InMemoryLockRegistry(LocalHandoff.DISABLED);
        long[] fences = holderThenQueuedWaiter(registry, false);
        long holderFence = fences[0];
        long waiterFence = fences[1];
        assertThat(Fences.pass(waiterFence)).isZero();
        assertThat(Fences.storeFence(waiterFence)).isGreaterThan(Fences.storeFence(holderFence));
        assertThat(registry.getStatistics().getLocalHandoffs()).isZero();
    }

    @Test
    void fairLocksNeverTakeAPass() throws Exception {
        InMemoryLockRegistry registry = new InMemoryLockRegistry(LONG_WINDOW);
        long[] fences = holderThenQueuedWaiter(registry, true);
        long holderFence = fences[0];
        long waiterFence = fences[1];
        assertThat(Fences.pass(waiterFence)).isZero();
        assertThat(Fences.storeFence(waiterFence)).isGreaterThan(Fences.storeFence(holderFence));
        assertThat(registry.getStatistics().getLocalHandoffs()).isZero();
    }

    /** Two threads hand the key back and forth; the entry goes back to the store after the last pass number. */
    @Test
    void anEntryGoesBackToTheStoreAfterItsLastPass() throws Exception {
        InMemoryLockRegistry registry = new InMemoryLockRegistry(LONG_WINDOW);
        int holds = Fences.MAX_PASS + 10;
        List<Long> fences = new ArrayList<>();
        FencedLock first = registry.obtain("sku");
        first.lock();
        fences.add(first.getFence());
        boolean mainHolds = true;
        Future<?> other = null;
        CompletableFuture<Long>[] otherFence = new CompletableFuture[1];
        CompletableFuture<Void>[] otherMayUnlock = new CompletableFuture[1];
        for (int n = 1; n < holds; n++) {
            if (mainHolds) {
                // The other thread queues, then takes the hold when the main thread unlocks.
                CompletableFuture<Long> fence = new CompletableFuture<>();
                CompletableFuture<Void> mayUnlock = new CompletableFuture<>();
                otherFence[0] = fence;
                otherMayUnlock[0] = mayUnlock;
                other = this.threads.submit(() -> {
                    FencedLock lock = registry.obtain("sku");
                    lock.lock();
                    fence.complete(lock.getFence());
                    mayUnlock.get(BOUND.toMillis(), MILLISECONDS);
                    lock.unlock();
                    return null;
                });
                awaitQueued(registry, "sku", 1);
                first.unlock();
                fences.add(fence.get(BOUND.toMillis(), MILLISECONDS));
                mainHolds = false;
            }
            else {
                Future<?> handingBack = other;
                CompletableFuture<Void> mayUnlock = otherMayUnlock[0];
                Future<?> queued = this.threads.submit(() -> mayUnlockOnceQueued(registry, mayUnlock));
                first.lock();
                queued.get(BOUND.toMillis(), MILLISECONDS);
                handingBack.get(BOUND.toMillis(), MILLISECONDS);
                fences.add(first.getFence());
                mainHolds = true;
            }
        }
        if (mainHolds) {
            first.unlock();
        }
        else {
            otherMayUnlock[0].complete(null);
            other.get(BOUND.toMillis(), MILLISECONDS);
        }
        for (int n = 1; n < fences.size(); n++) {
            assertThat(fences.get(n)).as("fence of hold %d", n).isGreaterThan(fences.get(n - 1));
        }
        assertThat(fences.subList(0, Fences.MAX_PASS + 1)).extracting(Fences::storeFence).containsOnly(
                Fences.storeFence(fences.get(0)));
        assertThat(Fences.pass(fences.get(Fences.MAX_PASS))).isEqualTo(Fences.MAX_PASS);
        assertThat(Fences.pass(fences.get(Fences.MAX_PASS + 1))).as("pass after the last one").isZero();
        assertThat(Fences.storeFence(fences.get(Fences.MAX_PASS + 1))).isGreaterThan(Fences.storeFence(fences.get(0)));
        assertThat(registry.getStatistics().getLocalHandoffs()).isEqualTo(holds - 2);
    }

    @Test
    void aLingeringEntryServesTheNextAcquisitionOfTheProcess() throws Exception {
        InMemoryLockRegistry registry = new InMemoryLockRegistry(LONG_LINGER);
        FencedLock lock = registry.obtain("sku");
        lock.lock();
        long firstFence = lock.getFence();
        lock.unlock();
        assertThat(lock.isLocked()).as("locked while the entry lingers").isFalse();
        assertThat(registry.getHeldLockCount()).isZero();
        long nextFence = this.threads.submit(() -> holdAndGetFence(registry.obtain("sku")))
            .get(BOUND.toMillis(), MILLISECONDS);
        assertThat(nextFence).isEqualTo(firstFence + 1);
        assertThat(registry.getStatistics().getLocalHandoffs()).isEqualTo(1);
    }

    @Test
    void aWaiterQueuedBehindALingeringEntryEndsTheLingerAtOnce() throws Exception {
        InMemoryLockRegistry registry = new InMemoryLockRegistry(LONG_LINGER);
        FencedLock lock = registry.obtain("sku");
        lock.lock();
        long firstFence = lock.getFence();
        lock.unlock();
        // A fair acquisition queues in the store behind the lingering entry, as another process would.
        long fairFence = this.threads.submit(() -> holdAndGetFence(registry.obtain("sku", true)))
            .get(BOUND.toMillis(), MILLISECONDS);
        assertThat(Fences.storeFence(fairFence)).isGreaterThan(Fences.storeFence(firstFence));
        assertThat(registry.getStatistics().getLocalHandoffs()).isZero();
        awaitNoState(registry);
    }

    @Test
    void aLingeringEntryGoesBackToTheStoreWhenTheLingerEnds() throws Exception {
        InMemoryLockRegistry registry = new InMemoryLockRegistry(new LocalHandoff(Duration.ofMillis(10),
                Duration.ofMillis(50)));
        FencedLock lock = registry.obtain("sku");
        lock.lock();
        lock.unlock();
        awaitNoState(registry);
        assertThat(registry.describeLock("sku", 10).holder()).isNull();
    }

    /** A fair waiter of the process is queued in the store behind the passed entry: passes stop after the window. */
    @Test
    void passesStopForAFairWaiterOnceTheWindowIsOver() throws Exception {
        InMemoryLockRegistry registry = new InMemoryLockRegistry(new LocalHandoff(Duration.ofMillis(20), Duration.ZERO));
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<Future<?>> hammers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            hammers.add(this.threads.submit(() -> {
                FencedLock lock = registry.obtain("sku");
                while (!stop.get()) {
                    lock.lock();
                    try {
                        if (inside.incrementAndGet() > 1) {
                            overlaps.incrementAndGet();
                        }
                        inside.decrementAndGet();
                    }
                    finally {
                        lock.unlock();
                    }
                }
                return null;
            }));
        }
        await().atMost(BOUND).until(() -> registry.getStatistics().getLocalHandoffs() > 100);
        FencedLock fair = registry.obtain("sku", true);
        assertThat(fair.tryLock(BOUND.toMillis(), MILLISECONDS)).as("fair waiter served").isTrue();
        fair.unlock();
        stop.set(true);
        for (Future<?> hammer : hammers) {
            hammer.get(BOUND.toMillis(), MILLISECONDS);
        }
        assertThat(overlaps).hasValue(0);
        awaitNoState(registry);
    }

    @Test
    void negativeDurationsAreRejectedByName() {
        assertThatIllegalArgumentException().isThrownBy(() -> new LocalHandoff(Duration.ofMillis(-1), Duration.ZERO))
            .withMessage("Local handoff window must not be negative, but was PT-0.001S");
        assertThatIllegalArgumentException().isThrownBy(() -> new LocalHandoff(Duration.ZERO, Duration.ofSeconds(-2)))
            .withMessage("Local handoff linger must not be negative, but was PT-2S");
    }

    /**
     * This thread holds "sku" unfairly, another thread queues for it, and this one unlocks.
     * @return the holder's fence and the waiter's
     */
    private long[] holderThenQueuedWaiter(InMemoryLockRegistry registry, boolean fairWaiter) throws Exception {
        FencedLock holder = registry.obtain("sku");
        holder.lock();
        long holderFence = holder.getFence();
        Future<Long> waiter = this.threads.submit(() -> holdAndGetFence(registry.obtain("sku", fairWaiter)));
        awaitQueued(registry, "sku", 1);
        holder.unlock();
        return new long[] { holderFence, waiter.get(BOUND.toMillis(), MILLISECONDS) };
    }

    private static long holdAndGetFence(FencedLock lock) {
        lock.lock();
        try {
            return lock.getFence();
        }
        finally {
            lock.unlock();
        }
    }

    private static Void mayUnlockOnceQueued(InMemoryLockRegistry registry, CompletableFuture<Void> mayUnlock) {
        awaitQueued(registry, "sku", 1);
        mayUnlock.complete(null);
        return null;
    }

    private static void awaitQueued(InMemoryLockRegistry registry, String key, int count) {
        long deadline = System.nanoTime() + BOUND.toNanos();
        while (registry.getQueueLength(key) != count) {
            assertThat(System.nanoTime() - deadline).as("waiting for %d queued on %s", count, key).isNegative();
            Thread.onSpinWait();
        }
    }

    private static void awaitNoState(InMemoryLockRegistry registry) {
        await().atMost(BOUND).pollInterval(Duration.ofMillis(5)).until(() -> registry.size() == 0);
    }
}
