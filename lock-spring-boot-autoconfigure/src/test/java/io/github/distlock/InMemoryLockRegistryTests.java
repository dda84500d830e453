package io.github.distlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static java.util.concurrent.TimeUnit.MICROSECONDS;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * {@link InMemoryLockRegistry} against the registry contract, plus what only the in-memory
 * registry promises: per-key state that goes away once a key is neither held nor waited for.
 */
class InMemoryLockRegistryTests extends AbstractLockRegistryContractTests {

    private static final Duration BOUND = Duration.ofSeconds(30);

    private final InMemoryLockRegistry registry = new InMemoryLockRegistry();

    private final ExecutorService threads = Executors.newCachedThreadPool((task) -> {
        Thread thread = new Thread(task, "in-memory-registry-test");
        thread.setDaemon(true);
        return thread;
    });

    @Override
    protected LockRegistry registry() {
        return this.registry;
    }

    @Override
    protected LockRegistry peerRegistry() {
        return this.registry;
    }

    @Override
    protected int waitersQueued(String key) {
        return this.registry.getQueueLength(key);
    }

    @Override
    protected void assertNoTracesLeft(String key) {
        assertThat(this.registry.size()).as("keys with state").isZero();
    }

    @AfterEach
    void stopThreads() throws InterruptedException {
        this.threads.shutdownNow();
        this.threads.awaitTermination(responseTime().toMillis(), MILLISECONDS);
    }

    @Test
    void keysOfAnySizeAreValidSinceNothingIsSent() throws Exception {
        // Beyond every store's limit: 16 MiB of characters that stores escape.
        String key = "%".repeat(16 * 1024 * 1024);
        FencedLock lock = this.registry.obtain(key, true);
        assertThat(lock.tryLock()).isTrue();
        assertThat(this.threads.submit(() -> this.registry.obtain(key).tryLock()).get(BOUND.toMillis(), MILLISECONDS))
            .isFalse();
        assertThat(this.registry.describeLock(key, 1).holder()).isNotNull();
        lock.unlock();
    }

    @Test
    void keepsStateOnlyForKeysThatAreHeldOrWaitedFor() throws Exception {
        FencedLock lock = this.registry.obtain("held");
        assertThat(this.registry.size()).isZero();
        lock.lock();
        lock.lock();
        assertThat(this.registry.size()).isEqualTo(1);
        Future<?> waiter = this.threads.submit(() -> lockAndUnlock(this.registry.obtain("held", true)));
        awaitQueued("held", 1);
        assertThat(this.threads.submit(() -> this.registry.obtain("held").tryLock(10, MILLISECONDS))
            .get(BOUND.toMillis(), MILLISECONDS)).isFalse();
        Future<?> interrupted = this.threads.submit(() -> {
            this.registry.obtain("held").lockInterruptibly();
            return null;
        });
        awaitQueued("held", 2);
        interrupted.cancel(true);
        awaitQueued("held", 1);
        lock.unlock();
        assertThat(this.registry.size()).isEqualTo(1);
        lock.unlock();
        waiter.get(BOUND.toMillis(), MILLISECONDS);
        assertThat(this.registry.size()).isZero();
    }

    @Test
    void lockObjectsOutliveTheStateOfTheirKey() throws Exception {
        FencedLock early = this.registry.obtain("key");
        early.lock();
        long firstFence = early.getFence();
        early.unlock();
        assertThat(this.registry.size()).isZero();
        FencedLock late = this.registry.obtain("key", true);
        late.lock();
        try {
            assertThat(late.getFence()).isGreaterThan(firstFence);
            assertThat(early.isLockedByCurrentThread()).isTrue();
            assertThat(early.getHoldCount()).isEqualTo(1);
            assertThat(early.getFence()).isEqualTo(late.getFence());
            assertThat(this.threads.submit(() -> early.tryLock()).get(BOUND.toMillis(), MILLISECONDS)).isFalse();
        }
        finally {
            early.unlock();
        }
        assertThat(late.isLocked()).isFalse();
        assertThat(this.registry.size()).isZero();
    }

