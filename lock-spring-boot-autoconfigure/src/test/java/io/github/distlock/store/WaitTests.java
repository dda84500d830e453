package io.github.distlock.store;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/** {@link Wait}: deadlines, bounded steps and the one place that decides what an interrupt means. */
class WaitTests {

    private static final Duration LONG = Duration.ofSeconds(30);

    @AfterEach
    void clearInterrupt() {
        Thread.interrupted();
    }

    @Test
    void untimedWaitsNeverEnd() {
        Wait wait = Wait.untimed(true);
        assertThat(wait.isTimed()).isFalse();
        assertThat(wait.isOver()).isFalse();
        assertThat(wait.remainingNanos()).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void aZeroOrNegativeTimeoutIsOverAtOnce() {
        assertThat(Wait.timeout(0, true).isOver()).isTrue();
        assertThat(Wait.timeout(-5, false).isOver()).isTrue();
        assertThat(Wait.timeout(Long.MIN_VALUE, false).remainingNanos()).isLessThanOrEqualTo(0);
        assertThat(Wait.timeout(LONG.toNanos(), true).isOver()).isFalse();
    }

    @Test
    void aStepEndsAtTheEarlierOfItsBoundAndTheWaitsDeadline() {
        Wait wait = Wait.timeout(LONG.toNanos(), false);
        Wait shortStep = wait.atMost(TimeUnit.MILLISECONDS.toNanos(10));
        assertThat(shortStep.isTimed()).isTrue();
        assertThat(shortStep.remainingNanos()).isLessThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(10));
        assertThat(shortStep.isInterruptible()).isFalse();
        Wait longStep = wait.atMost(Duration.ofDays(1).toNanos());
        assertThat(longStep.deadlineNanos()).isEqualTo(wait.deadlineNanos());
        Wait fromUntimed = Wait.untimed(true).atMost(TimeUnit.SECONDS.toNanos(1));
        assertThat(fromUntimed.isTimed()).isTrue();
        assertThat(fromUntimed.isInterruptible()).isTrue();
        assertThat(fromUntimed.remainingNanos()).isBetween(1L, TimeUnit.SECONDS.toNanos(1));
    }

    @Test
    void aStepBoundNearLongMaxValueNeitherOverflowsNorOutlivesTheWait() {
        Wait over = Wait.timeout(0, true);
        assertThat(over.atMost(Long.MAX_VALUE).isOver()).as("an ended wait stays ended").isTrue();
        Wait shortWait = Wait.timeout(TimeUnit.MILLISECONDS.toNanos(50), true);
        assertThat(shortWait.atMost(Long.MAX_VALUE).deadlineNanos()).isEqualTo(shortWait.deadlineNanos());
        Wait untimed = Wait.untimed(false).atMost(Long.MAX_VALUE);
        assertThat(untimed.isOver()).isFalse();
        assertThat(untimed.remainingNanos()).isPositive();
        Wait far = Wait.timeout(Long.MAX_VALUE, true);
        assertThat(far.isOver()).isFalse();
        assertThat(far.atMost(TimeUnit.SECONDS.toNanos(1)).remainingNanos()).isBetween(1L, TimeUnit.SECONDS.toNanos(1));
    }

    @Test
    void anInterruptibleWaitThrowsOnInterrupt() {
        Thread.currentThread().interrupt();
        assertThatExceptionOfType(InterruptedException.class)
            .isThrownBy(() -> Wait.timeout(LONG.toNanos(), true).pause(LONG.toNanos()));
    }

    @Test
    void anUninterruptibleWaitRetriesTheStepWithWhatIsLeftAndRestoresTheInterrupt() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        Wait wait = Wait.timeout(LONG.toNanos(), false);
        String result = wait.block(remaining -> {
            assertThat(remaining).isPositive().isLessThanOrEqualTo(LONG.toNanos());
            if (runs.incrementAndGet() == 1) {
                throw new InterruptedException("first run");
            }
            return "done";
        });
        assertThat(result).isEqualTo("done");
        assertThat(runs).hasValue(2);
        assertThat(Thread.interrupted()).as("interrupt restored").isTrue();
    }

    @Test
    void anUninterruptiblePauseLastsThroughAnInterrupt() throws Exception {
        long pause = TimeUnit.MILLISECONDS.toNanos(300);
        Thread.currentThread().interrupt();
        long start = System.nanoTime();
        Wait.untimed(false).pause(pause);
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(pause);
        assertThat(Thread.interrupted()).as("interrupt restored").isTrue();
    }

    @Test
    void aPauseNeverOutlastsTheDeadline() throws Exception {
        long start = System.nanoTime();
        Wait.timeout(TimeUnit.MILLISECONDS.toNanos(50), true).pause(LONG.toNanos());
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(LONG);
    }

    @Test
    void aTimedLockBargesIntoAFreeLockEvenWhenOverAndGivesUpOnABusyOne() throws Exception {
        ReentrantLock lock = new ReentrantLock();
        assertThat(Wait.timeout(0, false).lock(lock)).isTrue();
        lock.unlock();
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            lock.lock();
            held.countDown();
            try {
                done.await();
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            finally {
                lock.unlock();
            }
        });
        holder.start();
        try {
            assertThat(held.await(LONG.toSeconds(), TimeUnit.SECONDS)).isTrue();
            // An uninterruptible try-once with a pending interrupt neither throws nor waits.
            Thread.currentThread().interrupt();
            assertThat(Wait.timeout(0, false).lock(lock)).isFalse();
            assertThat(Thread.interrupted()).isTrue();
            assertThat(Wait.timeout(TimeUnit.MILLISECONDS.toNanos(50), true).lock(lock)).isFalse();
        }
        finally {
            done.countDown();
            holder.join(LONG.toMillis());
        }
        await().atMost(LONG).until(() -> !lock.isLocked());
        assertThat(Wait.untimed(true).lock(lock)).isTrue();
        lock.unlock();
    }
}
