package io.github.distlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import static io.github.distlock.testsupport.LockAttempts.tryAndRelease;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.NANOSECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The contract every {@link LockRegistry} keeps, as tests: guarantees G1-G3 and G6-G10 of the
 * design. Extend it once per backend and supply the registry under test, a peer registry on the
 * same backend and a way to count queued waiters; override the timing hooks for slow backends.
 *
 * <p>A test never uses {@link #registry()} and {@link #peerRegistry()} for the same key on one
 * thread while that thread holds the key: for the in-memory registry they are the same instance
 * (the acquisition would reenter), for a distributed one they stand for two processes (it would
 * block). Each test uses its own key, and every thread it starts ends or is interrupted and
 * joined, with a bound, when the test ends.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
public abstract class AbstractLockRegistryContractTests {

    private static final int CONTENDERS = 8;

    private static final int FIFO_WAITERS = 5;

    private final List<Thread> forkedThreads = new CopyOnWriteArrayList<>();

    private String key;

    /**
     * The registry under test. The subclass creates and closes it (per test or per class).
     * @return the registry under test
     */
    protected abstract LockRegistry registry();

    /**
     * A registry on the same backend as {@link #registry()} that stands for another process: the
     * same instance for an in-memory registry, one with its own client and session otherwise.
     * @return the peer registry
     */
    protected abstract LockRegistry peerRegistry();

    /**
     * Counts the acquisitions of {@code key} that have started waiting behind its holder and have
     * neither acquired nor given up, in {@link #registry()} and {@link #peerRegistry()} together.
     * It must count every waiting thread, including one that waits inside its registry before it
     * reaches the backend. Tests poll it to order waiters instead of sleeping.
     * @param key the lock key
     * @return how many acquisitions are queued
     */
    protected abstract int waitersQueued(String key);

    /**
     * Asserts that the backend keeps nothing for {@code key}. Called once every thread of a test
     * that gave up waiting (timed out or interrupted) has returned and the key is free. Does
     * nothing by default.
     * @param key the lock key
     */
    protected void assertNoTracesLeft(String key) {
    }

    /**
     * How long acquisitions that are meant to time out wait; {@link FencedLock#tryLock(long, TimeUnit)}
     * must not return earlier.
     * @return the timeout of acquisitions expected to time out
     */
    protected Duration shortWait() {
        return Duration.ofMillis(200);
    }

    /**
     * Upper bound for anything that must happen eventually (a waiter queueing, a thread ending).
     * Reached only when a test fails.
     * @return the bound for eventual outcomes
     */
    protected Duration longWait() {
        return Duration.ofSeconds(30);
    }

    /**
     * Upper bound for what must not wait: a try-once, the return of a wait after its timeout or
     * an interrupt, the handoff to the next waiter after unlock. Keep it well below the lease TTL
     * of a backend with leases, so that a waiter entry left behind, which would go away only with
     * its lease, fails the tests.
     * @return the bound for prompt outcomes
     */
    protected Duration responseTime() {
        return Duration.ofSeconds(2);
    }

    /**
     * How many times each of the contending threads acquires the lock in the mutual exclusion
     * tests.
     * @return acquisitions per contending thread
     */
    protected int contentionIterations() {
        return 250;
    }

    @BeforeEach
    void chooseKey(TestInfo testInfo) {
        String test = testInfo.getTestMethod().map((method) -> method.getName()).orElse("test");
        this.key = test + "-" + UUID.randomUUID();
    }

    // Threads still running here belong to a failed test; those that ignore the interrupt are
    // daemons stuck on their own key, so the wait for them is bounded rather than complete.
    @AfterEach
    void stopForkedThreads() throws InterruptedException {
        this.forkedThreads.forEach(Thread::interrupt);
        long deadline = System.nanoTime() + responseTime().toNanos();
        for (Thread thread : this.forkedThreads) {
            thread.join(Math.max(1, NANOSECONDS.toMillis(deadline - System.nanoTime())));
        }
    }

    // G1 mutual exclusion

    @ParameterizedTest
    @EnumSource(Fairness.class)
    void contendersNeverHoldTheLockTogether(Fairness fairness) throws Exception {
        int iterations = contentionIterations();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger fenceRegressions = new AtomicInteger();
        // Plain slots, read and written only under the lock: lost updates reveal overlapping holds.
        long[] guarded = { 0, Long.MIN_VALUE };
        CountDownLatch start = new CountDownLatch(1);
        List<Forked<Void>> contenders = new ArrayList<>();
        for (int i = 0; i < CONTENDERS; i++) {
            LockRegistry registry = (i % 2 == 0) ? registry() : peerRegistry();
            boolean fair = fairness.isFair(i);
            contenders.add(fork(() -> {
                assertThat(start.await(longWait().toMillis(), MILLISECONDS)).isTrue();
                for (int n = 0; n < iterations; n++) {
                    FencedLock lock = registry.obtain(this.key, fair);
                    acquire(lock, n);
                    try {
                        if (inside.incrementAndGet() > 1) {
                            overlaps.incrementAndGet();
                        }
                        long count = guarded[0];
                        Thread.yield();
                        guarded[0] = count + 1;
                        long fence = lock.getFence();
                        if (fence <= guarded[1]) {
                            fenceRegressions.incrementAndGet();
                        }
                        guarded[1] = fence;
                        inside.decrementAndGet();
                    }
                    finally {
                        lock.unlock();
                    }
                }
                return null;
            }));
        }
        start.countDown();
        awaitAll(contenders, longWait().multipliedBy(2));
        assertThat(overlaps).as("acquisitions that overlapped another hold").hasValue(0);
        assertThat(guarded[0]).as("increments under the lock").isEqualTo((long) CONTENDERS * iterations);
        assertThat(fenceRegressions).as("fences not greater than the previous holder's").hasValue(0);
        assertKeyIsClean();
    }

    @ParameterizedTest(name = "holder fair: {0}")
    @ValueSource(booleans = { true, false })
    void fairAndUnfairLocksOfOneKeyExcludeEachOther(boolean holderFair) throws Exception {
        FencedLock holder = registry().obtain(this.key, holderFair);
        holder.lock();
        try {
            for (LockRegistry registry : List.of(registry(), peerRegistry())) {
                assertThat(acquirableElsewhere(registry, this.key, true)).as("fair lock").isFalse();
                assertThat(acquirableElsewhere(registry, this.key, false)).as("unfair lock").isFalse();
            }
        }
        finally {
            holder.unlock();
        }
        assertThat(acquirableElsewhere(peerRegistry(), this.key, !holderFair)).isTrue();
    }

    // G2 fairness

    @Test
    void fairWaitersAreServedInTheOrderTheyStartedWaiting() throws Exception {
        FencedLock holder = registry().obtain(this.key);
        holder.lock();
        ConcurrentLinkedQueue<Integer> served = new ConcurrentLinkedQueue<>();
        List<Forked<Void>> waiters = new ArrayList<>();
        try {
            for (int i = 1; i <= FIFO_WAITERS; i++) {
                LockRegistry registry = (i % 2 == 1) ? registry() : peerRegistry();
                int waiter = i;
                waiters.add(fork(() -> {
                    FencedLock lock = registry.obtain(this.key, true);
                    lock.lock();
                    try {
                        served.add(waiter);
                    }
                    finally {
                        lock.unlock();
                    }
                    return null;
                }));
                awaitQueued(i);
            }
        }
        finally {
            holder.unlock();
        }
        awaitAll(waiters, longWait());
        assertThat(served).containsExactly(1, 2, 3, 4, 5);
        assertKeyIsClean();
    }

    // G3 fencing

    @Test
    void fencesIncreaseStrictlyAcrossAcquisitions() {
        long previous = Long.MIN_VALUE;
        for (int i = 0; i < 12; i++) {
            LockRegistry registry = (i % 2 == 0) ? registry() : peerRegistry();
            FencedLock lock = registry.obtain(this.key, (i / 2) % 2 == 0);
            lock.lock();
            try {
                long fence = lock.getFence();
                assertThat(fence).as("fence of acquisition %d (%s)", i, lock).isGreaterThan(previous);
                previous = fence;
            }
            finally {
                lock.unlock();
            }
        }
    }

    @Test
    void reentrantHoldsKeepTheFenceOfTheOutermostHold() throws Exception {
        FencedLock fair = registry().obtain(this.key, true);
        FencedLock unfair = registry().obtain(this.key, false);
        fair.lock();
        long fence = fair.getFence();
        unfair.lock();
        assertThat(unfair.tryLock(shortWait().toMillis(), MILLISECONDS)).isTrue();
        assertThat(fair.getFence()).isEqualTo(fence);
        assertThat(unfair.getFence()).isEqualTo(fence);
        unfair.unlock();
        unfair.unlock();
        assertThat(fair.getFence()).isEqualTo(fence);
        fair.unlock();
        unfair.lock();
        try {
            assertThat(unfair.getFence()).isGreaterThan(fence);
        }
        finally {
            unfair.unlock();
        }
    }

    // G6 reentrancy

    @ParameterizedTest(name = "fair: {0}")
    @ValueSource(booleans = { true, false })
    void reentersThroughTheSameLockObject(boolean fair) throws Exception {
        FencedLock lock = registry().obtain(this.key, fair);
        assertThat(lock.getHoldCount()).isZero();
        assertThat(lock.isLockedByCurrentThread()).isFalse();
        lock.lock();
        assertThat(lock.tryLock()).isTrue();
        assertThat(lock.tryLock(shortWait().toMillis(), MILLISECONDS)).isTrue();
        lock.lockInterruptibly();
        for (int holds = 4; holds > 0; holds--) {
            assertThat(lock.getHoldCount()).isEqualTo(holds);
            assertThat(lock.isLockedByCurrentThread()).isTrue();
            lock.unlock();
        }
        assertThat(lock.getHoldCount()).isZero();
        assertThat(lock.isLockedByCurrentThread()).isFalse();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(acquirableElsewhere(peerRegistry(), this.key, fair)).isTrue();
    }

    @Test
    void staysHeldUntilTheLastReentrantHoldIsReleased() throws Exception {
        FencedLock lock = registry().obtain(this.key);
        lock.lock();
        lock.lock();
        lock.unlock();
        assertThat(lock.isLockedByCurrentThread()).isTrue();
        assertThat(acquirableElsewhere(peerRegistry(), this.key, false)).isFalse();
        assertThat(acquirableElsewhere(registry(), this.key, true)).isFalse();
        lock.unlock();
        assertThat(acquirableElsewhere(peerRegistry(), this.key, false)).isTrue();
    }

    @Test
    void reentersThroughAnotherLockObjectForTheSameKey() throws Exception {
        FencedLock first = registry().obtain(this.key);
        first.lock();
        FencedLock second = registry().obtain(this.key);
        second.lock();
        assertThat(first.getHoldCount()).isEqualTo(2);
        assertThat(second.getHoldCount()).isEqualTo(2);
        first.unlock();
        assertThat(second.getHoldCount()).isEqualTo(1);
        assertThat(second.isLockedByCurrentThread()).isTrue();
        assertThat(acquirableElsewhere(peerRegistry(), this.key, false)).isFalse();
        first.unlock();
        assertThat(second.getHoldCount()).isZero();
        assertThatThrownBy(second::unlock).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(acquirableElsewhere(peerRegistry(), this.key, false)).isTrue();
    }

    @Test
    void fairAndUnfairLockObjectsShareTheHoldsOfTheirKey() throws Exception {
        FencedLock fair = registry().obtain(this.key, true);
        FencedLock unfair = registry().obtain(this.key, false);
        fair.lock();
        unfair.lock();
        assertThat(fair.tryLock(shortWait().toMillis(), MILLISECONDS)).isTrue();
        assertThat(fair.getHoldCount()).isEqualTo(3);
        assertThat(unfair.getHoldCount()).isEqualTo(3);
        unfair.unlock();
        fair.unlock();
        assertThat(fair.getHoldCount()).isEqualTo(1);
        assertThat(acquirableElsewhere(peerRegistry(), this.key, true)).isFalse();
        unfair.unlock();
        assertThat(fair.getHoldCount()).isZero();
        assertThat(unfair.isLockedByCurrentThread()).isFalse();
        assertThatThrownBy(fair::unlock).isInstanceOf(IllegalMonitorStateException.class);
        assertThatThrownBy(unfair::unlock).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(acquirableElsewhere(peerRegistry(), this.key, true)).isTrue();
    }

    // G7 ownership

    @ParameterizedTest(name = "fair: {0}")
    @ValueSource(booleans = { true, false })
    void onlyTheHolderCanUnlock(boolean fair) throws Exception {
        FencedLock lock = registry().obtain(this.key, fair);
        lock.lock();
        try {
            for (LockRegistry registry : List.of(registry(), peerRegistry())) {
                for (boolean otherFair : new boolean[] { true, false }) {
                    Throwable failure = fork(() -> {
                        FencedLock other = registry.obtain(this.key, otherFair);
                        assertThat(other.getHoldCount()).isZero();
                        assertThat(other.isLockedByCurrentThread()).isFalse();
                        other.unlock();
                        return null;
                    }).failure(longWait());
                    assertThat(failure).isInstanceOf(IllegalMonitorStateException.class)
                        .isNotInstanceOf(LockLostException.class);
                }
            }
            assertThat(lock.isLockedByCurrentThread()).isTrue();
            assertThat(lock.getHoldCount()).isEqualTo(1);
            assertThat(acquirableElsewhere(peerRegistry(), this.key, fair)).isFalse();
        }
        finally {
            lock.unlock();
        }
    }

    @Test
    void unlockWithoutAHoldThrows() {
        FencedLock lock = registry().obtain(this.key);
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
        lock.lock();
        lock.unlock();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void getFenceWithoutAHoldThrows() throws Exception {
        FencedLock lock = registry().obtain(this.key);
        assertThatThrownBy(lock::getFence).isInstanceOf(IllegalMonitorStateException.class);
        lock.lock();
        try {
            for (LockRegistry registry : List.of(registry(), peerRegistry())) {
                Throwable failure = fork(() -> registry.obtain(this.key).getFence()).failure(longWait());
                assertThat(failure).isInstanceOf(IllegalMonitorStateException.class);
            }
        }
        finally {
            lock.unlock();
        }
        assertThatThrownBy(lock::getFence).isInstanceOf(IllegalMonitorStateException.class);
    }

    // G8 clean give-up

    @ParameterizedTest(name = "fair: {0}")
    @ValueSource(booleans = { true, false })
    void waiterThatTimesOutLeavesNothingBehind(boolean fair) throws Exception {
        FencedLock holder = registry().obtain(this.key);
        holder.lock();
        Forked<Void> next;
        try {
            Forked<Boolean> timingOut = fork(
                    () -> peerRegistry().obtain(this.key, fair).tryLock(shortWait().toMillis(), MILLISECONDS));
            // Queue the next waiter behind the one timing out, unless that one has already given up.
            eventually().until(() -> waitersQueued(this.key) == 1 || timingOut.isDone());
            next = fork(() -> lockAndUnlock(registry().obtain(this.key, true)));
            assertThat(timingOut.result(longWait())).isFalse();
            awaitQueued(1);
        }
        finally {
            holder.unlock();
        }
        next.result(responseTime());
        assertKeyIsClean();
    }

    @ParameterizedTest(name = "fair: {0}")
    @ValueSource(booleans = { true, false })
    void waiterThatIsInterruptedLeavesNothingBehind(boolean fair) throws Exception {
        FencedLock holder = registry().obtain(this.key);
        holder.lock();
        Forked<Void> next;
        try {
            Forked<Void> interrupted = fork(() -> lockAndUnlockInterruptibly(peerRegistry().obtain(this.key, fair)));
            awaitQueued(1);
            next = fork(() -> lockAndUnlock(registry().obtain(this.key, true)));
            awaitQueued(2);
            interrupted.thread().interrupt();
            assertThat(interrupted.failure(responseTime())).isInstanceOf(InterruptedException.class);
            awaitQueued(1);
        }
        finally {
            holder.unlock();
        }
        next.result(responseTime());
        assertKeyIsClean();
    }

    // G9 key isolation

    @Test
    void distinctKeysNeverShareALock() throws Exception {
        String base = this.key;
        List<String> keys = List.of(base, base + "/b", base + "/", "/" + base, base + "%2F", base + "%2f",
                base + "\\", base + "%", base + "/00000000000000000001", base + "/owner",
                base + "/queue/00000000000000000001", base.toUpperCase(Locale.ROOT), base + "-ключ-🔒",
                "ключ-🔒-" + base, base + "x".repeat(1024 - base.length()),
                // Lone surrogates (a substring that cuts an emoji in half) and the '?' UTF-8 makes of them.
                base + "\uD83D", base + "\uDD12", base + "?", base + "\uDD12\uD83D", base + "%uD83D", base + "#");
        assertThat(keys).doesNotHaveDuplicates();
        for (String held : keys) {
            FencedLock lock = registry().obtain(held);
            lock.lock();
            try {
                List<String> acquirable = fork(() -> keys.stream()
                    .filter((other) -> tryAndRelease(peerRegistry().obtain(other)))
                    .toList()).result(longWait());
                List<String> others = keys.stream().filter((other) -> !other.equals(held)).toList();
                assertThat(acquirable).as("keys acquirable while '%s' is held", held)
                    .containsExactlyElementsOf(others);
            }
            finally {
                lock.unlock();
            }
        }
    }

    @Test
    void nullAndEmptyKeysAreRejected() {
        assertThatThrownBy(() -> registry().obtain(null)).isInstanceOf(IllegalArgumentException.class)
            .message().isNotBlank();
        assertThatThrownBy(() -> registry().obtain(null, true)).isInstanceOf(IllegalArgumentException.class)
            .message().isNotBlank();
        assertThatThrownBy(() -> registry().obtain("")).isInstanceOf(IllegalArgumentException.class)
            .message().isNotBlank();
        assertThatThrownBy(() -> registry().obtain("", false)).isInstanceOf(IllegalArgumentException.class)
            .message().isNotBlank();
    }

    @Test
    void locksReportTheirKeyAndFairness() {
        assertThat(registry().obtain(this.key).getKey()).isEqualTo(this.key);
        assertThat(registry().obtain(this.key).isFair()).isFalse();
        assertThat(registry().obtain(this.key, true).isFair()).isTrue();
        assertThat(registry().obtain(this.key, false).isFair()).isFalse();
        String unicode = this.key + "-ключ-🔒";
        assertThat(peerRegistry().obtain(unicode, true).getKey()).isEqualTo(unicode);
    }

    // G10 bounded waiting

    @ParameterizedTest(name = "fair: {0}")
    @ValueSource(booleans = { true, false })
    void tryingOnceOnALockHeldElsewhereFailsPromptly(boolean fair) throws Exception {
        FencedLock holder = registry().obtain(this.key);
        holder.lock();
        try {
            fork(() -> {
                FencedLock lock = peerRegistry().obtain(this.key, fair);
                assertFailsPromptly(lock::tryLock, "tryLock()");
                assertFailsPromptly(() -> lock.tryLock(0, SECONDS), "tryLock(0 s)");
                assertFailsPromptly(() -> lock.tryLock(-1, SECONDS), "tryLock(-1 s)");
                assertFailsPromptly(() -> lock.tryLock(Long.MIN_VALUE, NANOSECONDS), "tryLock(Long.MIN_VALUE ns)");
                return null;
            }).result(longWait());
        }
        finally {
            holder.unlock();
        }
        assertKeyIsClean();
    }

    @ParameterizedTest(name = "fair: {0}")
    @ValueSource(booleans = { true, false })
    void timedTryLockGivesUpAfterItsTimeout(boolean fair) throws Exception {
        FencedLock holder = registry().obtain(this.key);
        holder.lock();
        Duration waited;
        try {
            waited = fork(() -> {
                FencedLock lock = peerRegistry().obtain(this.key, fair);
                long start = System.nanoTime();
                boolean acquired = lock.tryLock(shortWait().toNanos(), NANOSECONDS);
                Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
                if (acquired) {
                    lock.unlock();
                }
                assertThat(acquired).as("acquired a lock held elsewhere").isFalse();
                return elapsed;
            }).result(longWait());
        }
        finally {
            holder.unlock();
        }
        assertThat(waited).isGreaterThanOrEqualTo(shortWait()).isLessThan(shortWait().plus(responseTime()));
        assertKeyIsClean();
    }

    @ParameterizedTest(name = "fair: {0}")
    @ValueSource(booleans = { true, false })
    void timedTryLockWithAHugeTimeoutWaitsForTheLock(boolean fair) throws Exception {
        FencedLock holder = registry().obtain(this.key);
        holder.lock();
        Forked<Boolean> waiter;
        try {
            waiter = fork(() -> {
                FencedLock lock = peerRegistry().obtain(this.key, fair);
                boolean acquired = lock.tryLock(Long.MAX_VALUE, TimeUnit.DAYS);
                if (acquired) {
                    lock.unlock();
                }
                return acquired;
            });
            awaitQueued(1);
        }
        finally {
            holder.unlock();
        }
        assertThat(waiter.result(responseTime())).isTrue();
        assertKeyIsClean();
    }

    @ParameterizedTest(name = "fair: {0}")
    @ValueSource(booleans = { true, false })
    void pendingInterruptFailsTimedAndInterruptibleAcquisitions(boolean fair) throws Exception {
        Callable<Void> interruptedAttempts = () -> {
            FencedLock lock = peerRegistry().obtain(this.key, fair);
            Thread.currentThread().interrupt();
            assertThatThrownBy(() -> lock.tryLock(longWait().toMillis(), MILLISECONDS))
                .isInstanceOf(InterruptedException.class);
            assertThat(Thread.currentThread().isInterrupted()).as("interrupt status after the exception").isFalse();
            Thread.currentThread().interrupt();
            assertThatThrownBy(lock::lockInterruptibly).isInstanceOf(InterruptedException.class);
            assertThat(Thread.currentThread().isInterrupted()).as("interrupt status after the exception").isFalse();
            assertThat(lock.getHoldCount()).isZero();
            return null;
        };
        fork(interruptedAttempts).result(longWait());
        FencedLock holder = registry().obtain(this.key);
        holder.lock();
        try {
            fork(interruptedAttempts).result(longWait());
        }
        finally {
            holder.unlock();
        }
        assertKeyIsClean();
    }

    @ParameterizedTest(name = "fair: {0}")
    @ValueSource(booleans = { true, false })
    void interruptEndsAWaitingTimedTryLock(boolean fair) throws Exception {
        FencedLock holder = registry().obtain(this.key);
        holder.lock();
        try {
            Forked<Boolean> waiter = fork(
                    () -> peerRegistry().obtain(this.key, fair).tryLock(longWait().toMillis(), MILLISECONDS));
            awaitQueued(1);
            waiter.thread().interrupt();
            assertThat(waiter.failure(responseTime())).isInstanceOf(InterruptedException.class);
        }
        finally {
            holder.unlock();
        }
        assertKeyIsClean();
    }

    @ParameterizedTest(name = "fair: {0}")
    @ValueSource(booleans = { true, false })
    void lockIgnoresInterruptsAndKeepsTheInterruptStatus(boolean fair) throws Exception {
        Callable<Boolean> lockAndReportInterruptStatus = () -> {
            FencedLock lock = peerRegistry().obtain(this.key, fair);
            lock.lock();
            try {
                return Thread.currentThread().isInterrupted();
            }
            finally {
                lock.unlock();
            }
        };
        assertThat(fork(() -> {
            Thread.currentThread().interrupt();
            return lockAndReportInterruptStatus.call();
        }).result(longWait())).as("interrupt status after locking a free lock").isTrue();

        FencedLock holder = registry().obtain(this.key);
        holder.lock();
        Forked<Boolean> waiter;
        try {
            waiter = fork(lockAndReportInterruptStatus);
            awaitQueued(1);
            waiter.thread().interrupt();
            eventually().during(shortWait())
                .failFast("lock() returned after an interrupt", waiter::isDone)
                .until(() -> waitersQueued(this.key) == 1);
        }
        finally {
            holder.unlock();
        }
        assertThat(waiter.result(responseTime())).as("interrupt status after waiting").isTrue();
        assertKeyIsClean();
    }

    @Test
    void isLockedReportsHoldsOfEveryRegistry() throws Exception {
        FencedLock seenFromPeer = peerRegistry().obtain(this.key);
        assertThat(seenFromPeer.isLocked()).isFalse();
        FencedLock lock = registry().obtain(this.key, true);
        lock.lock();
        try {
            assertThat(lock.isLocked()).isTrue();
            assertThat(seenFromPeer.isLocked()).isTrue();
            assertThat(fork(() -> peerRegistry().obtain(this.key, true).isLocked()).result(longWait())).isTrue();
        }
        finally {
            lock.unlock();
        }
        eventually().until(() -> !seenFromPeer.isLocked());
    }

    @Test
    void conditionsAreNotSupported() {
        assertThatThrownBy(() -> registry().obtain(this.key).newCondition())
            .isInstanceOf(UnsupportedOperationException.class)
            .message().isNotBlank();
    }

    private void acquire(FencedLock lock, int iteration) throws InterruptedException {
        switch (iteration % 3) {
            case 0 -> lock.lock();
            case 1 -> lock.lockInterruptibly();
            default -> assertThat(lock.tryLock(longWait().toMillis(), MILLISECONDS))
                .as("acquired %s within %s", lock, longWait())
                .isTrue();
        }
    }

    private void assertFailsPromptly(Callable<Boolean> attempt, String description) throws Exception {
        long start = System.nanoTime();
        boolean acquired = attempt.call();
        Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
        assertThat(acquired).as("%s acquired a lock held elsewhere", description).isFalse();
        assertThat(elapsed).as("time %s took", description).isLessThan(responseTime());
    }

    // Several keys (obtainAll)

    @Test
    void severalKeysAreTakenAllOrNoneInOneOrder() throws Exception {
        String a = this.key + "-a";
        String b = this.key + "-b";
        String c = this.key + "-c";
        FencedMultiLock all = registry().obtainAll(List.of(c, a, b, a), false);
        assertThat(all.getKeys()).as("duplicates collapsed, sorted").containsExactly(a, b, c);
        FencedLock heldElsewhere = peerRegistry().obtain(b);
        heldElsewhere.lock();
        try {
            assertThat(fork(all::tryLock).result(longWait())).as("a try-once while b is held").isFalse();
            assertThat(fork(() -> all.tryLock(shortWait().toMillis(), MILLISECONDS)).result(longWait()))
                .as("a timed try while b is held").isFalse();
            assertThat(acquirableElsewhere(peerRegistry(), a, false)).as("a, released by the attempts").isTrue();
        }
        finally {
            heldElsewhere.unlock();
        }
        assertThat(all.tryLock(longWait().toMillis(), MILLISECONDS)).isTrue();
        Map<String, Long> fences;
        try {
            assertThat(all.isLockedByCurrentThread()).isTrue();
            fences = all.getFences();
            assertThat(fences).containsOnlyKeys(a, b, c);
            for (String key : List.of(a, b, c)) {
                assertThat(acquirableElsewhere(peerRegistry(), key, true)).as("%s while all are held", key).isFalse();
            }
        }
        finally {
            all.unlock();
        }
        assertThat(all.isLockedByCurrentThread()).isFalse();
        assertThatThrownBy(all::unlock).isInstanceOf(IllegalMonitorStateException.class);
        FencedMultiLock again = peerRegistry().obtainAll(List.of(a, b, c), true);
        again.lock();
        try {
            again.getFences().forEach((key, fence) -> assertThat(fence).as("the next fence of %s", key)
                .isGreaterThan(fences.get(key)));
        }
        finally {
            again.unlock();
        }
    }

    /**
     * Callers that ask for the same keys in opposite orders, from both registries: without one
     * order of taking them, two would each hold one key and wait for the other forever.
     */
    @Test
    void callersAskingForTheSameKeysInOppositeOrdersNeverDeadlockNorOverlap() throws Exception {
        List<String> forward = List.of(this.key + "-x", this.key + "-y", this.key + "-z");
        List<String> backward = List.of(this.key + "-z", this.key + "-y", this.key + "-x");
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        int rounds = Math.max(10, contentionIterations() / 10);
        List<Forked<Void>> callers = new ArrayList<>();
        for (int caller = 0; caller < 4; caller++) {
            LockRegistry registry = (caller % 2 == 0) ? registry() : peerRegistry();
            FencedMultiLock lock = registry.obtainAll((caller < 2) ? forward : backward, caller % 3 == 0);
            callers.add(fork(() -> {
                for (int round = 0; round < rounds; round++) {
                    assertThat(lock.tryLock(longWait().toMillis(), MILLISECONDS)).as("round %d", round).isTrue();
                    try {
                        if (inside.incrementAndGet() != 1) {
                            overlaps.incrementAndGet();
                        }
                        inside.decrementAndGet();
                        done.incrementAndGet();
                    }
                    finally {
                        lock.unlock();
                    }
                }
                return null;
            }));
        }
        awaitAll(callers, longWait().multipliedBy(4));
        assertThat(overlaps.get()).as("callers inside together").isZero();
        assertThat(done.get()).isEqualTo(4 * rounds);
    }

    @Test
    void aLockOverSeveralKeysReleasesNothingUnlessTheThreadHoldsEveryKey() throws Exception {
        String a = this.key + "-a";
        FencedLock alone = registry().obtain(a);
        alone.lock();
        try {
            FencedMultiLock both = registry().obtainAll(List.of(a, this.key + "-b"), false);
            assertThatThrownBy(both::unlock).isInstanceOf(IllegalMonitorStateException.class)
                .hasMessageContaining(this.key + "-b");
            assertThat(alone.isLockedByCurrentThread()).as("the thread's own hold of a").isTrue();
            assertThat(alone.getHoldCount()).isEqualTo(1);
        }
        finally {
            alone.unlock();
        }
    }

    @Test
    void aLockOverSeveralKeysRejectsBadKeysBeforeTalkingToTheStore() {
        assertThatThrownBy(() -> registry().obtainAll(List.of(), false)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("at least one key");
        assertThatThrownBy(() -> registry().obtainAll(List.of(this.key, ""), false))
            .isInstanceOf(IllegalArgumentException.class);
        List<String> tooMany = new ArrayList<>();
        for (int i = 0; i <= FencedMultiLock.MAX_KEYS; i++) {
            tooMany.add(this.key + "-" + i);
        }
        assertThatThrownBy(() -> registry().obtainAll(tooMany, false)).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("at most " + FencedMultiLock.MAX_KEYS + " keys");
    }

    private boolean acquirableElsewhere(LockRegistry registry, String key, boolean fair) throws Exception {
        return fork(() -> tryAndRelease(registry.obtain(key, fair))).result(longWait());
    }

    private static Void lockAndUnlock(FencedLock lock) {
        lock.lock();
        lock.unlock();
        return null;
    }

    private static Void lockAndUnlockInterruptibly(FencedLock lock) throws InterruptedException {
        lock.lockInterruptibly();
        lock.unlock();
        return null;
    }

    private void awaitQueued(int count) {
        eventually().untilAsserted(() -> assertThat(waitersQueued(this.key)).as("waiters queued for %s", this.key)
                .isEqualTo(count));
    }

    private void assertKeyIsClean() {
        awaitQueued(0);
        eventually().until(() -> !peerRegistry().obtain(this.key).isLocked());
        assertNoTracesLeft(this.key);
    }

    private ConditionFactory eventually() {
        return await().atMost(longWait()).pollInterval(Duration.ofMillis(10));
    }

    private static void awaitAll(List<? extends Forked<?>> tasks, Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        for (Forked<?> task : tasks) {
            task.result(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        }
    }

    private <T> Forked<T> fork(Callable<T> task) {
        FutureTask<T> future = new FutureTask<>(task);
        Thread thread = new Thread(future, "contract-" + this.forkedThreads.size() + "-" + this.key);
        thread.setDaemon(true);
        this.forkedThreads.add(thread);
        thread.start();
        return new Forked<>(thread, future);
    }

    /** Which contenders use fair locks. */
    enum Fairness {

        FAIR, UNFAIR, MIXED;

        boolean isFair(int contender) {
            return switch (this) {
                case FAIR -> true;
                case UNFAIR -> false;
                // Pairs alternate, so each registry gets fair and unfair contenders.
                case MIXED -> (contender / 2) % 2 == 0;
            };
        }
    }

    /** A task running on its own thread, so tests can interrupt that thread and bound the wait for it. */
    private record Forked<T>(Thread thread, FutureTask<T> future) {

        boolean isDone() {
            return this.future.isDone();
        }

        T result(Duration within) throws Exception {
            try {
                return this.future.get(within.toNanos(), NANOSECONDS);
            }
            catch (ExecutionException ex) {
                throw new AssertionError(this.thread.getName() + " failed", ex.getCause());
            }
            catch (TimeoutException ex) {
                throw new AssertionError(this.thread.getName() + " did not finish within " + within, ex);
            }
        }

        Throwable failure(Duration within) throws Exception {
            try {
                T result = this.future.get(within.toNanos(), NANOSECONDS);
                throw new AssertionError(this.thread.getName() + " was expected to fail but returned " + result);
            }
            catch (ExecutionException ex) {
                return ex.getCause();
            }
            catch (TimeoutException ex) {
                throw new AssertionError(this.thread.getName() + " did not finish within " + within, ex);
            }
        }
    }
}