    @Test
    void mutualExclusionHoldsWhileStateIsRemovedAndRecreated() throws Exception {
        int contenders = 8;
        int iterations = 2_000;
        List<String> keys = List.of("churn-0", "churn-1");
        AtomicIntegerArray inside = new AtomicIntegerArray(keys.size());
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger acquisitions = new AtomicInteger();
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> running = new ArrayList<>();
        for (int i = 0; i < contenders; i++) {
            boolean fair = i % 2 == 0;
            running.add(this.threads.submit(() -> {
                assertThat(start.await(BOUND.toMillis(), MILLISECONDS)).isTrue();
                ThreadLocalRandom random = ThreadLocalRandom.current();
                for (int n = 0; n < iterations; n++) {
                    int index = random.nextInt(keys.size());
                    FencedLock lock = this.registry.obtain(keys.get(index), fair);
                    if (acquire(lock, random.nextInt(4))) {
                        acquisitions.incrementAndGet();
                        if (inside.incrementAndGet(index) > 1) {
                            overlaps.incrementAndGet();
                        }
                        Thread.yield();
                        inside.decrementAndGet(index);
                        lock.unlock();
                    }
                }
                return null;
            }));
        }
        start.countDown();
        long deadline = System.nanoTime() + BOUND.multipliedBy(2).toNanos();
        for (Future<?> contender : running) {
            contender.get(deadline - System.nanoTime(), NANOSECONDS);
        }
        assertThat(acquisitions).hasPositiveValue();
        assertThat(overlaps).as("acquisitions that overlapped another hold").hasValue(0);
        assertThat(this.registry.size()).isZero();
    }

    @Test
    void fencesKeepIncreasingWhenTheStateOfAKeyIsRecreated() {
        FencedLock lock = this.registry.obtain("key");
        lock.lock();
        long fence = lock.getFence();
        lock.unlock();
        assertThat(this.registry.size()).isZero();
        lock.lock();
        try {
            assertThat(lock.getFence()).isGreaterThan(fence);
        }
        finally {
            lock.unlock();
        }
    }

    @Test
    void describesTheHolderAndTheWaitersInTheOrderTheyWillBeServed() throws Exception {
        FencedLock held = this.registry.obtain("described");
        held.lock();
        try {
            Future<?> first = this.threads.submit(() -> lockAndUnlock(this.registry.obtain("described", true)));
            awaitQueued("described", 1);
            Future<?> second = this.threads.submit(() -> lockAndUnlock(this.registry.obtain("described", true)));
            awaitQueued("described", 2);

            LockSnapshot lock = this.registry.describeLock("described", 10);
            assertThat(lock.holder()).isNotNull();
            assertThat(lock.holder().describe()).isEqualTo("in-memory/" + Thread.currentThread().getName());
            assertThat(lock.holder().fence()).isEqualTo(held.getFence());
            assertThat(lock.waiters()).hasSize(2);
            assertThat(lock.waiters().get(0).fence()).isGreaterThan(held.getFence());
            assertThat(lock.waiters().get(1).fence()).isGreaterThan(lock.waiters().get(0).fence());
            assertThat(held.getHolder()).isEqualTo(lock.holder().describe());
            assertThat(this.registry.describeLock("described", 1).waiters()).isEmpty();
            NamespaceSnapshot all = this.registry.describeLocks(2);
            assertThat(all.truncated()).isTrue();
            assertThat(all.locks()).singleElement().satisfies(only -> assertThat(only.waiters()).hasSize(1));
            assertThat(this.registry.getHeldLockCount()).isEqualTo(1);
            assertThat(this.registry.getWaitingThreadCount()).isEqualTo(2);
            held.unlock();
            first.get(BOUND.toMillis(), MILLISECONDS);
            second.get(BOUND.toMillis(), MILLISECONDS);
        }
        finally {
            if (held.isLockedByCurrentThread()) {
                held.unlock();
            }
        }
        assertThat(this.registry.describeLock("described", 10).holder()).isNull();
        assertThat(this.registry.describeLocks(10).locks()).isEmpty();
        assertThat(this.registry.getStatistics().getAcquired()).isEqualTo(3);
    }

    @Test
    void aReadNeverSeesAnEntryWithoutItsFenceNorNamesItsWriterDifferently() throws Exception {
        FencedLock held = this.registry.obtain("read-while-queueing");
        held.lock();
        try {
            AtomicInteger running = new AtomicInteger(3);
            List<Future<?>> contenders = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                contenders.add(this.threads.submit(() -> {
                    try {
                        FencedLock lock = this.registry.obtain("read-while-queueing", true);
                        for (int n = 0; n < 20_000; n++) {
                            assertThat(lock.tryLock(0, MILLISECONDS)).isFalse();
                        }
                        assertThat(lock.getLastSeenHolder()).isEqualTo(held.getHolder());
                        return null;
                    }
                    finally {
                        running.decrementAndGet();
                    }
                }));
            }
            long reads = 0;
            long deadline = System.nanoTime() + BOUND.toNanos();
            while (running.get() > 0 && System.nanoTime() - deadline < 0) {
                LockSnapshot lock = this.registry.describeLock("read-while-queueing", 100);
                long previous = 0;
                for (LockSnapshot.Entry entry : concat(lock.holder(), lock.waiters())) {
                    assertThat(entry.fence()).as("fence of %s after %d reads", entry, reads).isGreaterThan(previous);
                    previous = entry.fence();
                }
                reads++;
            }
            for (Future<?> contender : contenders) {
                contender.get(BOUND.toMillis(), MILLISECONDS);
            }
        }
        finally {
            held.unlock();
        }
    }

    private static List<LockSnapshot.Entry> concat(LockSnapshot.Entry holder, List<LockSnapshot.Entry> waiters) {
        List<LockSnapshot.Entry> all = new ArrayList<>();
        all.add(holder);
        all.addAll(waiters);
        return all;
    }

    @Test
    void separateRegistriesDoNotShareLocks() throws Exception {
        InMemoryLockRegistry other = new InMemoryLockRegistry();
        FencedLock lock = this.registry.obtain("key");
        lock.lock();
        try {
            assertThat(this.threads.submit(() -> {
                FencedLock elsewhere = other.obtain("key");
                boolean acquired = elsewhere.tryLock();
                if (acquired) {
                    elsewhere.unlock();
                }
                return acquired;
            }).get(BOUND.toMillis(), MILLISECONDS)).isTrue();
        }
        finally {
            lock.unlock();
        }
    }

    @Test
    void exceptionMessagesNameTheProblemAndTheKey() {
        assertThatIllegalArgumentException().isThrownBy(() -> this.registry.obtain(null))
            .withMessage("Lock key must not be null");
        assertThatIllegalArgumentException().isThrownBy(() -> this.registry.obtain("", true))
            .withMessage("Lock key must not be empty");
        FencedLock lock = this.registry.obtain("orders/42");
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class)
            .hasMessageContaining("'orders/42' is not held by the current thread");
        assertThatThrownBy(lock::getFence).isInstanceOf(IllegalMonitorStateException.class)
            .hasMessageContaining("'orders/42' is not held by the current thread");
        assertThatThrownBy(lock::newCondition).isInstanceOf(UnsupportedOperationException.class)
            .hasMessageContaining("'orders/42'");
        Thread.currentThread().interrupt();
        assertThatThrownBy(lock::lockInterruptibly).isInstanceOf(InterruptedException.class)
            .hasMessageContaining("'orders/42'");
    }

    private static boolean acquire(FencedLock lock, int how) throws InterruptedException {
        return switch (how) {
            case 0 -> {
                lock.lock();
                yield true;
            }
            case 1 -> lock.tryLock();
            case 2 -> lock.tryLock(0, SECONDS);
            default -> lock.tryLock(50, MICROSECONDS);
        };
    }

    private static Void lockAndUnlock(FencedLock lock) {
        lock.lock();
        lock.unlock();
        return null;
    }

    private void awaitQueued(String key, int count) {
        await().atMost(BOUND)
            .pollInterval(Duration.ofMillis(10))
            .until(() -> this.registry.getQueueLength(key) == count);
    }
}
